import type { Db } from 'mongodb';
import type { LocalParts } from '../domain/local-time.js';
import { emptyStats, outcomeCounts, type OutcomeStats } from '../domain/success-model.js';
import { collections } from './collections.js';
import { logAndCountOnce, type Countable } from './count-once.js';
import { upsert } from './mongo.js';

interface AttemptLogDoc extends Countable {
  _id: string; // gateway idempotency key of the attempt: logged once
  accountId: string;
  fromCode: string;
  approved: boolean;
  gateway: string;
  local: LocalParts;
  /** Earlier retries of the card, the unlearned part of the prediction and its same-day factor. */
  depth?: number;
  exposure?: number;
  sameDay?: number;
  at: Date;
}

interface TallyDoc {
  _id: string; // accountId
  stats: OutcomeStats;
}

/** Field-safe keys: Mongo paths cannot contain dots or start with `$`. */
const safe = (key: string) => key.replace(/[.$]/g, '_');

/**
 * The engine's memory. Each attempt outcome is logged once (insert-only, keyed by the attempt) and counted
 * once into the account's tally document with `$inc` (`logAndCountOnce`: a retried activity never counts
 * twice, nor does a worker that died between the two writes lose the count), and planning reads one
 * document by `_id`. On MongoDB the counts are exact; on FerretDB, whose updates are not atomic, two
 * outcomes of one account landing at the same instant may lose one count, which statistics tolerate.
 */
export function createLearningStore(db: Db, clock: () => Date = () => new Date()) {
  const tallies = db.collection<TallyDoc>(collections.learning);
  /** The domain's learning step decides what one outcome adds; the benchmark tallies with the same counts. */
  async function count(row: AttemptLogDoc): Promise<void> {
    const inc: Record<string, number> = {};
    for (const [table, key, n, s] of outcomeCounts(row)) {
      inc[`stats.${table}.${safe(key)}.n`] = n;
      inc[`stats.${table}.${safe(key)}.s`] = s;
    }
    await upsert(() => tallies.updateOne({ _id: row.accountId }, { $inc: inc }, { upsert: true }));
  }
  return {
    async record(row: AttemptLogDoc): Promise<void> {
      await logAndCountOnce(db, collections.attempts, row, count, clock());
    },

    /** The account's outcome statistics by code, hour bucket, weekday, day of month and gateway. */
    async stats(accountId: string): Promise<OutcomeStats> {
      const doc = await tallies.findOne({ _id: accountId });
      return { ...emptyStats(), ...doc?.stats };
    },
  };
}

export type LearningStore = ReturnType<typeof createLearningStore>;
