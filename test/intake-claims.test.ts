import { randomUUID } from 'node:crypto';
import type { Db, MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { collections } from '../store/collections.js';
import { ensureIndexes } from '../store/indexes.js';
import { createIntakeClaims, velocityWindowMs, type IntakeClaims } from '../store/intake-claims.js';
import { connectMongo } from '../store/mongo.js';

const minute = 60_000;
const start = new Date(Date.UTC(2026, 5, 1, 9));
const at = (minutes: number) => new Date(start.getTime() + minutes * minute);

let mongo: MongoClient;
let db: Db;
let claims: IntakeClaims;

beforeAll(async () => {
  ({ client: mongo, db } = await connectMongo(`${inject('mongoUri')}t_intake_${randomUUID().slice(0, 8)}`));
  await ensureIndexes(db);
  claims = createIntakeClaims(db);
});
afterAll(async () => {
  await db.dropDatabase();
  await mongo.close();
});

describe('the 5-minute claims of a card and amount whose customer was erased', () => {
  it('name no transaction; an old one loses its time, the one still in its window refuses a duplicate', async () => {
    const card = `acct_test:${randomUUID()}`;
    const claim = (transactionId: string, now: Date) =>
      claims.claimVelocity('acct_test', card, 2500, 'USD', transactionId, now);
    expect(await claim('tx-first', at(0))).toBeNull();
    expect(await claim('tx-second', at(10))).toBeNull();

    const erased = (transactionId: string) =>
      Promise.resolve(['tx-first', 'tx-second'].includes(transactionId));
    expect(await claims.forgetVelocity('acct_test', card, 2500, 'USD', erased, at(12))).toBe(2);
    expect(await claims.forgetVelocity('acct_test', card, 2500, 'USD', erased, at(12))).toBe(0);

    const stored = await db
      .collection<{ _id: string; n: number; transactionId: string; at: Date }>(collections.velocity)
      .find({ _id: { $in: [1, 2].map((n) => `acct_test:${card}:2500:USD:${n}`) } })
      .toArray();
    expect(
      stored.map(({ n, transactionId, at: time }) => ({ n, transactionId, at: time.getTime() })),
    ).toEqual([
      { n: 1, transactionId: 'erased', at: 0 },
      { n: 2, transactionId: 'erased', at: at(10).getTime() },
    ]);
    // Within the second claim's window a duplicate is still refused; after it, claimed afresh as claim 3.
    expect(await claim('tx-duplicate', at(13))).toBe('erased');
    expect(await claim('tx-later', new Date(at(10).getTime() + velocityWindowMs))).toBeNull();
    // Forgetting once the window is over takes the time too (of the erased claim; tx-later's stays).
    expect(
      await claims.forgetVelocity('acct_test', card, 2500, 'USD', () => Promise.resolve(false), at(30)),
    ).toBe(1);
    expect(await claim('tx-after', at(31))).toBeNull();
  });

  it('keep the claim of a recovery the erasure did not find (admitted while it ran)', async () => {
    const card = `acct_test:${randomUUID()}`;
    const claim = (transactionId: string, now: Date) =>
      claims.claimVelocity('acct_test', card, 2500, 'USD', transactionId, now);
    expect(await claim('tx-erased', at(0))).toBeNull();
    expect(await claim('tx-new', at(7))).toBeNull();
    expect(
      await claims.forgetVelocity(
        'acct_test',
        card,
        2500,
        'USD',
        (id) => Promise.resolve(id === 'tx-erased'),
        at(8),
      ),
    ).toBe(1);
    // Its duplicate is still refused naming it, and its own refusal gives it back.
    expect(await claim('tx-duplicate', at(9))).toBe('tx-new');
  });
});
