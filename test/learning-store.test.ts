import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createLearningStore } from '../store/learning.js';
import { scratchDb } from './support/scratch-db.js';

const { db } = scratchDb('learning');

const row = (id: string, accountId: string, approved: boolean, simulated = false) => ({
  _id: id,
  accountId,
  simulated,
  fromCode: 'insufficient_funds',
  approved,
  gateway: 'test',
  local: { hour: 10, dayOfMonth: 3, weekday: 1, daysInMonth: 30 },
  at: new Date('2026-11-03T10:00:00Z'),
});

describe('the learning store', () => {
  it('counts the first outcomes of a new account when they land at once (no lost race to create the tally)', async () => {
    const learning = createLearningStore(db());
    const account = `acct_${randomUUID().slice(0, 8)}`;
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => learning.record(row(`k${i}`, account, true))),
    );
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    const stats = await learning.stats(account, false);
    const counted = Object.values(stats.byCode ?? {})[0];
    // None failed: the loser of the race to create the tally used to fail with E11000, its outcome never
    // counted. FerretDB's $inc is not atomic, so concurrent increments may merge into fewer: with mixed
    // outcomes the one that lands last could leave no success counted. Every outcome here is a success, so
    // whatever merges, each counted outcome counts its success too.
    expect(counted?.n).toBeGreaterThanOrEqual(1);
    expect(counted?.s).toBe(counted?.n);
  });

  it('counts a retried outcome once', async () => {
    const learning = createLearningStore(db());
    const account = `acct_${randomUUID().slice(0, 8)}`;
    await learning.record(row('same', account, true));
    await learning.record(row('same', account, true));
    expect(Object.values((await learning.stats(account, false)).byCode ?? {})[0]).toEqual({ n: 1, s: 1 });
  });

  it('keeps what a retry within 24 h teaches: the same-day table counts it for its decay alone', async () => {
    const learning = createLearningStore(db());
    const account = `acct_${randomUUID().slice(0, 8)}`;
    await learning.record({ ...row('soon', account, true), depth: 0, exposure: 0.25, sameDay: 0.5 });
    await learning.record({ ...row('later', account, false), depth: 0, exposure: 0.8 });
    const stats = await learning.stats(account, false);
    expect(stats.byRepeat).toEqual({ 'funds|soon': { n: 0.5, s: 1 }, 'funds|later': { n: 0.8, s: 0 } });
    expect(stats.byCode.insufficient_funds).toEqual({ n: 1.05, s: 1 });
  });

  it('tallies sandbox outcomes apart from live ones: each mode reads only its own', async () => {
    const learning = createLearningStore(db());
    const account = `acct_${randomUUID().slice(0, 8)}`;
    for (let i = 0; i < 3; i += 1) await learning.record(row(`sandbox${i}`, account, true, true));
    await learning.record(row('live', account, false));
    expect((await learning.stats(account, true)).byCode).toEqual({ insufficient_funds: { n: 3, s: 3 } });
    expect((await learning.stats(account, false)).byCode).toEqual({ insufficient_funds: { n: 1, s: 0 } });
  });
});
