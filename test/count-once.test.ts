import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { collections } from '../store/collections.js';
import { uncountedAfterMs } from '../store/count-once.js';
import { createLearningStore } from '../store/learning.js';
import { createPredictionStore, type PredictionDoc } from '../store/predictions.js';
import { scratchDb } from './support/scratch-db.js';

// Learning statistics and risk calibration count each logged outcome once: a process that dies (or a
// database write that fails) between logging an outcome and counting it leaves it for a later call to
// count, and neither a retry nor a concurrent duplicate counts it twice.

const { db } = scratchDb('count_once');
const newAccount = () => `acct_${randomUUID().slice(0, 8)}`;
/** A collection as the tests write and read it behind the stores' backs. */
const raw = (name: string) => db().collection<{ _id: string; [field: string]: unknown }>(name);
/** What a writer that died between its two writes left: the row, logged `ago` ms back, not counted. */
const leftUncounted = (ago: number) => ({ loggedAt: new Date(Date.now() - ago), counted: false });

const attempt = (id: string, accountId: string) => ({
  _id: id,
  accountId,
  fromCode: 'insufficient_funds',
  approved: true,
  gateway: 'test',
  local: { hour: 10, dayOfMonth: 3, weekday: 1, daysInMonth: 30 },
  at: new Date('2026-11-03T10:00:00Z'),
});

/** How many outcomes the account's statistics hold for insufficient_funds. */
const learned = async (learning: ReturnType<typeof createLearningStore>, accountId: string) =>
  (await learning.stats(accountId)).byCode.insufficient_funds ?? { n: 0, s: 0 };

describe('learning statistics', () => {
  it('count an outcome a dead worker logged but did not count when the activity retries, once', async () => {
    const learning = createLearningStore(db());
    const account = newAccount();
    await raw(collections.attempts).insertOne({
      ...attempt('died', account),
      ...leftUncounted(uncountedAfterMs),
    });
    await learning.record(attempt('died', account));
    expect(await learned(learning, account)).toEqual({ n: 1, s: 1 });
    await learning.record(attempt('died', account));
    expect(await learned(learning, account)).toEqual({ n: 1, s: 1 });
  });

  it('leave a freshly logged outcome to the writer still counting it', async () => {
    const learning = createLearningStore(db());
    const account = newAccount();
    await raw(collections.attempts).insertOne({ ...attempt('busy', account), ...leftUncounted(1_000) });
    await learning.record(attempt('busy', account));
    expect(await learned(learning, account)).toEqual({ n: 0, s: 0 });
  });

  it('count an outcome once when the same attempt is recorded twice at the same moment', async () => {
    const learning = createLearningStore(db());
    const account = newAccount();
    for (let i = 0; i < 10; i += 1) {
      const row = attempt(`twice-${i}`, account);
      await Promise.all([learning.record(row), learning.record(row)]);
    }
    expect(await learned(learning, account)).toEqual({ n: 10, s: 10 });
    expect(await raw(collections.attempts).countDocuments({ _id: /^twice-/, counted: true })).toBe(10);
  });

  it('trust outcomes logged before counts were marked: the version that logged them counted them', async () => {
    const learning = createLearningStore(db());
    const account = newAccount();
    await raw(collections.attempts).insertOne(attempt('legacy', account));
    await learning.record(attempt('legacy', account));
    expect(await learned(learning, account)).toEqual({ n: 0, s: 0 });
  });
});

describe('risk calibration', () => {
  const prediction = (accountId: string): PredictionDoc => ({
    _id: randomUUID(),
    accountId,
    band: 7,
    riskScore: 72,
    recommendation: 'delay',
    createdAt: new Date(),
  });

  it('counts an outcome whose report died before counting it when it is reported again, as first reported', async () => {
    const store = createPredictionStore(db());
    const account = newAccount();
    const p = prediction(account);
    await store.create(p);
    const at = new Date();
    await raw(collections.predictionOutcomes).insertOne({
      _id: p._id,
      accountId: account,
      outcome: 'failed',
      declineCode: null,
      at,
      ...leftUncounted(uncountedAfterMs),
    });
    const again = { outcome: 'succeeded', declineCode: null, at } as const;
    expect(await store.recordOutcome(p, again)).toMatchObject({ outcome: 'failed' });
    expect(await store.calibration(account)).toEqual({ '7': { n: 1, failed: 1 } });
    await store.recordOutcome(p, again);
    expect(await store.calibration(account)).toEqual({ '7': { n: 1, failed: 1 } });
  });

  it('counts an outcome once when it is reported twice at the same moment', async () => {
    const store = createPredictionStore(db());
    const account = newAccount();
    for (let i = 0; i < 10; i += 1) {
      const p = prediction(account);
      await store.create(p);
      const report = { outcome: 'failed', declineCode: 'do_not_honor', at: new Date() } as const;
      await Promise.all([store.recordOutcome(p, report), store.recordOutcome(p, report)]);
    }
    expect(await store.calibration(account)).toEqual({ '7': { n: 10, failed: 10 } });
  });
});
