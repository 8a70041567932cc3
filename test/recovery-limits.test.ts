import { randomBytes, randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { createApp } from '../api/app.js';
import { createLogger } from '../runtime/logger.js';
import { collections } from '../store/collections.js';
import { createStores } from '../store/index.js';
import { connectMongo } from '../store/mongo.js';
import { call, startStack, type JsonResponse, type Stack } from './support/stack.js';

/** The API's (and the activities') clock, moved by the tests; the workflows keep Temporal's clock. */
let now = Date.now();
const clock = () => new Date(now);
/** Fixes the clock half a minute into the current minute, so a rate-limit window cannot roll over mid-test. */
const midMinute = () => (now = Math.floor(Date.now() / 60_000) * 60_000 + 30_500);

let stack: Stack;
let n = 0;
/** A token no other test charges. */
const freshToken = () => `tok_limits_${(n += 1)}`;
const anyString = expect.any(String) as string;

const execute = (baseUrl: string, key: string | undefined, body: unknown) =>
  call(baseUrl, 'POST', '/api/recovery/execute', { ...(key ? { key } : {}), body });

/** A request the engine recovers at once (200). */
const recoverable = (extra: Record<string, unknown> = {}) => ({
  paymentMethodToken: freshToken(),
  amount: 1000,
  originalDeclineCode: 'try_again_later',
  ...extra,
});

const countDocs = (name: string, filter: Record<string, unknown> = {}) =>
  stack.stores.db.collection(name).countDocuments(filter);

const statuses = (responses: JsonResponse[]) => responses.map((r) => r.status);
const tally = (responses: JsonResponse[]) =>
  statuses(responses).reduce<Record<number, number>>((t, s) => ({ ...t, [s]: (t[s] ?? 0) + 1 }), {});

/** Asserts the spec's duplicate body pointing at `transactionId`. */
function expectDuplicate(res: JsonResponse, transactionId: string) {
  expect(res.status).toBe(409);
  expect(Object.keys(res.body).sort()).toEqual([
    'error',
    'existingRecovered',
    'existingStatus',
    'existingTransactionId',
    'message',
  ]);
  expect(res.body).toMatchObject({
    error: anyString,
    message: anyString,
    existingTransactionId: transactionId,
  });
  expect(['succeeded', 'failed', 'blocked', 'unknown']).toContain(res.body.existingStatus);
  expect(typeof res.body.existingRecovered).toBe('boolean');
}

beforeAll(async () => {
  stack = await startStack({ clock });
});
afterAll(() => stack.close());

describe('idempotency', () => {
  it('20 simultaneous executes with one key: one proceeds and charges once, 19 get 409 naming it', async () => {
    const idempotencyKey = `order-${randomUUID()}`;
    const { apiKey } = await stack.createAccount();
    const body = recoverable({ idempotencyKey });
    const answers = await Promise.all(Array.from({ length: 20 }, () => execute(stack.baseUrl, apiKey, body)));

    const winners = answers.filter((r) => r.status !== 409);
    expect(winners).toHaveLength(1);
    const winner = winners[0]!;
    expect(winner.status).toBe(200);
    expect(winner.body).toMatchObject({ success: true });
    const transactionId = String(winner.body.transactionId);
    const losers = answers.filter((r) => r.status === 409);
    expect(losers).toHaveLength(19);
    for (const res of losers) expectDuplicate(res, transactionId);

    expect(await countDocs(collections.recoveries, { idempotencyKey })).toBe(1);
    expect(await countDocs(collections.sandboxCharges, { token: body.paymentMethodToken })).toBe(1);
    expect(
      await stack.stores.db
        .collection('sandboxCharges')
        .countDocuments({ approved: true, token: body.paymentMethodToken }),
    ).toBe(1);

    const later = await execute(stack.baseUrl, apiKey, recoverable({ idempotencyKey, amount: 2000 }));
    expectDuplicate(later, transactionId);
    expect(later.body).toMatchObject({ existingStatus: 'succeeded', existingRecovered: true });
    expect(await countDocs(collections.recoveries, { idempotencyKey })).toBe(1);
  });

  it('a duplicate of a synchronous failure names its FAILED_API_ id, status failed', async () => {
    const { apiKey } = await stack.createAccount();
    const body = {
      paymentMethodToken: 'tok_decline_incorrect_cvc',
      amount: 1000,
      originalDeclineCode: 'incorrect_cvc',
      idempotencyKey: `order-${randomUUID()}`,
    };
    const first = await execute(stack.baseUrl, apiKey, body);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ success: false });
    expect(String(first.body.transactionId)).toMatch(/^FAILED_API_/);
    const again = await execute(stack.baseUrl, apiKey, body);
    expectDuplicate(again, String(first.body.transactionId));
    expect(again.body).toMatchObject({ existingStatus: 'failed', existingRecovered: false });
  });

  it("a key equal to a keyless recovery's transactionId names that recovery (409): no second recovery attaches to its workflow", async () => {
    const { apiKey, account } = await stack.createAccount();
    const keyless = await execute(stack.baseUrl, apiKey, {
      paymentMethodToken: 'tok_decline_insufficient_funds',
      amount: 1999,
      originalDeclineCode: 'insufficient_funds',
    });
    expect(keyless.status).toBe(202);
    const transactionId = String(keyless.body.transactionId);
    const before = await countDocs('recoveries', { accountId: account.id });
    const keyed = await execute(stack.baseUrl, apiKey, recoverable({ idempotencyKey: transactionId }));
    expectDuplicate(keyed, transactionId);
    expect(keyed.body).toMatchObject({ existingStatus: 'unknown', existingRecovered: false });
    expect(await countDocs('recoveries', { accountId: account.id })).toBe(before);
    // The key was not claimed by the refused request, and any other key goes ahead.
    expect(
      (await execute(stack.baseUrl, apiKey, recoverable({ idempotencyKey: `order-${transactionId}` })))
        .status,
    ).toBe(200);
  });

  it('the same key on another account is a different recovery', async () => {
    const idempotencyKey = `order-${randomUUID()}`;
    const [a, b] = [await stack.createAccount(), await stack.createAccount()];
    expect((await execute(stack.baseUrl, a.apiKey, recoverable({ idempotencyKey }))).status).toBe(200);
    expect((await execute(stack.baseUrl, b.apiKey, recoverable({ idempotencyKey }))).status).toBe(200);
  });
});

