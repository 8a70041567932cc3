import type { Db } from 'mongodb';
import { collections } from './collections.js';
import { isDuplicateKey } from './mongo.js';

interface SentDoc {
  _id: string; // the attempt key, `${workflowId}/${attemptNo}`
  accountId: string;
  at: Date;
}

/**
 * When each attempt was first sent to its gateway, recorded before its first try. A worker that replays the
 * workflow of one that died mid-charge sends the attempt again with its own, later clock; this record says
 * when the attempt really went out, for every payment method (cards, wallets, mandates) alike. A unique
 * insert by `_id`, read back when it is there already: exact on FerretDB, whose conditional updates are not
 * atomic.
 */
export function createAttemptSendStore(db: Db) {
  const sends = db.collection<SentDoc>(collections.attemptSends);
  return {
    /** Records that the attempt is sent at `now`, unless an earlier try was; returns when it first was. */
    async firstSent(accountId: string, attemptKey: string, now: Date): Promise<Date> {
      for (;;) {
        try {
          await sends.insertOne({ _id: attemptKey, accountId, at: now });
          return now;
        } catch (error) {
          if (!isDuplicateKey(error)) throw error;
          const earlier = await sends.findOne({ _id: attemptKey });
          if (earlier) return earlier.at;
          // Deleted between the refused insert and the read: nothing records the attempt, so record it now.
        }
      }
    },

    /** Whether the attempt was ever sent (its record is there). */
    async wasSent(attemptKey: string): Promise<boolean> {
      return (await sends.countDocuments({ _id: attemptKey }, { limit: 1 })) > 0;
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
