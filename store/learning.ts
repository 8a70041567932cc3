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
  /** Made by a sandbox recovery (test mode): learned apart from live outcomes. Absent on older rows: live. */
  simulated?: boolean;
  at: Date;
}

/** The tallies of an account: live outcomes under `stats`, sandbox ones under `sandbox`. */
interface TallyDoc {
  _id: string; // accountId
  stats?: OutcomeStats;
  sandbox?: OutcomeStats;
}

/** Where a tally document keeps the outcomes of a mode. */
const tallyOf = (simulated: boolean) => (simulated ? 'sandbox' : 'stats');

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
 *
 * Sandbox outcomes (a test-mode account's recoveries, charged on the test gateway's scripted tokens) are
 * tallied apart from live ones, and each mode reads only its own: an account that goes live (its primary
 * gateway switched) plans with what its live charges taught, never with what its integration tests did.
 */
export function createLearningStore(db: Db) {
  const log = db.collection<AttemptLogDoc>(collections.attempts);
  const tallies = db.collection<TallyDoc>(collections.learning);
  return {
    /** Logs an attempt's outcome once and counts it into its mode's tally (`simulated`: the sandbox's). */
    async record(row: AttemptLogDoc & { simulated: boolean }): Promise<void> {
      try {
        await log.insertOne(row);
      } catch (error) {
        if (isDuplicateKey(error)) return;
        throw error;
      }
      // The domain's learning step decides what one outcome adds; the benchmark tallies with the same counts.
      const inc: Record<string, number> = {};
      const tally = tallyOf(row.simulated);
      for (const [table, key, n, s] of outcomeCounts(row)) {
        inc[`${tally}.${table}.${safe(key)}.n`] = n;
        inc[`${tally}.${table}.${safe(key)}.s`] = s;
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

    /**
     * The account's outcome statistics by code, hour bucket, weekday, day of month and gateway: of its
     * sandbox recoveries when `simulated` (test mode), else of its live ones.
     */
    async stats(accountId: string, simulated: boolean): Promise<OutcomeStats> {
      const doc = await tallies.findOne({ _id: accountId });
      return { ...emptyStats(), ...doc?.[tallyOf(simulated)] };
    },
  };
}