describe('velocity: same card, amount and currency within 5 minutes', () => {
  it('is a 409 naming the first until 5 minutes have passed; other amounts and currencies go ahead', async () => {
    now = Date.now();
    const { apiKey } = await stack.createAccount();
    const card = { paymentMethodToken: freshToken(), amount: 1234, originalDeclineCode: 'try_again_later' };
    const first = await execute(stack.baseUrl, apiKey, card);
    expect(first.status).toBe(200);
    const firstId = String(first.body.transactionId);

    const again = await execute(stack.baseUrl, apiKey, { ...card, currency: 'usd' });
    expectDuplicate(again, firstId);
    expect(again.body).toMatchObject({ existingStatus: 'succeeded', existingRecovered: true });
    expect((await execute(stack.baseUrl, apiKey, { ...card, amount: 1235 })).status).toBe(200);
    expect((await execute(stack.baseUrl, apiKey, { ...card, currency: 'EUR' })).status).toBe(200);

    now += 4 * 60_000 + 59_000;
    expectDuplicate(await execute(stack.baseUrl, apiKey, card), firstId);

    now += 2_000; // 5 min 1 s after the first
    const after = await execute(stack.baseUrl, apiKey, card);
    expect(after.status).toBe(200);
    expect(after.body.transactionId).not.toBe(firstId);
    expectDuplicate(await execute(stack.baseUrl, apiKey, card), String(after.body.transactionId));

    // Four requests were accepted and charged once each; the refused ones charged nothing.
    expect(
      await stack.stores.db
        .collection('sandboxCharges')
        .countDocuments({ approved: true, token: card.paymentMethodToken }),
    ).toBe(4);
    expect(await countDocs(collections.recoveries, { paymentMethodToken: card.paymentMethodToken })).toBe(4);
  });

  it('a velocity 409 leaves the request’s idempotencyKey unclaimed, usable once the window passes', async () => {
    now = Date.now();
    const { apiKey } = await stack.createAccount();
    const card = recoverable();
    const first = await execute(stack.baseUrl, apiKey, card);
    expect(first.status).toBe(200);
    const idempotencyKey = `order-${randomUUID()}`;
    expectDuplicate(
      await execute(stack.baseUrl, apiKey, { ...card, idempotencyKey }),
      String(first.body.transactionId),
    );
    const lookup = await call(stack.baseUrl, 'GET', `/api/recovery/status?idempotencyKey=${idempotencyKey}`, {
      key: apiKey,
    });
    expect(lookup.status).toBe(404);

    now += 5 * 60_000 + 1_000;
    const later = await execute(stack.baseUrl, apiKey, { ...card, idempotencyKey });
    expect(later.status).toBe(200);
  });

  it('simultaneous requests for one card and amount: exactly one proceeds, also after the window expired', async () => {
    now = Date.now();
    const { apiKey } = await stack.createAccount();
    const card = recoverable();
    for (const round of [1, 2]) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, () => execute(stack.baseUrl, apiKey, card)),
      );
      expect(tally(answers)).toEqual({ 200: 1, 409: 9 });
      expect(
        await stack.stores.db
          .collection('sandboxCharges')
          .countDocuments({ approved: true, token: card.paymentMethodToken }),
      ).toBe(round);
      now += 5 * 60_000 + 1_000;
    }
  });
});

