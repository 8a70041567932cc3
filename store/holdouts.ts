import type { Db } from 'mongodb';
import { sha256 } from '../runtime/crypto.js';
import { collections } from './collections.js';
import { isDuplicateKey } from './mongo.js';

interface HoldoutDoc {
  _id: string; // `${accountId}:${hash of the customer (email, else token)}`
  control: boolean;
  createdAt: Date;
}

const idOf = (accountId: string, customer: string) => `${accountId}:${sha256(customer)}`;

/** Proof Mode assignments: drawn once per customer, then sticky (the first insert wins). */
export function createHoldoutStore(db: Db) {
  const assignments = db.collection<HoldoutDoc>(collections.holdouts);
  return {
    /** The customer's group (`customer`: the email, else the token), drawn on first sight. */
    async assign(accountId: string, customer: string, draw: () => boolean, now: Date): Promise<boolean> {
      const _id = idOf(accountId, customer);
      const existing = await assignments.findOne({ _id });
      if (existing) return existing.control;
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
  };
}
