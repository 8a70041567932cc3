import { request } from 'node:http';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collections } from '../store/collections.js';
import { call, startStack, type JsonResponse, type Stack } from './support/stack.js';

let stack: Stack;
let created: Awaited<ReturnType<Stack['createAccount']>>;
let key: string;
let publishableKey: string;
let n = 0;

/** A fresh token per request keeps the 5-minute velocity rule and per-card budgets out of these tests. */
const freshToken = () => `tok_validation_${(n += 1)}`;
/** A request the engine recovers at once (200), unless the test changes it. */
const validBody = (extra: Record<string, unknown> = {}) => ({
  paymentMethodToken: freshToken(),
  amount: 1000,
  originalDeclineCode: 'try_again_later',
  ...extra,
});

const execute = (body: unknown, opts: { key?: string } = {}) =>
  call(stack.baseUrl, 'POST', '/api/recovery/execute', { key, ...opts, body });

/** What execute leaves behind: recoveries, idempotency claims and velocity claims. */
async function footprint() {
  const { db } = stack.stores;
  const count = (name: string) => db.collection(name).countDocuments();
  return {
    recoveries: await count(collections.recoveries),
    idempotencyKeys: await count(collections.idempotencyKeys),
    velocity: await count(collections.velocity),
  };
}

const anyString = expect.any(String) as string;
const matching = (pattern: RegExp): string => expect.stringMatching(pattern) as string;

/** Asserts the spec's validation body naming exactly `fields`. */
function expectValidationError(res: JsonResponse, fields: string[]) {
  expect(res.status).toBe(400);
  expect(Object.keys(res.body).sort()).toEqual(['details', 'error']);
  expect(res.body.error).toEqual(anyString);
  const details = res.body.details as Record<string, unknown>;
  expect(Object.keys(details).sort()).toEqual([...fields].sort());
  for (const messages of Object.values(details)) {
    expect(Array.isArray(messages) && messages.length > 0).toBe(true);
    expect((messages as unknown[]).every((m) => typeof m === 'string' && m.length > 0)).toBe(true);
  }
}

/** Sends a request that must be refused with 400 naming `fields`, and checks nothing was created. */
async function expectRejected(body: unknown, fields: string[]) {
  const before = await footprint();
  const res = await execute(body);
  expectValidationError(res, fields);
  expect(await footprint()).toEqual(before);
  return res;
}

/** Sends a request that must be recovered at once, and returns its stored recovery. */
async function expectRecovered(body: Record<string, unknown>) {
  const res = await execute(body);
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ success: true });
  const doc = await stack.stores.recoveries.find(created.account.id, String(res.body.transactionId));
  expect(doc).not.toBeNull();
  return { res, doc: doc! };
}

