import type { Db } from 'mongodb';
import type { LocalParts } from '../domain/local-time.js';
import { emptyStats, tallyOutcome, type OutcomeStats } from '../domain/success-model.js';
import { collections } from './collections.js';
import { isDuplicateKey } from './mongo.js';

interface AttemptLogDoc {
  _id: string; // gateway idempotency key of the attempt: logged once
  accountId: string;
  fromCode: string;
  approved: boolean;
  gateway: string;
  local: LocalParts;
  at: Date;
}

const window = 180 * 24 * 3_600_000;
const maxRows = 20_000;

/**
 * The engine's memory: one insert-only row per attempt outcome (exact on FerretDB, whose updates are not
 * atomic), tallied into per-account statistics that the planner blends with its priors.
 */
export function createLearningStore(db: Db) {
  const log = db.collection<AttemptLogDoc>(collections.attempts);
  return {
    async record(row: AttemptLogDoc): Promise<void> {
      try {
        await log.insertOne(row);
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
      }
    },

    /** Tallies the account's recent outcomes by code, hour bucket, weekday, day of month and gateway. */
    async stats(accountId: string, now: Date): Promise<OutcomeStats> {
      const rows = await log
        .find(
          { accountId, at: { $gte: new Date(now.getTime() - window) } },
          { projection: { fromCode: 1, approved: 1, gateway: 1, local: 1 } },
        )
        .sort({ at: -1 })
        .limit(maxRows)
        .toArray();
      const stats = emptyStats();
      for (const r of rows) tallyOutcome(stats, r);
      return stats;
    },
  };
}

export type LearningStore = ReturnType<typeof createLearningStore>;
