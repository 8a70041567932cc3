import type { Db } from 'mongodb';
import type { LocalParts } from '../domain/local-time.js';
import { emptyStats, outcomeCounts, type OutcomeStats } from '../domain/success-model.js';
import { collections } from './collections.js';
import { isDuplicateKey, upsert } from './mongo.js';

interface AttemptLogDoc {
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
 * The engine's memory. Each attempt outcome is logged once (insert-only, keyed by the attempt) and, only
 * when that insert is new, counted into the account's tally document with `$inc` — so a retried activity
 * never counts twice, and planning reads one document by `_id`. On MongoDB the counts are exact; on
 * FerretDB, whose updates are not atomic, two outcomes of one account landing at the same instant may
 * lose one count, as does a worker that dies between the two writes; statistics tolerate that (marking
 * each row counted after its tally would cost every attempt a third write, and a retry seconds later could
 * still not tell a dead writer from a slow one).
 */
export function createLearningStore(db: Db) {
  const log = db.collection<AttemptLogDoc>(collections.attempts);
  const tallies = db.collection<TallyDoc>(collections.learning);
  return {
    async record(row: AttemptLogDoc): Promise<void> {
      try {
        await log.insertOne(row);
      } catch (error) {
        if (isDuplicateKey(error)) return;
        throw error;
      }
      // The domain's learning step decides what one outcome adds; the benchmark tallies with the same counts.
      const inc: Record<string, number> = {};
      for (const [table, key, n, s] of outcomeCounts(row)) {
        inc[`stats.${table}.${safe(key)}.n`] = n;
        inc[`stats.${table}.${safe(key)}.s`] = s;
      }
      await upsert(() => tallies.updateOne({ _id: row.accountId }, { $inc: inc }, { upsert: true }));
    },

    /**
     * Deletes the account's attempts logged before `cutoff` (data retention): each names its recovery (its
     * `_id` is the attempt key) and when and where it was charged. What they taught stays in the account's
     * tally, which names no recovery; the log only keeps an attempt from being counted twice while its
     * recovery runs, and `cutoff` is longer ago than any recovery runs.
     */
    async purgeBefore(accountId: string, cutoff: Date): Promise<number> {
      return (await log.deleteMany({ accountId, at: { $lt: cutoff } })).deletedCount;
    },

    /** The account's outcome statistics by code, hour bucket, weekday, day of month and gateway. */
    async stats(accountId: string): Promise<OutcomeStats> {
      const doc = await tallies.findOne({ _id: accountId });
      return { ...emptyStats(), ...doc?.stats };
    },
  };
}
