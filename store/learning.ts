import type { Db } from 'mongodb';
import type { LocalParts } from '../domain/local-time.js';
import { emptyStats, statKeys, type OutcomeStats, type Tally } from '../domain/success-model.js';
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
      const add = (table: Record<string, Tally>, key: string, approved: boolean) => {
        const t = (table[key] ??= { n: 0, s: 0 });
        t.n += 1;
        t.s += approved ? 1 : 0;
      };
      for (const r of rows) {
        const k = statKeys(r.fromCode, r.local, r.gateway);
        add(stats.byCode, k.code, r.approved);
        add(stats.byHour, k.hour, r.approved);
        add(stats.byWeekday, k.weekday, r.approved);
        add(stats.byDay, k.day, r.approved);
        add(stats.byGateway, k.gateway, r.approved);
      }
      return stats;
    },
  };
}

export type LearningStore = ReturnType<typeof createLearningStore>;
