import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maxFootprintRounds } from '../services/customer-footprint.js';
import { collections } from '../store/collections.js';
import { cliEnvOf, runCli, type CliRun } from './support/cli.js';
import { poll } from './support/poll.js';
import { call, startStack, type Stack } from './support/stack.js';

// A named database and master key, so the real `recoup` executable works on the stack's data.
const dbName = `cr_${randomBytes(4).toString('hex')}`;
const masterKey = randomBytes(32);
let stack: Stack;
let keys: Awaited<ReturnType<Stack['createAccount']>>;

const recoup = (...args: string[]): Promise<CliRun> => runCli(args, cliEnvOf(stack, masterKey));

beforeAll(async () => {
  stack = await startStack({ dbName, masterKey });
  keys = await stack.createAccount();
});
afterAll(() => stack.close());

describe('POST /api/recovery/pulse', () => {
  it('logs an organic success and answers a service-assigned transactionId', async () => {
    const res = await call(stack.baseUrl, 'POST', '/api/recovery/pulse', {
      key: keys.apiKey,
      body: { amount: 1999, currency: 'eur', transactionId: 'ch_1' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      message: 'Organic success logged',
      transactionId: expect.stringMatching(/^pulse_[0-9a-f]{32}$/),
    });
    const again = await call(stack.baseUrl, 'POST', '/api/recovery/pulse', {
      key: keys.apiKey,
      body: { amount: 1999, currency: 'EUR', transactionId: 'ch_1' },
    });
    expect(again.body.transactionId).toBe(res.body.transactionId);
    expect(await stack.stores.db.collection('pulses').countDocuments({ merchantTransactionId: 'ch_1' })).toBe(
      1,
    );
  });

  it('gives each pulse without a merchant id its own record', async () => {
    const a = await call(stack.baseUrl, 'POST', '/api/recovery/pulse', {
      key: keys.apiKey,
      body: { amount: 500 },
    });
    const b = await call(stack.baseUrl, 'POST', '/api/recovery/pulse', {
      key: keys.apiKey,
      body: { amount: 500 },
    });
    expect(a.body.transactionId).not.toBe(b.body.transactionId);
  });

  it.each([
    [{}, 'amount'],
    [{ amount: 49 }, 'amount'],
    [{ amount: 500, currency: 'XXQ' }, 'currency'],
    [{ amount: 500, transactionId: 'x'.repeat(129) }, 'transactionId'],
    [{ amount: 500, customerEmail: 'nope' }, 'customerEmail'],
    [{ amount: 500, surprise: true }, 'surprise'],
    [{ amount: 500, occurredAt: '2099-01-01T00:00:00Z' }, 'occurredAt'],
  ])('refuses %j with 400 naming %s, logging nothing', async (body, field) => {
    const before = await stack.stores.db.collection('pulses').countDocuments({});
    const res = await call(stack.baseUrl, 'POST', '/api/recovery/pulse', { key: keys.apiKey, body });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.details as object)).toContain(field);
    expect(await stack.stores.db.collection('pulses').countDocuments({})).toBe(before);
  });

  it('takes an occurredAt up to 5 minutes ahead (clock skew) and refuses one further ahead with 400', async () => {
    const ahead = (minutes: number) =>
      call(stack.baseUrl, 'POST', '/api/recovery/pulse', {
        key: keys.apiKey,
        body: { amount: 500, occurredAt: new Date(Date.now() + minutes * 60_000).toISOString() },
      });
    expect((await ahead(4)).status).toBe(200);
    const refused = await ahead(6);
    expect(refused).toMatchObject({
      status: 400,
      body: { error: 'Validation failed', details: { occurredAt: [expect.stringContaining('5 minutes')] } },
    });
  });

  it('takes an occurredAt written with a UTC offset and stores the instant it names', async () => {
    // An hour ago, written as a clock two hours ahead of UTC shows it.
    const at = new Date(Math.floor(Date.now() / 1000) * 1000 - 3_600_000);
    const occurredAt = `${new Date(at.getTime() + 2 * 3_600_000).toISOString().slice(0, 19)}+02:00`;
    const res = await call(stack.baseUrl, 'POST', '/api/recovery/pulse', {
      key: keys.apiKey,
      body: { amount: 650, transactionId: 'ch_offset', occurredAt },
    });
    expect(res).toMatchObject({ status: 200, body: { success: true } });
    const stored = await stack.stores.db.collection('pulses').findOne({ merchantTransactionId: 'ch_offset' });
    expect(stored?._id).toBe(res.body.transactionId);
    expect(stored?.occurredAt).toEqual(at);
  });

  it('needs the secret key', async () => {
    const res = await call(stack.baseUrl, 'POST', '/api/recovery/pulse', {
      key: keys.publishableKey,
      body: { amount: 500 },
    });
    expect(res.status).toBe(401);
  });
});

