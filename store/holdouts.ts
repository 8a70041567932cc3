import type { Db } from 'mongodb';
import { sha256 } from '../runtime/crypto.js';
import { idsOfAccount } from './account-data.js';
import { collections } from './collections.js';
import { isDuplicateKey } from './mongo.js';

interface HoldoutDoc {
  _id: string; // `${accountId}:${hash of the customer (email, else token)}`
  control: boolean;
  createdAt: Date;
  /** When a recovery of the customer last read the group (to the day); absent until one did after it was drawn. */
  seenAt?: Date;
}

const idOf = (accountId: string, customer: string) => `${accountId}:${sha256(customer)}`;

/** How stale `seenAt` may grow before a read of the group writes it again (one write a day at most). */
const seenEveryMs = 86_400_000;

/** Proof Mode assignments: drawn once per customer, then sticky (the first insert wins). */
export function createHoldoutStore(db: Db) {
  const assignments = db.collection<HoldoutDoc>(collections.holdouts);
  return {
    /** The customer's group (`customer`: the email, else the token), drawn on first sight. */
    async assign(accountId: string, customer: string, draw: () => boolean, now: Date): Promise<boolean> {
      const _id = idOf(accountId, customer);
      const existing = await assignments.findOne({ _id });
      if (existing) {
        if (now.getTime() - (existing.seenAt ?? existing.createdAt).getTime() >= seenEveryMs)
          await assignments.updateOne({ _id }, { $set: { seenAt: now } });
        return existing.control;
      }
      const control = draw();
      try {
        await assignments.insertOne({ _id, control, createdAt: now });
        return control;
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
        return (await assignments.findOne({ _id }))?.control ?? control;
      }
    },

    /** Forgets these customers' assignments (erasure): a later recovery of theirs is drawn afresh. */
    async forget(accountId: string, customers: string[]): Promise<void> {
      await assignments.deleteMany({ _id: { $in: customers.map((c) => idOf(accountId, c)) } });
    },

    /**
     * Forgets the account's assignments of customers no recovery has read since before `cutoff` (data
     * retention): their records from then are gone, and a later recovery of theirs is drawn afresh. A
     * customer seen since keeps their group. Returns how many were forgotten.
     */
    async forgetUnseenSince(accountId: string, cutoff: Date): Promise<number> {
      const result = await assignments.deleteMany({
        _id: { $regex: idsOfAccount(accountId) },
        $or: [{ seenAt: { $lt: cutoff } }, { seenAt: { $exists: false }, createdAt: { $lt: cutoff } }],
      });
      return result.deletedCount;
    },
  };
}