/** POSTs `text` in 16 KiB chunks with chunked transfer encoding, so the server sees no Content-Length. */
function postChunked(path: string, text: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${stack.baseUrl}${path}`,
      { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-API-KEY': key } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: body }));
      },
    );
    req.on('error', reject);
    for (let i = 0; i < text.length; i += 16 * 1024) req.write(text.slice(i, i + 16 * 1024));
    req.end();
  });
}

beforeAll(async () => {
  stack = await startStack();
  // This file sends more executes than the default 60 a minute; the limit is tested elsewhere.
  created = await stack.createAccount({ rateLimitPerMinute: 1000 });
  key = created.apiKey;
  publishableKey = created.publishableKey;
});
afterAll(() => stack.close());

describe('execute: amount', () => {
  it('accepts the smallest amount, 50', async () => {
    const { doc } = await expectRecovered(validBody({ amount: 50 }));
    expect(doc.amount).toBe(50);
  });

  it('accepts the largest amount, 100000000', async () => {
    const { doc } = await expectRecovered(validBody({ amount: 100_000_000 }));
    expect(doc.amount).toBe(100_000_000);
  });

  it.each([
    ['49, one below the minimum', 49],
    ['100000001, one above the maximum', 100_000_001],
    ['a fraction, 1000.5', 1000.5],
    ['a numeric string', '1000'],
    ['zero', 0],
    ['a negative amount', -1000],
    ['null', null],
  ])('refuses %s with 400 naming amount, creating nothing', async (_label, amount) => {
    await expectRejected(validBody({ amount }), ['amount']);
  });

  it('says a missing amount is required, and an amount of the wrong type what it must be', async () => {
    const { amount: _, ...noAmount } = validBody();
    const missing = await expectRejected(noAmount, ['amount']);
    expect(missing.body.details).toEqual({ amount: ['Required'] });
    for (const amount of ['1000', 1000.5]) {
      const wrong = await expectRejected(validBody({ amount }), ['amount']);
      expect(wrong.body.details).toEqual({ amount: ['must be an integer in the smallest currency unit'] });
    }
  });

  it.each([
    [49, 'must be at least 50'],
    [100_000_001, 'must be at most 100000000'],
  ])('refuses amount %s naming the bound it breaks', async (amount, message) => {
    const res = await expectRejected(validBody({ amount }), ['amount']);
    expect(res.body.details).toEqual({ amount: [message] });
  });
});

describe('execute: idempotencyKey and fallbacks', () => {
  it('accepts an idempotencyKey of 128 characters and stores it', async () => {
    const idempotencyKey = 'k'.repeat(128);
    const { doc } = await expectRecovered(validBody({ idempotencyKey }));
    expect(doc.idempotencyKey).toBe(idempotencyKey);
  });

  it('refuses an idempotencyKey of 129 characters, creating nothing (the key stays unclaimed)', async () => {
    const idempotencyKey = `${randomUUID()}-`.padEnd(129, 'x');
    await expectRejected(validBody({ idempotencyKey }), ['idempotencyKey']);
    const lookup = await call(
      stack.baseUrl,
      'GET',
      `/api/recovery/status?idempotencyKey=${idempotencyKey.slice(0, 128)}`,
      { key },
    );
    expect(lookup.status).toBe(404);
  });

  it('refuses an empty idempotencyKey', async () => {
    await expectRejected(validBody({ idempotencyKey: '' }), ['idempotencyKey']);
  });

  it('accepts 5 fallback tokens', async () => {
    const fallbacks = Array.from({ length: 5 }, freshToken);
    await expectRecovered(validBody({ fallbackPaymentMethodTokens: fallbacks }));
  });

  it('refuses U+0000 in a decline code, a key or a fallback token, naming each field, creating nothing', async () => {
    await expectRejected(
      validBody({
        originalDeclineCode: 'do_not\u0000honor',
        idempotencyKey: `nul\u0000${randomUUID()}`,
        fallbackPaymentMethodTokens: [freshToken(), `${freshToken()}\u0000`],
      }),
      ['originalDeclineCode', 'idempotencyKey', 'fallbackPaymentMethodTokens.1'],
    );
  });

  it('refuses 6 fallback tokens', async () => {
    const fallbacks = Array.from({ length: 6 }, freshToken);
    await expectRejected(validBody({ fallbackPaymentMethodTokens: fallbacks }), [
      'fallbackPaymentMethodTokens',
    ]);
  });
});

describe('execute: currency', () => {
  it('accepts lower-case eur and stores and reports it upper-case', async () => {
    const { res, doc } = await expectRecovered(validBody({ currency: 'eur' }));
    expect(doc.currency).toBe('EUR');
    const status = await call(
      stack.baseUrl,
      'GET',
      `/api/recovery/status/${String(res.body.transactionId)}`,
      { key },
    );
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ currency: 'EUR', amount: 1000, status: 'succeeded' });
  });

  it('defaults to USD', async () => {
    const { doc } = await expectRecovered(validBody());
    expect(doc.currency).toBe('USD');
  });

  it.each([['XCG'], ['ved'], ['ZWG']])(
    'accepts %s, a code ISO 4217 added since 2021, and stores it upper-case',
    async (currency) => {
      const { doc } = await expectRecovered(validBody({ currency }));
      expect(doc.currency).toBe(currency.toUpperCase());
    },
  );

  it.each([['USDX'], ['ZZZ'], ['US'], [''], [840]])(
    'refuses currency %j with 400 naming currency',
    async (currency) => {
      await expectRejected(validBody({ currency }), ['currency']);
    },
  );
});

describe('execute: other fields', () => {
  it.each([
    ['customerEmail', 'not-an-email'],
    ['customerEmail', 'a@'],
    ['customerEmail', '@b.c'],
    ['customerEmail', 'a b@c.d'],
    // Valid as given, too long once lower case (each İ is two characters then): events would refuse it.
    ['customerEmail', `${'İ'.repeat(40)}${'a'.repeat(20)}@example.com`],
    ['binPrefix', '42424'],
    ['binPrefix', '4242424'],
    ['binPrefix', '42424a'],
    ['binPrefix', 424242],
    ['cardOrigin', 'USA'],
    ['cardOrigin', 'U'],
    ['cardOrigin', 'U1'],
    ['paymentMethodType', 'bitcoin'],
    ['paymentMethodType', 'Card'],
    ['simulateOutcome', 'maybe'],
    ['isTrialConversion', 'yes'],
    ['originalDeclineCode', ''],
    ['originalDeclineCode', 'd'.repeat(65)],
    ['paymentMethodToken', ''],
    ['paymentMethodToken', '   '],
    ['paymentMethodToken', `tok_${'a'.repeat(509)}`],
  ])('refuses %s = %j with 400 naming it', async (field, value) => {
    await expectRejected(validBody({ [field]: value }), [field]);
  });

  it('accepts an originalDeclineCode of 64 characters and stores it', async () => {
    const originalDeclineCode = 'd'.repeat(64);
    // A code the engine does not know: recovered at once or queued, either way taken in.
    const res = await execute(validBody({ originalDeclineCode }));
    expect([200, 202]).toContain(res.status);
    const doc = await stack.stores.recoveries.find(created.account.id, String(res.body.transactionId));
    expect(doc?.originalDeclineCode).toBe(originalDeclineCode);
  });

  it('accepts well-formed optional fields and normalises their case', async () => {
    const { doc } = await expectRecovered(
      validBody({
        customerEmail: 'Ada@Example.COM',
        binPrefix: '424242',
        cardOrigin: 'de',
        paymentMethodType: 'apple_pay',
      }),
    );
    expect(doc.customerEmail).toBe('ada@example.com');
  });

  it.each([['A&B@example.com'], ['a=b@example.com'], ['José@example.com'], ['user@Bücher.de']])(
    'accepts customerEmail %s, an address billing platforms store, in lower case',
    async (customerEmail) => {
      const { doc } = await expectRecovered(validBody({ customerEmail }));
      expect(doc.customerEmail).toBe(customerEmail.toLowerCase());
    },
  );

  it.each([
    ['currency', null, /expected string, received null/],
    ['binPrefix', 424242, /expected string, received number/],
    ['isTrialConversion', 'true', /expected boolean, received string/],
  ])('says what %s = %j must be, not that it is required', async (field, value, message) => {
    const res = await expectRejected(validBody({ [field]: value }), [field]);
    expect(res.body.details).toEqual({ [field]: [matching(message)] });
  });

  it('refuses an unknown field (a typo of idempotencyKey) naming it, so idempotency is never silently off', async () => {
    const res = await expectRejected(validBody({ idempotencykey: 'order-1' }), ['idempotencykey']);
    expect(res.body.details).toEqual({ idempotencykey: [matching(/unknown/i)] });
  });

  it.each([['constructor'], ['__proto__'], ['toString']])(
    'refuses an unknown field named %s with 400 naming it (not a 500)',
    async (field) => {
      const before = await footprint();
      const json = JSON.stringify(validBody()).replace(/}$/, `,"${field}":{"isTrialConversion":true}}`);
      const res = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
        key,
        raw: json,
        headers: { 'Content-Type': 'application/json' },
      });
      expectValidationError(res, [field]);
      expect(await footprint()).toEqual(before);
    },
  );

  it('refuses a token in another gateway kind’s shape (pm_123 on a test-gateway account)', async () => {
    const res = await expectRejected(validBody({ paymentMethodToken: 'pm_123' }), ['paymentMethodToken']);
    expect(res.body.details).toEqual({ paymentMethodToken: [matching(/tok_visa/)] });
  });

  it('names the one fallback token in the wrong shape by its position', async () => {
    await expectRejected(validBody({ fallbackPaymentMethodTokens: [freshToken(), 'pm_123'] }), [
      'fallbackPaymentMethodTokens.1',
    ]);
  });

  it('checks the token shape of the account’s primary gateway kind (tok_visa on a stripe account)', async () => {
    const stripe = await stack.createAccount({}, [
      { name: 'stripe', kind: 'stripe', test: false, credentials: {} },
    ]);
    const before = await footprint();
    const res = await execute(validBody({ paymentMethodToken: 'tok_visa' }), { key: stripe.apiKey });
    expectValidationError(res, ['paymentMethodToken']);
    expect(await footprint()).toEqual(before);
  });

  it('checks the token shape of the primary gateway, not a backup’s (tok_visa on stripe with a test backup)', async () => {
    const stripeFirst = await stack.createAccount({}, [
      { name: 'stripe', kind: 'stripe', test: false, credentials: {} },
      { name: 'test', kind: 'test', test: true, credentials: {} },
    ]);
    const before = await footprint();
    const res = await execute(validBody({ paymentMethodToken: 'tok_visa' }), { key: stripeFirst.apiKey });
    expectValidationError(res, ['paymentMethodToken']);
    expect(await footprint()).toEqual(before);
  });
});

describe('execute: the body as a whole', () => {
  it('refuses an empty body with 400 naming paymentMethodToken and amount', async () => {
    const before = await footprint();
    const res = await call(stack.baseUrl, 'POST', '/api/recovery/execute', { key });
    expectValidationError(res, ['amount', 'paymentMethodToken']);
    expect(res.body.details).toEqual({ amount: ['Required'], paymentMethodToken: ['Required'] });
    expect(await footprint()).toEqual(before);
  });

  it('refuses an empty JSON object the same way', async () => {
    await expectRejected({}, ['amount', 'paymentMethodToken']);
  });

  it('refuses a JSON array with 400 saying the body must be an object', async () => {
    const res = await expectRejected([validBody()], ['_']);
    expect(res.body.details).toEqual({ _: [matching(/expected object, received array/)] });
  });

  it('refuses malformed JSON with 400 and details', async () => {
    const before = await footprint();
    const res = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key,
      raw: '{"paymentMethodToken": "tok_visa", "amount": 1000,',
      headers: { 'Content-Type': 'application/json' },
    });
    expectValidationError(res, ['_']);
    expect(await footprint()).toEqual(before);
  });

  it('refuses a body that is not JSON with 415', async () => {
    const before = await footprint();
    const res = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key,
      raw: 'paymentMethodToken=tok_visa&amount=1000',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    expect(res.status).toBe(415);
    expect(res.body).toEqual({ error: anyString });
    expect(await footprint()).toEqual(before);
  });

  it('accepts a body of exactly 64 KiB', async () => {
    const json = JSON.stringify(validBody());
    const res = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key,
      raw: json.padEnd(64 * 1024, ' '),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(res.status).toBe(200);
  });

  it('refuses a body one byte over 64 KiB with 413, creating nothing', async () => {
    const before = await footprint();
    const json = JSON.stringify(validBody());
    const res = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key,
      raw: json.padEnd(64 * 1024 + 1, ' '),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ error: anyString });
    expect(await footprint()).toEqual(before);
  });

  it('refuses an over-long body sent without Content-Length (chunked) with 413', async () => {
    const before = await footprint();
    const res = await postChunked('/api/recovery/execute', JSON.stringify(validBody()).padEnd(200_000, ' '));
    expect(res.status).toBe(413);
    expect(JSON.parse(res.text)).toEqual({ error: anyString });
    expect(await footprint()).toEqual(before);
  });
});

describe('status lookups', () => {
  it('by idempotencyKey: a missing or empty key is a 400 naming idempotencyKey', async () => {
    for (const path of ['/api/recovery/status', '/api/recovery/status?idempotencyKey=']) {
      const res = await call(stack.baseUrl, 'GET', path, { key });
      expectValidationError(res, ['idempotencyKey']);
    }
  });

  it('by idempotencyKey: a key of 129 characters is a 400 naming idempotencyKey', async () => {
    const res = await call(stack.baseUrl, 'GET', `/api/recovery/status?idempotencyKey=${'k'.repeat(129)}`, {
      key,
    });
    expectValidationError(res, ['idempotencyKey']);
  });

  it('by idempotencyKey: a repeated key is a 400 saying it must be one string', async () => {
    const res = await call(stack.baseUrl, 'GET', '/api/recovery/status?idempotencyKey=a&idempotencyKey=b', {
      key,
    });
    expectValidationError(res, ['idempotencyKey']);
    expect(res.body.details).toEqual({ idempotencyKey: [matching(/expected string, received array/)] });
  });

  it('by idempotencyKey: an unknown query parameter is a 400 naming it', async () => {
    for (const param of ['idempotencykey', 'constructor']) {
      const res = await call(stack.baseUrl, 'GET', `/api/recovery/status?idempotencyKey=k&${param}=k`, {
        key,
      });
      expectValidationError(res, [param]);
    }
  });

  it('by idempotencyKey: finds the recovery, and an unknown key is 404', async () => {
    const idempotencyKey = `order-${randomUUID()}`;
    const { res } = await expectRecovered(validBody({ idempotencyKey }));
    const found = await call(stack.baseUrl, 'GET', `/api/recovery/status?idempotencyKey=${idempotencyKey}`, {
      key,
    });
    expect(found.status).toBe(200);
    expect(found.body).toMatchObject({ transactionId: res.body.transactionId, status: 'succeeded' });
    const missing = await call(stack.baseUrl, 'GET', `/api/recovery/status?idempotencyKey=${randomUUID()}`, {
      key,
    });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: anyString });
  });

  it('an unknown transactionId is 404 with an error', async () => {
    // An over-long id names no recovery either: 404 as the spec has it, not a 400.
    for (const id of [randomUUID(), `FAILED_API_${randomUUID()}`, 'not-a-uuid', 'x'.repeat(201)]) {
      const res = await call(stack.baseUrl, 'GET', `/api/recovery/status/${id}`, { key });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: anyString });
    }
  });

  it('another account’s transaction is 404, by id and by idempotencyKey', async () => {
    const idempotencyKey = `order-${randomUUID()}`;
    const { res } = await expectRecovered(validBody({ idempotencyKey }));
    const other = await stack.createAccount();
    const byId = await call(stack.baseUrl, 'GET', `/api/recovery/status/${String(res.body.transactionId)}`, {
      key: other.apiKey,
    });
    expect(byId.status).toBe(404);
    expect(byId.body).toEqual({ error: anyString });
    const byKey = await call(stack.baseUrl, 'GET', `/api/recovery/status?idempotencyKey=${idempotencyKey}`, {
      key: other.apiKey,
    });
    expect(byKey.status).toBe(404);
  });

  it('a synchronous failure answers FAILED_API_<uuid>; both forms find the same record', async () => {
    const res = await execute({
      paymentMethodToken: 'tok_decline_incorrect_cvc',
      amount: 1000,
      originalDeclineCode: 'incorrect_cvc',
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: false, strategyUsed: 'all_failed' });
    const failedId = String(res.body.transactionId);
    const uuid = failedId.replace(/^FAILED_API_/, '');
    expect(failedId).toBe(`FAILED_API_${uuid}`);
    expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const byFailedId = await call(stack.baseUrl, 'GET', `/api/recovery/status/${failedId}`, { key });
    const byUuid = await call(stack.baseUrl, 'GET', `/api/recovery/status/${uuid}`, { key });
    expect(byFailedId.status).toBe(200);
    expect(byUuid.status).toBe(200);
    expect(byUuid.body).toEqual(byFailedId.body);
    expect(byUuid.body).toMatchObject({ transactionId: failedId, status: 'failed', recovered: false });
  });
});

describe('authentication', () => {
  const wrongCredentials: Array<[string, () => Record<string, string>]> = [
    ['no key', () => ({})],
    ['a wrong key', () => ({ 'X-API-KEY': `sk_${'A'.repeat(43)}` })],
    ['the key as Authorization: Bearer', () => ({ Authorization: `Bearer ${key}` })],
    ['the key in X-Api-Token', () => ({ 'X-Api-Token': key })],
    ['the publishable key', () => ({ 'X-API-KEY': publishableKey })],
  ];
  /** A recovery that exists, so a 401 cannot be confused with a 404. */
  const existing = { transactionId: '', idempotencyKey: `order-${randomUUID()}` };
  beforeAll(async () => {
    const { res } = await expectRecovered(validBody({ idempotencyKey: existing.idempotencyKey }));
    existing.transactionId = String(res.body.transactionId);
  });

  it.each(wrongCredentials)('execute with %s is 401 and creates nothing', async (_label, headers) => {
    const before = await footprint();
    const res = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      headers: headers(),
      body: validBody(),
    });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'Missing or invalid API key' });
    expect(await footprint()).toEqual(before);
  });

  it.each(wrongCredentials)('status lookups with %s are 401', async (_label, headers) => {
    for (const path of [
      `/api/recovery/status/${existing.transactionId}`,
      `/api/recovery/status?idempotencyKey=${existing.idempotencyKey}`,
    ]) {
      const res = await call(stack.baseUrl, 'GET', path, { headers: headers() });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'Missing or invalid API key' });
    }
  });

  it('a rotated key stops working at once', async () => {
    const account = await stack.createAccount();
    await stack.stores.accounts.rotateKeys(account.account.id);
    const res = await execute(validBody(), { key: account.apiKey });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'Missing or invalid API key' });
  });
});