/** A second API process on the same database: its own MongoDB connection, the same Temporal. */
async function startSecondApi(): Promise<{ baseUrl: string; close: () => Promise<void> }> {
  const { client, db } = await connectMongo(`${inject('mongoUri')}${stack.stores.db.databaseName}`);
  const stores = createStores(db, randomBytes(32));
  const app = createApp({
    log: createLogger('silent', 'test-second-api'),
    stores,
    temporal: stack.temporal,
    queues: stack.queues,
    publicBaseUrl: 'http://127.0.0.1',
    clock,
    events: stack.events,
  });
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => closeBoth(server, client),
  };
}

async function closeBoth(server: Server, client: MongoClient): Promise<void> {
  await new Promise((resolve) => server.close(resolve));
  await client.close();
}

describe('rate limit: 60 execute calls per minute per key', () => {
  // Invalid bodies (400) keep these tests fast: every authenticated execute call counts.
  const invalid = { amount: 1 };

  it('the 61st call in a minute is a 429 with retryAfter and Retry-After; the next minute is open again', async () => {
    midMinute();
    const { apiKey } = await stack.createAccount();
    const first60 = await Promise.all(
      Array.from({ length: 60 }, () => execute(stack.baseUrl, apiKey, invalid)),
    );
    expect(tally(first60)).toEqual({ 400: 60 });

    const recoveriesBefore = await countDocs(collections.recoveries);
    const limited = await execute(stack.baseUrl, apiKey, recoverable());
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ error: anyString, retryAfter: '30' });
    expect(limited.headers.get('retry-after')).toBe('30');
    expect(await countDocs(collections.recoveries)).toBe(recoveriesBefore);

    const other = await stack.createAccount();
    expect((await execute(stack.baseUrl, other.apiKey, invalid)).status).toBe(400);
    const lookup = await call(stack.baseUrl, 'GET', `/api/recovery/status/${randomUUID()}`, { key: apiKey });
    expect(lookup.status).toBe(404);

    now += 30_000; // the next minute
    expect((await execute(stack.baseUrl, apiKey, invalid)).status).toBe(400);
  });

  it('is exact across two API processes on one database: 61 calls → 60 served, one 429', async () => {
    midMinute();
    const { apiKey } = await stack.createAccount();
    const second = await startSecondApi();
    try {
      const answers = await Promise.all(
        Array.from({ length: 61 }, (_, i) =>
          execute(i % 2 ? second.baseUrl : stack.baseUrl, apiKey, invalid),
        ),
      );
      expect(tally(answers)).toEqual({ 400: 60, 429: 1 });
      expect((await execute(second.baseUrl, apiKey, invalid)).status).toBe(429);
      expect((await execute(stack.baseUrl, apiKey, invalid)).status).toBe(429);
    } finally {
      await second.close();
    }
  });

  it('an account with rateLimitPerMinute 100 gets 100 calls, then 429', async () => {
    midMinute();
    const { apiKey } = await stack.createAccount({ rateLimitPerMinute: 100 });
    const answers = await Promise.all(
      Array.from({ length: 100 }, () => execute(stack.baseUrl, apiKey, invalid)),
    );
    expect(tally(answers)).toEqual({ 400: 100 });
    expect((await execute(stack.baseUrl, apiKey, invalid)).status).toBe(429);
  });

  it('is counted apart from the other limited routes: with execute at its limit, a webhook test and a paywall lookup still go ahead', async () => {
    midMinute();
    // Execute's limit as high as the paywall's (120), so one count shared by the routes would refuse both.
    const { apiKey } = await stack.createAccount({ rateLimitPerMinute: 120 });
    const spent = await Promise.all(
      Array.from({ length: 120 }, () => execute(stack.baseUrl, apiKey, invalid)),
    );
    expect(tally(spent)).toEqual({ 400: 120 });
    expect((await execute(stack.baseUrl, apiKey, invalid)).status).toBe(429);

    const test = await call(stack.baseUrl, 'POST', '/api/events/test', { key: apiKey, body: {} });
    expect([200, 202]).toContain(test.status);
    const paywall = await call(
      stack.baseUrl,
      'GET',
      '/api/recovery/paywall-status?customerEmail=limits%40example.com',
      { key: apiKey },
    );
    expect(paywall.status).toBe(200);
    expect(paywall.body).toMatchObject({ isPastDue: false });
  });
});

