import type { Db } from 'mongodb';
import { sha256 } from '../runtime/crypto.js';
import { collections } from './collections.js';
import { sequence, type SequenceDoc } from './sequence.js';

interface NoticeDoc extends SequenceDoc {
  // _id `${accountId}:${hash of email}:${n}`: the customer's n-th notice
  /** null once the customer was erased (and `at` the epoch: a later failure may be offered again). */
  eventId: string | null;
  at: Date;
}

const prefixOf = (accountId: string, email: string) => `${accountId}:${sha256(email.toLowerCase())}`;

/** Proactive-retention offers already made, so a customer gets at most one per window. */
export function createRetentionNoticeStore(db: Db) {
  const notices = sequence(db.collection<NoticeDoc>(collections.retentionNotices), { remember: true });

  return {
    /**
     * Claims the customer's notice for `windowMs`: true when this `eventId` holds it (a retry of the same
     * event still holds it), false when another event did within the window. Notices are numbered claims
     * (see `sequence`): a new one is inserted only after the latest was seen expired, and only once.
     */
    async claim(accountId: string, email: string, eventId: string, now: Date, windowMs: number) {
      const prefix = prefixOf(accountId, email);
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

    /** Erasure: the customer's notices no longer name their events or times; returns how many changed. */
    forget: (accountId: string, email: string) =>
      notices.updateAll(prefixOf(accountId, email), { eventId: null, at: new Date(0) }),
  };
}

export type RetentionNoticeStore = ReturnType<typeof createRetentionNoticeStore>;
