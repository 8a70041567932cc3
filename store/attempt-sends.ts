import type { Db } from 'mongodb';
import { collections } from './collections.js';
import { isDuplicateKey } from './mongo.js';

interface SentDoc {
  _id: string; // the attempt key, `${workflowId}/${attemptNo}`
  accountId: string;
  at: Date;
  /** Given up before it was sent (a stop came first): nothing may be sent under its key. */
  abandoned?: true;
  /** The gateway's id of the attempt's payment, found pending by a lookup: later lookups read it by this id. */
  paymentId?: string;
}

/** An attempt given up before it was sent: a worker still holding it (its task lost) must not send it. */
export class AttemptAbandonedError extends Error {}

/**
 * When each attempt was first sent to its gateway, recorded before its first try. A worker that replays the
 * workflow of one that died mid-charge sends the attempt again with its own, later clock; this record says
 * when the attempt really went out, for every payment method (cards, wallets, mandates) alike. A unique
 * insert by `_id`, read back when it is there already: exact on FerretDB, whose conditional updates are not
 * atomic.
 */
export function createAttemptSendStore(db: Db) {
  const sends = db.collection<SentDoc>(collections.attemptSends);

  /** Inserts `doc` unless the attempt has a record already; returns that record, or null when inserted. */
  async function claim(doc: SentDoc): Promise<SentDoc | null> {
    for (;;) {
      try {
        await sends.insertOne(doc);
        return null;
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
        const earlier = await sends.findOne({ _id: doc._id });
        if (earlier) return earlier;
        // Deleted between the refused insert and the read: nothing records the attempt, so record it now.
      }
    }
  }

  return {
    /**
     * Records that the attempt is sent at `now`, unless an earlier try was; returns when it first was.
     * Throws AttemptAbandonedError when the attempt was given up before (`abandon`): it is not sent.
     */
    async firstSent(accountId: string, attemptKey: string, now: Date): Promise<Date> {
      const earlier = await claim({ _id: attemptKey, accountId, at: now });
      if (earlier?.abandoned) throw new AttemptAbandonedError(`Attempt ${attemptKey} was given up; not sent`);
      return earlier?.at ?? now;
    },

    /**
     * Gives the attempt up unless it was sent (or is being sent: its record is made before it goes out):
     * true when given up, and then nothing is ever sent under its key; false when it was sent, and must be
     * settled. One unique insert, so a slow worker still sending it and the one giving it up agree.
     */
    async abandon(accountId: string, attemptKey: string, now: Date): Promise<boolean> {
      const earlier = await claim({ _id: attemptKey, accountId, at: now, abandoned: true });
      return earlier === null || earlier.abandoned === true;
    },

    /** Whether the attempt was ever sent (its record is there, and does not say it was given up). */
    async wasSent(attemptKey: string): Promise<boolean> {
      return (await sends.countDocuments({ _id: attemptKey, abandoned: { $ne: true } }, { limit: 1 })) > 0;
    },

    /**
     * Keeps the gateway's id of the attempt's payment, which a lookup found but could not settle yet (pending),
     * on the attempt's record (made before it was first sent): one write, and the first id kept stays.
     */
    async notePaymentId(accountId: string, attemptKey: string, paymentId: string): Promise<void> {
      // Read and written by `_id` alone (FerretDB scans for any other filter); an attempt's lookups run one
      // after another, so nothing else writes the id meanwhile.
      const sent = await sends.findOne({ _id: attemptKey });
      if (sent?.accountId === accountId && sent.paymentId === undefined)
        await sends.updateOne({ _id: attemptKey }, { $set: { paymentId } });
    },

    /** The gateway's id of the attempt's payment a lookup found pending (`notePaymentId`), or null. */
    async paymentIdOf(accountId: string, attemptKey: string): Promise<string | null> {
      const sent = await sends.findOne({ _id: attemptKey }, { projection: { accountId: 1, paymentId: 1 } });
      return sent?.accountId === accountId ? (sent.paymentId ?? null) : null;
    },

    /**
     * Deletes the records of attempts first sent before `cutoff`, in every account (data retention). Kept
     * longer than any recovery runs, so no attempt of a recovery still running loses its record.
     */
    async purgeBefore(cutoff: Date): Promise<number> {
      return (await sends.deleteMany({ at: { $lt: cutoff } })).deletedCount;
    },
  };
}