describe('order of checks: key → rate limit → body', () => {
  const badBodies: Array<[string, { raw: string; contentType: string }]> = [
    [
      'invalid fields',
      { raw: JSON.stringify({ amount: 1, idempotencykey: 'x' }), contentType: 'application/json' },
    ],
    ['malformed JSON', { raw: '{"amount": ', contentType: 'application/json' }],
    ['a non-JSON content type', { raw: 'amount=1', contentType: 'text/plain' }],
    [
      'a body over 64 KiB',
      { raw: JSON.stringify({ pad: 'x'.repeat(64 * 1024) }), contentType: 'application/json' },
    ],
  ];
  const send = (key: string | undefined, bad: { raw: string; contentType: string }) =>
    call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      ...(key ? { key } : {}),
      raw: bad.raw,
      headers: { 'Content-Type': bad.contentType },
    });

  it.each(badBodies)('%s without a key → 401, not a body error', async (_label, bad) => {
    const res = await send(undefined, bad);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'Missing or invalid API key' });
  });

  it.each(badBodies)('%s on a rate-limited key → 429, not a body error', async (_label, bad) => {
    midMinute();
    const { apiKey } = await stack.createAccount();
    const spent = await Promise.all(
      Array.from({ length: 60 }, () => execute(stack.baseUrl, apiKey, { amount: 1 })),
    );
    expect(tally(spent)).toEqual({ 400: 60 });
    const res = await send(apiKey, bad);
    expect(res.status).toBe(429);
    expect(res.body).toEqual({ error: anyString, retryAfter: '30' });
  });
});
