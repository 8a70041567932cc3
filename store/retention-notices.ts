import type { Db } from 'mongodb';
import { sha256 } from '../runtime/crypto.js';
import { idsOfAccount } from './account-data.js';
import { collections } from './collections.js';
import { sequence, type SequenceDoc } from './sequence.js';

interface NoticeDoc extends SequenceDoc {
  // _id `${accountId}:${hash of email}:${n}`: the customer's n-th live notice; a sandbox notice has
  // `${accountId}:sandbox:` before the hash
  /** null once the customer was erased (and `at` the epoch: a later failure may be offered again). */
  eventId: string | null;
  at: Date;
}

/**
 * The customer's notices in one mode. Live ones keep the form notices had before modes were told apart, so
 * those count as live, as old records without a mode do elsewhere.
 */
const prefixOf = (accountId: string, email: string, simulated: boolean) =>
  `${accountId}${simulated ? ':sandbox' : ''}:${sha256(email.toLowerCase())}`;

/** The time of a forgotten notice: the epoch, so a later failure may be offered again. */
const forgotten = new Date(0);

/**
 * Proactive-retention offers already made, so a customer gets at most one per window in each mode: an offer
 * made while the account integrated in test mode holds back no live one.
 */
export function createRetentionNoticeStore(db: Db) {
  const collection = db.collection<NoticeDoc>(collections.retentionNotices);
  const notices = sequence(collection, { remember: true });

  return {
    /**
     * Claims the customer's notice for `windowMs`: true when this `eventId` holds it (a retry of the same
     * event still holds it), false when another event did within the window. Notices are numbered claims
     * (see `sequence`): a new one is inserted only after the latest was seen expired, and only once. Claims
     * the sandbox's notice when `simulated` (test mode), else the live one.
     */
    async claim(
      accountId: string,
      email: string,
      eventId: string,
      now: Date,
      windowMs: number,
      { simulated = false }: { simulated?: boolean } = {},
    ) {
      const prefix = prefixOf(accountId, email, simulated);
      let holds = false;
      await notices.claim(
        prefix,
        async (highest) => {
          const latest = highest > 0 ? await notices.get(prefix, highest) : null;
          holds = latest?.eventId === eventId;
          const open = !latest || now.getTime() - latest.at.getTime() >= windowMs;
          return !holds && open;
        },
        () => ({ eventId, at: now }),
      );
      return holds || (await notices.get(prefix, await notices.highest(prefix)))?.eventId === eventId;
    },

    /**
     * Erasure: the customer's notices, of both modes, no longer name their events or times; returns how
     * many changed.
     */
    async forget(accountId: string, email: string): Promise<number> {
      const changed = await Promise.all(
        [false, true].map((simulated) =>
          notices.updateAll(prefixOf(accountId, email, simulated), { eventId: null, at: forgotten }),
        ),
      );
      return changed.reduce((sum, n) => sum + n, 0);
    },

    /**
     * Data retention: the account's notices made before `cutoff` no longer name their events (deleted by
     * then) or times, as after an erasure; they stay, numbered, for the claims that follow. A notice that old
     * holds no window any more. Returns how many changed.
     */
    async forgetBefore(accountId: string, cutoff: Date): Promise<number> {
      const result = await collection.updateMany(
        { _id: { $regex: idsOfAccount(accountId) }, at: { $lt: cutoff, $gt: forgotten } },
        { $set: { eventId: null, at: forgotten } },
      );
      return result.modifiedCount;
    },
  };
}

export type RetentionNoticeStore = ReturnType<typeof createRetentionNoticeStore>;
