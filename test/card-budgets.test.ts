import { randomUUID } from 'node:crypto';
import type { Db, MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { maxNetworkCap, NetworkRules } from '../domain/network-rules.js';
import { collections } from '../store/collections.js';
import { createCardBudgetStore, type CardBudgetStore, type CardClaim } from '../store/card-budgets.js';
import { ensureIndexes } from '../store/indexes.js';
import { connectMongo } from '../store/mongo.js';

/** An asymmetric matcher for a refusal reason naming `text`. */
const mentioning = (text: string): string => expect.stringContaining(text) as string;

const hour = 3_600_000;
const day = 24 * hour;
const start = new Date(Date.UTC(2026, 5, 1, 9));

let mongo: MongoClient;
let db: Db;
let budgets: CardBudgetStore;

beforeAll(async () => {
  ({ client: mongo, db } = await connectMongo(`${inject('mongoUri')}t_budgets_${randomUUID().slice(0, 8)}`));
  await ensureIndexes(db);
  budgets = createCardBudgetStore(db);
});
afterAll(async () => {
  await db.dropDatabase();
  await mongo.close();
});

/** A fresh card of one account, keyed the way callers key it: account id plus a hash of the token. */
function newCard(): string {
  return `acct_test:${randomUUID().replace(/-/g, '')}`;
}

function claim(cardKey: string, overrides: Partial<CardClaim>) {
  return budgets.claim({
    cardKey,
    brand: 'visa',
    declineCode: 'insufficient_funds',
    advice: null,
    attemptKey: randomUUID(),
    now: start,
    ...overrides,
  });
}

describe('concurrent claims on one card', () => {
  it('allows exactly 10 of 40 simultaneous Mastercard attempts', async () => {
    const card = newCard();
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        claim(card, { brand: 'mastercard', declineCode: 'do_not_honor', attemptKey: `wf-${i}/1` }),
      ),
    );
    expect(results.filter((r) => r.allowed)).toHaveLength(10);
    expect(results.find((r) => !r.allowed)).toEqual({
      allowed: false,
      reason: mentioning('24 hours'),
      retryAt: start.getTime() + day,
    });
    expect(await budgets.attemptsSince(card, new Date(0))).toHaveLength(10);
  });
});

describe('idempotency per attempt key', () => {
  it('counts the same attempt once, even when claimed again at the same time', async () => {
    const card = newCard();
    const again = await Promise.all([
      claim(card, { attemptKey: 'wf-a/1' }),
      claim(card, { attemptKey: 'wf-a/1' }),
    ]);
    expect(again).toEqual([
      { allowed: true, claimedAt: start },
      { allowed: true, claimedAt: start },
    ]);
    const later = await claim(card, { attemptKey: 'wf-a/1', now: new Date(start.getTime() + hour) });
    expect(later).toEqual({ allowed: true, claimedAt: start });
    expect(await budgets.attemptsSince(card, new Date(0))).toEqual([start.getTime()]);
  });

  it("a retried claim answers with the first claim's time: when the attempt was first sent, however late the retry", async () => {
    const card = newCard();
    const first = await claim(card, { attemptKey: 'wf-first/1' });
    // A worker that replays the workflow after a crash claims again with its own, later clock.
    const replayed = await claim(card, {
      attemptKey: 'wf-first/1',
      now: new Date(start.getTime() + 45_000),
    });
    expect(first).toEqual({ allowed: true, claimedAt: start });
    expect(replayed).toEqual({ allowed: true, claimedAt: start });
    // Another attempt on the card is a claim of its own, at its own time.
    const next = new Date(start.getTime() + day);
    expect(await claim(card, { attemptKey: 'wf-first/2', now: next })).toEqual({
      allowed: true,
      claimedAt: next,
    });
  });

  it('answers a retried claim as allowed even once the card is at its cap', async () => {
    const card = newCard();
    const mc = { brand: 'mastercard' as const, declineCode: 'do_not_honor' };
    for (let i = 0; i < 10; i += 1) await claim(card, { ...mc, attemptKey: `wf-b/${i}` });
    expect(await claim(card, { ...mc, attemptKey: 'wf-b/10' })).toMatchObject({ allowed: false });
    expect(await claim(card, { ...mc, attemptKey: 'wf-b/3' })).toEqual({ allowed: true, claimedAt: start });
  });
});