describe('POST /api/recovery/pulse naming the failure it pays (paysTransactionId)', () => {
  const pulse = (apiKey: string, body: Record<string, unknown>) =>
    call(stack.baseUrl, 'POST', '/api/recovery/pulse', { key: apiKey, body: { amount: 1800, ...body } });
  const paywallOf = async (publishableKey: string, customerEmail: string) =>
    (
      await call(
        stack.baseUrl,
        'GET',
        `/api/recovery/paywall-status?customerEmail=${encodeURIComponent(customerEmail)}`,
        { key: publishableKey },
      )
    ).body;
  const logged = { success: true, message: 'Organic success logged' };

  it('settles a Proof Mode control: the customer paid it, so they are no longer past due', async () => {
    const proof = await stack.createAccount({ proofMode: { enabled: true, controlPercent: 50 } });
    // Drawn at random per customer: the first control found (each its own amount: the same card and amount
    // again within minutes is refused as a duplicate).
    let control: { email: string; transactionId: string } | null = null;
    for (let i = 0; control === null && i < 40; i += 1) {
      const email = `named-control${i}@example.com`;
      const res = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
        key: proof.apiKey,
        body: {
          customerEmail: email,
          paymentMethodToken: 'tok_visa',
          amount: 1800 + i,
          originalDeclineCode: 'insufficient_funds',
        },
      });
      expect([200, 202]).toContain(res.status);
      if (res.body.holdout === true) control = { email, transactionId: String(res.body.transactionId) };
    }
    expect(control).not.toBeNull();
    expect(await paywallOf(proof.publishableKey, control!.email)).toMatchObject({ isPastDue: true });

    const res = await pulse(proof.apiKey, {
      customerEmail: control!.email,
      paysTransactionId: control!.transactionId,
    });
    expect(res).toMatchObject({ status: 200, body: logged });
    expect(await paywallOf(proof.publishableKey, control!.email)).toMatchObject({
      isPastDue: false,
      failedPaymentCount: 0,
    });
    // Its outcome stands (a control, no attempt); the payment is recorded paid on the customer's own.
    const doc = await stack.stores.recoveries.find(proof.account.id, control!.transactionId);
    expect(doc).toMatchObject({ state: 'holdout', attempts: [] });
    expect(doc?.paidOnTheirOwnAt).toBeInstanceOf(Date);
  });

  it('stops a queued recovery as paid elsewhere: no further attempt', async () => {
    const email = 'named-queued@example.com';
    const queued = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: keys.apiKey,
      body: {
        customerEmail: email,
        paymentMethodToken: 'tok_decline_insufficient_funds',
        amount: 1800,
        originalDeclineCode: 'insufficient_funds',
      },
    });
    expect(queued.body).toMatchObject({ status: 'queued' });
    const transactionId = String(queued.body.transactionId);
    const before = await stack.stores.recoveries.find(keys.account.id, transactionId);

    const res = await pulse(keys.apiKey, { customerEmail: email, paysTransactionId: transactionId });
    expect(res).toMatchObject({ status: 200, body: logged });
    const after = await stack.stores.recoveries.find(keys.account.id, transactionId);
    expect(after).toMatchObject({ state: 'paid_elsewhere', recoveredAt: null });
    expect(after!.attempts).toHaveLength(before!.attempts.length);
    // The workflow ended: it makes no further attempt.
    const { status } = await stack.temporal.workflow.getHandle(before!.workflowId).describe();
    expect(status.name).toBe('COMPLETED');
    expect(await paywallOf(keys.publishableKey, email)).toMatchObject({ isPastDue: false });
    const status200 = await call(stack.baseUrl, 'GET', `/api/recovery/status/${transactionId}`, {
      key: keys.apiKey,
    });
    expect(status200.body).toMatchObject({ status: 'succeeded', state: 'paid_elsewhere', recovered: false });
  });

  it('leaves a recovery Recoup collected as it is, and still logs the pulse', async () => {
    const recovered = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: keys.apiKey,
      body: { paymentMethodToken: 'tok_visa', amount: 1800, originalDeclineCode: 'try_again_later' },
    });
    expect(recovered.body).toMatchObject({ success: true });
    const transactionId = String(recovered.body.transactionId);
    const before = await stack.stores.recoveries.find(keys.account.id, transactionId);

    const res = await pulse(keys.apiKey, {
      transactionId: 'ch_named_recovered',
      paysTransactionId: transactionId,
    });
    expect(res).toMatchObject({ status: 200, body: logged });
    const after = await stack.stores.recoveries.find(keys.account.id, transactionId);
    expect(after).toEqual(before);
    expect(after).toMatchObject({ state: 'succeeded' });
    expect(
      await stack.stores.db.collection('pulses').findOne({ merchantTransactionId: 'ch_named_recovered' }),
    ).toMatchObject({ paysTransactionId: before!._id });
  });
});

