import type { Db } from 'mongodb';
import { collections } from './collections.js';
import { isDuplicateKey } from './mongo.js';

interface HoldoutDoc {
  _id: string; // `${accountId}:${customerKey}`
  control: boolean;
  createdAt: Date;
}

/** Proof Mode assignments: drawn once per customer, then sticky (the first insert wins). */
export function createHoldoutStore(db: Db) {
  const assignments = db.collection<HoldoutDoc>(collections.holdouts);
  return {
    async assign(accountId: string, customerKey: string, draw: () => boolean, now: Date): Promise<boolean> {
      const _id = `${accountId}:${customerKey}`;
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
  };
}