describe('one Visa card across several recoveries', () => {
  it('never gets more than 15 attempts in any 30 days', async () => {
    const card = newCard();
    const allowedAt: number[] = [];
    // Four recoveries of the same card, each trying 8 times a day apart, interleaved and partly concurrent.
    for (let dayNo = 0; dayNo < 8; dayNo += 1) {
      const now = new Date(start.getTime() + dayNo * day);
      const round = await Promise.all(
        [1, 2, 3, 4].map((recovery) => claim(card, { attemptKey: `rec-${recovery}/${dayNo}`, now })),
      );
      for (const r of round) if (r.allowed) allowedAt.push(now.getTime());
    }
    expect(allowedAt).toHaveLength(15);
    expect(await budgets.attemptsSince(card, new Date(start.getTime() - 1))).toEqual(allowedAt);
  });

  it('allows attempts again as old ones age out of the 30 days', async () => {
    const card = newCard();
    for (let i = 0; i < 15; i += 1)
      await claim(card, { attemptKey: `old/${i}`, now: new Date(start.getTime() + i * hour) });
    const refused = await claim(card, { attemptKey: 'new/0', now: new Date(start.getTime() + 10 * day) });
    expect(refused).toMatchObject({ allowed: false, retryAt: start.getTime() + 30 * day });
    const after = new Date(start.getTime() + 30 * day);
    expect(await claim(card, { attemptKey: 'new/1', now: after })).toEqual({
      allowed: true,
      claimedAt: after,
    });
    expect(await claim(card, { attemptKey: 'new/2', now: after })).toMatchObject({ allowed: false });
  });

  it('never claims after a Visa "do not retry" code', async () => {
    const card = newCard();
    expect(await claim(card, { declineCode: 'lost_card' })).toMatchObject({ allowed: false, retryAt: null });
    expect(await budgets.attemptsSince(card, new Date(0))).toEqual([]);
  });
});

describe('Mastercard advice waits', () => {
  it('counts the wait from the card’s latest attempt', async () => {
    const card = newCard();
    const mc = { brand: 'mastercard' as const, declineCode: 'do_not_honor' };
    await claim(card, { ...mc, attemptKey: 'wf-c/1' });
    const soon = new Date(start.getTime() + hour);
    expect(await claim(card, { ...mc, advice: '25', attemptKey: 'wf-c/2', now: soon })).toMatchObject({
      allowed: false,
      retryAt: start.getTime() + day,
    });
    // The refusal left no claim: allowed a day later, the attempt is first claimed then.
    const nextDay = new Date(start.getTime() + day);
    expect(await claim(card, { ...mc, advice: '25', attemptKey: 'wf-c/2', now: nextDay })).toEqual({
      allowed: true,
      claimedAt: nextDay,
    });
  });
});

describe('Mastercard stop advice across recoveries', () => {
  const mc = { brand: 'mastercard' as const, declineCode: 'do_not_honor' };

  it('refuses every later claim on the card for good; the attempt that met it still replays', async () => {
    const card = newCard();
    expect(await claim(card, { ...mc, attemptKey: 'rec-1/1' })).toEqual({ allowed: true, claimedAt: start });
    await budgets.rememberAdvice(card, { advice: '03', at: start });

    // Another recovery of the card, with no advice of its own, now and a year later.
    for (const now of [new Date(start.getTime() + day), new Date(start.getTime() + 365 * day)])
      expect(await claim(card, { ...mc, attemptKey: `rec-2/${now.getTime()}`, now })).toEqual({
        allowed: false,
        reason: mentioning('advice code 03'),
        retryAt: null,
      });
    expect(await claim(card, { ...mc, attemptKey: 'rec-1/1' })).toEqual({ allowed: true, claimedAt: start });
    expect(await budgets.attemptsSince(card, new Date(0))).toEqual([start.getTime()]);
  });

  it('is kept per card: each card has its own, and other cards are unaffected', async () => {
    const [stopped, alsoStopped, other] = [newCard(), newCard(), newCard()];
    await budgets.rememberAdvice(stopped, { advice: '21', at: start });
    await budgets.rememberAdvice(alsoStopped, { advice: '03', at: start });
    await budgets.rememberAdvice(alsoStopped, { advice: '03', at: start });
    expect(await claim(stopped, mc)).toMatchObject({ allowed: false, reason: mentioning('21') });
    expect(await claim(alsoStopped, mc)).toMatchObject({ allowed: false, reason: mentioning('03') });
    expect(await claim(other, mc)).toEqual({ allowed: true, claimedAt: start });
  });
});