describe('GET /api/recovery/paywall-status', () => {
  const email = 'Pat@Example.com';
  const path = `/api/recovery/paywall-status?customerEmail=${encodeURIComponent(email)}`;

  it('is not past due for a customer with no failures', async () => {
    const res = await call(stack.baseUrl, 'GET', path, { key: keys.publishableKey });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      isPastDue: false,
      totalOwedCents: 0,
      currency: 'USD',
      failedPaymentCount: 0,
      oldestFailureAt: null,
      byCurrency: {},
    });
  });

  it('sums unrecovered failures (queued, failed, blocked) and ignores recovered ones, in the oldest failure’s currency', async () => {
    const execute = (body: Record<string, unknown>) =>
      call(stack.baseUrl, 'POST', '/api/recovery/execute', {
        key: keys.apiKey,
        body: { customerEmail: email, ...body },
      });
    expect(
      (
        await execute({
          paymentMethodToken: 'tok_visa',
          amount: 1500,
          originalDeclineCode: 'insufficient_funds',
        })
      ).status,
    ).toBe(202);
    expect(
      (
        await execute({
          paymentMethodToken: 'tok_stolen',
          amount: 700,
          currency: 'EUR',
          originalDeclineCode: 'fraudulent',
        })
      ).status,
    ).toBe(403);
    expect(
      (await execute({ paymentMethodToken: 'tok_visa', amount: 900, originalDeclineCode: 'try_again_later' }))
        .status,
    ).toBe(200);
    const res = await call(stack.baseUrl, 'GET', path, { key: keys.publishableKey });
    expect(res.body).toMatchObject({
      isPastDue: true,
      totalOwedCents: 1500,
      currency: 'USD',
      failedPaymentCount: 2,
      byCurrency: { USD: 1500, EUR: 700 },
    });
    expect(Date.parse(String(res.body.oldestFailureAt))).toBeLessThanOrEqual(Date.now());
    const secret = await call(stack.baseUrl, 'GET', path, { key: keys.apiKey });
    expect(secret.body).toEqual(res.body);
  });

  it('counts a Proof Mode control and a payment whose gateway answer is unknown as past due', async () => {
    const proof = await stack.createAccount({ proofMode: { enabled: true, controlPercent: 50 } });
    const owes = async (customerEmail: string) =>
      (
        await call(
          stack.baseUrl,
          'GET',
          `/api/recovery/paywall-status?customerEmail=${encodeURIComponent(customerEmail)}`,
          { key: proof.publishableKey },
        )
      ).body;
    // Drawn at random per customer: half of them are controls, left alone and still owing.
    let control: { email: string; amount: number } | null = null;
    for (let i = 0; control === null && i < 40; i += 1) {
      const customer = { email: `control${i}@example.com`, amount: 1200 + i };
      const res = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
        key: proof.apiKey,
        body: {
          customerEmail: customer.email,
          paymentMethodToken: 'tok_visa',
          amount: customer.amount,
          originalDeclineCode: 'insufficient_funds',
        },
      });
      expect([200, 202]).toContain(res.status);
      if (res.body.holdout === true) control = customer;
    }
    expect(control).not.toBeNull();
    expect(await owes(control!.email)).toMatchObject({
      isPastDue: true,
      totalOwedCents: control!.amount,
      failedPaymentCount: 1,
    });

    // The gateway failed before charging: the outcome is unknown until reconciled, and the payment owed.
    const unknown = 'unknown@example.com';
    const ambiguous = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: keys.apiKey,
      body: {
        customerEmail: unknown,
        paymentMethodToken: 'tok_server_error',
        amount: 1300,
        originalDeclineCode: 'try_again_later',
      },
    });
    expect(ambiguous.body).toMatchObject({ status: 'unknown' });
    const res = await call(
      stack.baseUrl,
      'GET',
      `/api/recovery/paywall-status?customerEmail=${encodeURIComponent(unknown)}`,
      { key: keys.publishableKey },
    );
    expect(res.body).toMatchObject({ isPastDue: true, totalOwedCents: 1300, failedPaymentCount: 1 });
  });

  it('is open to browsers: CORS on answers and errors, and a preflight', async () => {
    const ok = await call(stack.baseUrl, 'GET', path, { key: keys.publishableKey });
    expect(ok.headers.get('access-control-allow-origin')).toBe('*');
    const denied = await call(stack.baseUrl, 'GET', path, { key: 'pk_wrong' });
    expect(denied.status).toBe(401);
    expect(denied.headers.get('access-control-allow-origin')).toBe('*');
    const preflight = await fetch(stack.baseUrl + path, {
      method: 'OPTIONS',
      headers: {
        Origin: 'https://shop.example',
        'Access-Control-Request-Method': 'GET',
        'Access-Control-Request-Headers': 'x-api-key',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')).toContain('X-API-KEY');
  });

  it.each(['', '?customerEmail=', '?customerEmail=not-an-email', '?email=pat@example.com'])(
    'answers 400 for %s',
    async (query) => {
      const res = await call(stack.baseUrl, 'GET', `/api/recovery/paywall-status${query}`, {
        key: keys.publishableKey,
      });
      expect(res.status).toBe(400);
      expect(res.body).toHaveProperty('details');
    },
  );

  it('allows 120 lookups a minute per key, then 429', async () => {
    // A clock fixed inside one minute, so the window cannot roll over during the test.
    const fixed = await startStack({ worker: false, clock: () => new Date('2026-06-01T12:00:10Z') });
    try {
      const own = await fixed.createAccount();
      const statuses: number[] = [];
      for (let i = 0; i < 121; i += 1)
        statuses.push((await call(fixed.baseUrl, 'GET', path, { key: own.publishableKey })).status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(120);
      expect(statuses.at(-1)).toBe(429);
    } finally {
      await fixed.close();
    }
  });

  it('counts the publishable key’s lookups apart from the secret key’s: one key at its limit leaves the other open', async () => {
    // A clock fixed inside one minute, so the window cannot roll over during the test.
    const fixed = await startStack({ worker: false, clock: () => new Date('2026-06-01T12:00:20Z') });
    try {
      const own = await fixed.createAccount();
      const lookup = (key: string) => call(fixed.baseUrl, 'GET', path, { key });
      const spent = await Promise.all(Array.from({ length: 120 }, () => lookup(own.publishableKey)));
      expect(spent.every((res) => res.status === 200)).toBe(true);
      expect((await lookup(own.publishableKey)).status).toBe(429);
      const secret = await lookup(own.apiKey);
      expect(secret.status).toBe(200);
      expect(secret.body).toMatchObject({ isPastDue: false });
    } finally {
      await fixed.close();
    }
  });
});

describe('a customer whose identifiers tie together the records of more than one customer', () => {
  let clientId: string;
  let apiKey: string;
  let transactionIds: string[];
  let eventIds: string[];

  /** What an erasure would replace in each recovery of the chain, as it is now. */
  const personalFields = () =>
    Promise.all(
      transactionIds.map(async (id) => {
        const doc = await stack.stores.recoveries.find(clientId, id);
        return [doc?.customerEmail, doc?.paymentMethodToken, doc?.cardKey, doc?.request];
      }),
    );

  /** Nothing was erased: every recovery as before, no erasure begun, every webhook event still there. */
  async function expectUnchanged(before: Awaited<ReturnType<typeof personalFields>>) {
    const after = await personalFields();
    expect(after).toEqual(before);
    expect(after[0]?.slice(0, 2)).toEqual(['chain0@example.com', 'tok_chain_0']);
    expect(await stack.stores.db.collection(collections.erasures).countDocuments()).toBe(0);
    const events = await stack.stores.events.list({ accountId: clientId, limit: 100 });
    expect(events.map((e) => e._id)).toEqual(expect.arrayContaining(eventIds));
  }

  // Recoveries tied one to the next, alternately by a shared card and a shared email: (chain0, card 0),
  // (chain1, card 0), (chain1, card 1), (chain2, card 1)… Each look from chain0 finds one more, so the
  // footprint would need one look more than the chain is long, and stops at maxFootprintRounds.
  beforeAll(async () => {
    const created = await stack.createAccount();
    clientId = created.account.id;
    apiKey = created.apiKey;
    transactionIds = [];
    for (let k = 0; k <= maxFootprintRounds; k += 1) {
      const res = await call<{ transactionId: string }>(stack.baseUrl, 'POST', '/api/recovery/execute', {
        key: apiKey,
        body: {
          customerEmail: `chain${Math.ceil(k / 2)}@example.com`,
          paymentMethodToken: `tok_chain_${Math.floor(k / 2)}`,
          originalDeclineCode: 'try_again_later',
          amount: 2000 + k,
        },
      });
      expect(res.status).toBe(200);
      transactionIds.push(res.body.transactionId);
    }
    const events = await poll(
      () => stack.stores.events.list({ accountId: clientId, limit: 100 }),
      (found) => found.length >= transactionIds.length,
    );
    expect(events.length).toBeGreaterThanOrEqual(transactionIds.length);
    eventIds = events.map((e) => e._id);
  });

  it('export and erasure answer 409 customer footprint too wide, and change nothing', async () => {
    const before = await personalFields();
    for (const path of ['/api/customers/export', '/api/customers/erase']) {
      const res = await call(stack.baseUrl, 'POST', path, {
        key: apiKey,
        body: { customerEmail: 'chain0@example.com' },
      });
      expect(res.status, path).toBe(409);
      expect(res.body, path).toEqual({
        error: 'Customer footprint too wide',
        message: expect.stringContaining('records of more than one customer'),
      });
      expect(res.body.message).toContain('Nothing was read out or changed');
    }
    await expectUnchanged(before);
  });

  it('is declared in the OpenAPI document of both routes', async () => {
    const doc = await call<{ paths: Record<string, { post?: { responses: Record<string, unknown> } }> }>(
      stack.baseUrl,
      'GET',
      '/api/openapi.json',
    );
    for (const path of ['/api/customers/export', '/api/customers/erase'])
      expect(JSON.stringify(doc.body.paths[path]?.post?.responses[409]), path).toContain(
        'Customer footprint too wide',
      );
  });

  it('recoup customers export and erase refuse it with exit 1, and change nothing', async () => {
    const before = await personalFields();
    for (const command of ['export', 'erase']) {
      const run = await recoup('customers', command, clientId, '--email', 'chain0@example.com');
      expect(run.code, command).toBe(1);
      expect(run.stdout, command).toBe('');
      expect(run.stderr, command).toContain('records of more than one customer');
      expect(run.stderr, command).toContain('nothing was read out or changed');
    }
    await expectUnchanged(before);
  });
});
