import type { Db } from 'mongodb';
import { collections } from './collections.js';
import { isDuplicateKey } from './mongo.js';

interface NoticeDoc {
  _id: string; // `${accountId}:${customerKey}`
  eventId: string;
  at: Date;
}

/** Proactive-retention offers already made, so a customer gets at most one per window. */
export function createRetentionNoticeStore(db: Db) {
  const notices = db.collection<NoticeDoc>(collections.retentionNotices);

  return {
    /**
     * Claims the customer's notice for `windowMs`: true when this `eventId` holds it (a retry of the same
     * event still holds it), false when another event did within the window. An expired claim is replaced
     * by delete-then-insert so the unique id still decides races.
     */
    async claim(accountId: string, customerKey: string, eventId: string, now: Date, windowMs: number) {
      const _id = `${accountId}:${customerKey}`;
      for (let round = 0; round < 3; round += 1) {
        try {
          await notices.insertOne({ _id, eventId, at: now });
          return true;
        } catch (error) {
          if (!isDuplicateKey(error)) throw error;
          const held = await notices.findOne({ _id });
          if (!held) continue;
          if (held.eventId === eventId) return true;
          if (now.getTime() - held.at.getTime() < windowMs) return false;
          await notices.deleteOne({ _id, eventId: held.eventId });
        }
      }
      return (await notices.findOne({ _id }))?.eventId === eventId;
    },
  };
}

export type RetentionNoticeStore = ReturnType<typeof createRetentionNoticeStore>;