describe('Mastercard wait advice across recoveries', () => {
  const mc = { brand: 'mastercard' as const, declineCode: 'do_not_honor' };
  const at = (ms: number) => new Date(start.getTime() + ms);

  it('holds every later claim on the card until the wait is over; the latest advice stands, not one looked up late', async () => {
    const card = newCard();
    await budgets.rememberAdvice(card, { advice: '25', at: start });
    // Another recovery of the card, with no advice of its own.
    expect(await claim(card, { ...mc, now: at(hour) })).toEqual({
      allowed: false,
      reason: mentioning('advice code 25'),
      retryAt: start.getTime() + day,
    });
    expect(await claim(card, { ...mc, now: at(day) })).toMatchObject({ allowed: true });

    await budgets.rememberAdvice(card, { advice: '30', at: at(2 * day) });
    await budgets.rememberAdvice(card, { advice: '24', at: at(day + hour) });
    expect(await claim(card, { ...mc, now: at(3 * day) })).toMatchObject({
      allowed: false,
      retryAt: start.getTime() + 12 * day,
    });
    // A later decline advised a shorter wait: it is the issuer's word now.
    await budgets.rememberAdvice(card, { advice: '24', at: at(5 * day) });
    expect(await claim(card, { ...mc, now: at(5 * day + 2 * hour) })).toMatchObject({ allowed: true });
  });

  it('names the advice once when it is also the recovery’s own; advice other than a stop or a wait is the recovery’s own', async () => {
    const card = newCard();
    await budgets.rememberAdvice(card, { advice: '26', at: start });
    const refused = await claim(card, { ...mc, advice: '26', lastAttemptAt: start, now: at(hour) });
    expect(refused).toMatchObject({ allowed: false, retryAt: start.getTime() + 2 * day });
    expect(refused.allowed || refused.reason.split('advice code 26')).toHaveLength(2);

    const other = newCard();
    await budgets.rememberAdvice(other, { advice: '01', at: start });
    expect(await claim(other, { ...mc, now: at(hour) })).toMatchObject({ allowed: true });
  });

  it('is kept beside a stop of the same card, in either order (MongoDB counts a missing attempt key as one value)', async () => {
    for (const order of [
      ['24', '03'],
      ['21', '25'],
    ]) {
      const card = newCard();
      for (const [i, advice] of order.entries())
        await budgets.rememberAdvice(card, { advice, at: at(i * hour) });
      expect(await budgets.stopOf(card)).toBe(order.find((a) => a === '03' || a === '21'));
      expect(await claim(card, { ...mc, now: at(2 * hour) })).toMatchObject({
        allowed: false,
        retryAt: null,
      });
    }
  });

  it("goes with the account's data retention once it is older than the cutoff; the card's stop stays", async () => {
    const account = `acct_waits_${randomUUID().slice(0, 8)}`;
    const [waited, stopped] = [`${account}:a`, `${account}:b`];
    await budgets.rememberAdvice(waited, { advice: '30', at: start });
    await budgets.rememberAdvice(stopped, { advice: '03', at: start });
    await budgets.forgetAttemptsBefore(account, start);
    expect(await claim(waited, { ...mc, now: at(hour) })).toMatchObject({ allowed: false });

    await budgets.forgetAttemptsBefore(account, at(90 * day));
    const kept = db.collection(collections.cardBudgets).find({ cardKey: { $in: [waited, stopped] } });
    expect((await kept.toArray()).map((d) => d._id)).toEqual([`${stopped}:stop`]);
    expect(await budgets.stopOf(stopped)).toBe('03');
  });
});

describe('configured caps', () => {
  it('count up to the largest cap a setting may give exactly', async () => {
    const card = newCard();
    const rules = NetworkRules.parse({ visa: { maxPer30Days: maxNetworkCap } });
    for (let i = 0; i < maxNetworkCap; i += 1) {
      const now = new Date(start.getTime() + i * 1000);
      expect(await claim(card, { attemptKey: `big/${i}`, now, rules })).toEqual({
        allowed: true,
        claimedAt: now,
      });
    }
    expect(
      await claim(card, { attemptKey: 'big/last', now: new Date(start.getTime() + day), rules }),
    ).toMatchObject({ allowed: false, retryAt: start.getTime() + 30 * day });
  });
});

describe('a card whose customer was erased', () => {
  it('keeps its budget, times and stop, and no longer names the erased recoveries’ attempts (only theirs); forgetting again changes nothing', async () => {
    const card = newCard();
    const mc = { brand: 'mastercard' as const, declineCode: 'do_not_honor' };
    for (let i = 0; i < 9; i += 1)
      await claim(card, { ...mc, attemptKey: `wf-erased/${i}`, now: new Date(start.getTime() + i * 1000) });
    // Another customer's recovery of the card, begun since the erasure looked: its claim stays its own.
    await claim(card, { ...mc, attemptKey: 'wf-other/1', now: new Date(start.getTime() + 9_000) });
    await budgets.rememberAdvice(card, { advice: '21', at: start });
    const times = await budgets.attemptsSince(card, new Date(0));

    expect(await budgets.forgetAttempts(card, ['wf-erased'])).toBe(9);
    expect(await budgets.forgetAttempts(card, ['wf-erased'])).toBe(0);

    const stored = await db
      .collection<{ _id: string; attemptKey?: string }>(collections.cardBudgets)
      .find({ cardKey: card, n: { $exists: true } })
      .sort({ n: 1 })
      .toArray();
    expect(stored.map((c) => c.attemptKey)).toEqual([
      ...Array.from({ length: 9 }, (_, i) => `erased:${i + 1}`),
      'wf-other/1',
    ]);
    expect(JSON.stringify(stored)).not.toContain('wf-erased');
    expect(await budgets.attemptsSince(card, new Date(0))).toEqual(times);
    expect(await budgets.stopOf(card)).toBe('21');
    expect(
      await claim(card, {
        declineCode: 'do_not_honor',
        attemptKey: 'wf-later/1',
        now: new Date(start.getTime() + hour),
      }),
    ).toMatchObject({ allowed: false, reason: mentioning('21') });
  });
});
