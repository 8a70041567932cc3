import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayConfig } from '../domain/settings.js';
import { cliEnvOf, runCli } from './support/cli.js';
import { call, startStack, type Stack } from './support/stack.js';

const day = 86_400_000;
let stack: Stack;
const masterKey = randomBytes(32);
let offsetMs = 0;
let n = 0;
const amount = () => 5000 + (n += 1);

beforeAll(async () => {
  stack = await startStack({ masterKey, clock: () => new Date(Date.now() + offsetMs) });
});
afterAll(() => stack.close());

const execute = (apiKey: string, body: Record<string, unknown>) =>
  call(stack.baseUrl, 'POST', '/api/recovery/execute', { key: apiKey, body: { amount: amount(), ...body } });
const pulse = (apiKey: string, body: Record<string, unknown> = {}) =>
  call(stack.baseUrl, 'POST', '/api/recovery/pulse', { key: apiKey, body: { amount: 5000, ...body } });
const summary = (apiKey: string, query = '') =>
  call(stack.baseUrl, 'GET', `/api/reports/summary${query}`, { key: apiKey });
const breakdown = (apiKey: string, query = '') =>
  call(stack.baseUrl, 'GET', `/api/reports/breakdown${query}`, { key: apiKey });
const recoup = (...args: string[]) => runCli(['reports', ...args], cliEnvOf(stack, masterKey));

describe('GET /api/reports/summary', () => {
  it('counts the last 30 days: recovery rate, revenue, the organic baseline and lift', async () => {
    offsetMs = 0;
    const { apiKey } = await stack.createAccount();
    const recovered = await execute(apiKey, {
      paymentMethodToken: 'tok_visa',
      originalDeclineCode: 'try_again_later',
      amount: 2500,
    });
    const queued = await execute(apiKey, {
      paymentMethodToken: 'tok_decline_insufficient_funds',
      originalDeclineCode: 'insufficient_funds',
      amount: 4000,
    });
    expect([recovered.status, queued.status]).toEqual([200, 202]);
    await pulse(apiKey);
    await pulse(apiKey);
    const res = await summary(apiKey);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      failedPayments: 2,
      recovered: 1,
      inProgress: 1,
      recoveryRate: 0.5,
      revenueByCurrency: { USD: { failed: 6500, recovered: 2500 } },
      organicSuccesses: 2,
      organicSuccessRate: 0.5,
      successRateWithRecoup: 0.75,
      liftPoints: 25,
      proofMode: null,
    });
    // Failures outside the range are not counted.
    const before = await summary(
      apiKey,
      `?to=${encodeURIComponent(new Date(Date.now() - 60_000).toISOString())}`,
    );
    expect(before.body).toMatchObject({ failedPayments: 0, recovered: 0, organicSuccesses: 0 });
    // Another account sees none of it.
    const other = await stack.createAccount();
    expect((await summary(other.apiKey)).body).toMatchObject({ failedPayments: 0, organicSuccesses: 0 });
  });

  it('compares Proof Mode controls with treated payments once their 30 days are over', async () => {
    offsetMs = 0;
    const { apiKey } = await stack.createAccount({ proofMode: { enabled: true, controlPercent: 50 } });
    const holdouts: string[] = [];
    for (let i = 0; i < 16; i += 1) {
      const email = `customer${i}@example.com`;
      // Each customer's own card: one card charged more than 10 times a day would wait for the networks' cap.
      const res = await execute(apiKey, {
        paymentMethodToken: `tok_visa_${i}`,
        originalDeclineCode: 'try_again_later',
        customerEmail: email,
      });
      expect(res.status).toBe(200);
      if (res.body.holdout === true) holdouts.push(email);
      else expect(res.body).toMatchObject({ success: true, transactionId: expect.any(String) });
    }
    expect(holdouts.length).toBeGreaterThan(0);
    expect(holdouts.length).toBeLessThan(16);
    // Neither a payment blocked at intake nor one without a customer email takes part in the comparison.
    const blocked = await execute(apiKey, {
      paymentMethodToken: 'tok_mastercard',
      originalDeclineCode: 'stolen_card',
      customerEmail: 'blocked@example.com',
    });
    expect(blocked.status).toBe(403);
    const anonymous = await execute(apiKey, {
      paymentMethodToken: 'tok_card',
      originalDeclineCode: 'try_again_later',
    });
    const anonymousRecovered = anonymous.body.holdout === true ? 0 : 1;
    // Half the control customers pay on their own.
    const paid = holdouts.filter((_, i) => i % 2 === 0);
    for (const email of paid) await pulse(apiKey, { customerEmail: email });
    const watching = (await summary(apiKey)).body.proofMode as Record<string, unknown>;
    // Still inside their 30 days, collected or not, no payment is counted yet: the recovered ones and the
    // controls that paid at once would otherwise stand for their groups alone.
    expect(watching).toMatchObject({ treatment: 0, control: 0 });

    offsetMs = 31 * day;
    const from = new Date(Date.now() - day).toISOString();
    const res = await summary(apiKey, `?from=${encodeURIComponent(from)}`);
    expect(res.body.proofMode).toMatchObject({
      treatment: 16 - holdouts.length,
      control: holdouts.length,
      treatmentRate: 1,
      controlRate: Math.round((paid.length / holdouts.length) * 10_000) / 10_000,
      insufficientData: true,
    });
    // The pulses were those controls' own payments, already among the failures: none is organic.
    expect(res.body).toMatchObject({
      failedPayments: 18,
      recovered: 16 - holdouts.length + anonymousRecovered,
      organicSuccesses: 0,
    });
  });

  it('draws a failure on a card blocked on an earlier recovery into a group too: a control is held out, a treated one blocked and uncollected', async () => {
    offsetMs = 0;
    const settings = { proofMode: { enabled: true, controlPercent: 0 } };
    const { account, apiKey } = await stack.createAccount(settings);
    const token = 'tok_decline_lost_card';
    // A treated payment whose charge the issuer declines as lost: Recoup remembers the card as blocked. Only a
    // charge teaches that, and controls are never charged.
    const first = await execute(apiKey, {
      paymentMethodToken: token,
      originalDeclineCode: 'try_again_later',
      customerEmail: 'first-owner@example.com',
    });
    expect(first.status).toBe(403);
    await stack.stores.accounts.updateSettings(account.id, {
      ...account.settings,
      proofMode: { enabled: true, controlPercent: 50 },
    });
    const controls: string[] = [];
    const treated: string[] = [];
    for (let i = 0; i < 12; i += 1) {
      const email = `lost-card${i}@example.com`;
      const res = await execute(apiKey, {
        paymentMethodToken: token,
        originalDeclineCode: 'try_again_later',
        customerEmail: email,
      });
      if (res.body.holdout === true) {
        expect(res.body).toMatchObject({ success: false, strategyUsed: 'holdout' });
        controls.push(email);
      } else {
        // The risk screen blocks it before any charge.
        expect(res.status).toBe(403);
        expect(res.body.recommendation).toContain('blocked (lost_card) on an earlier recovery');
        treated.push(email);
      }
    }
    // Drawn per customer (chance of failing: 2 in 4096).
    expect(controls.length).toBeGreaterThan(0);
    expect(treated.length).toBeGreaterThan(0);
    expect(await stack.stores.sandbox.countForToken('test', token)).toBe(1);
    // One control customer pays on their own.
    await pulse(apiKey, { customerEmail: controls[0] });

    offsetMs = 31 * day;
    const from = encodeURIComponent(new Date(Date.now() - day).toISOString());
    expect((await summary(apiKey, `?from=${from}`)).body.proofMode).toMatchObject({
      treatment: 1 + treated.length,
      control: controls.length,
      treatmentRate: 0,
      controlRate: Math.round(10_000 / controls.length) / 10_000,
    });
  });

  it('counts a treated payment stopped as paid elsewhere as collected, like a control that paid on its own', async () => {
    offsetMs = 0;
    const { apiKey } = await stack.createAccount({ proofMode: { enabled: true, controlPercent: 0 } });
    const queued = await execute(apiKey, {
      paymentMethodToken: 'tok_decline_insufficient_funds',
      originalDeclineCode: 'insufficient_funds',
      customerEmail: 'elsewhere@example.com',
    });
    expect(queued.status).toBe(202);
    const stopped = await call(stack.baseUrl, 'POST', '/api/recovery/stop', {
      key: apiKey,
      body: { transactionId: queued.body.transactionId, reason: 'paid_elsewhere' },
    });
    expect(stopped.body).toMatchObject({ state: 'paid_elsewhere' });
    // Counted once its 30 days are over.
    expect((await summary(apiKey)).body.proofMode).toMatchObject({ treatment: 0, control: 0 });
    offsetMs = 31 * day;
    const from = encodeURIComponent(new Date(Date.now() - day).toISOString());
    expect((await summary(apiKey, `?from=${from}`)).body.proofMode).toMatchObject({
      treatment: 1,
      control: 0,
      treatmentRate: 1,
    });
  });

  it('does not count as organic the payment, pulsed in the next window, of a compared failure from before it', async () => {
    offsetMs = 0;
    const { apiKey } = await stack.createAccount({ proofMode: { enabled: true, controlPercent: 0 } });
    const queued = await execute(apiKey, {
      paymentMethodToken: 'tok_decline_insufficient_funds',
      originalDeclineCode: 'insufficient_funds',
      customerEmail: 'late-payer@example.com',
    });
    expect(queued.status).toBe(202);
    offsetMs = 12 * day;
    const inDays = (days: number) => new Date(Date.now() + days * day).toISOString();
    for (const occurredAt of [inDays(10), inDays(11)])
      await pulse(apiKey, { customerEmail: 'late-payer@example.com', occurredAt });
    // Days 5–15 hold no failure; of the customer's two pulses, the first is the day-0 failure's payment.
    const window = `?from=${encodeURIComponent(inDays(5))}&to=${encodeURIComponent(inDays(15))}`;
    expect((await summary(apiKey, window)).body).toMatchObject({
      failedPayments: 0,
      organicSuccesses: 1,
      proofMode: null,
    });
  });

  it('matches a pulse that names the failure it pays to that failure alone, and one that pays none to none', async () => {
    offsetMs = 0;
    const { apiKey } = await stack.createAccount({ proofMode: { enabled: true, controlPercent: 0 } });
    const fail = (customerEmail: string) =>
      execute(apiKey, {
        paymentMethodToken: 'tok_decline_insufficient_funds',
        originalDeclineCode: 'insufficient_funds',
        customerEmail,
      });
    const paid = await fail('named-payer@example.com');
    const unpaid = await fail('renewing@example.com');
    expect([paid.status, unpaid.status]).toEqual([202, 202]);
    // The first customer's payment, named; the second's renewal, which pays no failure: unnamed, it would be
    // taken as the payment of their unpaid failure.
    const named = await pulse(apiKey, {
      customerEmail: 'named-payer@example.com',
      paysTransactionId: paid.body.transactionId,
    });
    const renewal = await pulse(apiKey, { customerEmail: 'renewing@example.com', paysTransactionId: null });
    expect([named.status, renewal.status]).toEqual([200, 200]);
    // A failure the account does not have is refused, and nothing is logged.
    const other = await stack.createAccount();
    const elsewhere = await execute(other.apiKey, {
      paymentMethodToken: 'tok_visa',
      originalDeclineCode: 'try_again_later',
    });
    for (const paysTransactionId of [
      '3f1c9a52-4a8e-4b59-9d2c-0d1e2f3a4b5c',
      elsewhere.body.transactionId,
      '',
    ]) {
      const refused = await pulse(apiKey, { paysTransactionId });
      expect(refused.status).toBe(400);
      expect(Object.keys(refused.body.details as object)).toEqual(['paysTransactionId']);
    }
    expect((await summary(apiKey)).body).toMatchObject({ failedPayments: 2, organicSuccesses: 1 });

    offsetMs = 31 * day;
    const from = encodeURIComponent(new Date(Date.now() - day).toISOString());
    expect((await summary(apiKey, `?from=${from}`)).body).toMatchObject({
      organicSuccesses: 1,
      proofMode: { treatment: 2, control: 0, treatmentRate: 0.5 },
    });
  });

  it('counts a control its named pulse settled once, and that pulse nowhere else (not organic, not its sibling)', async () => {
    offsetMs = 0;
    const { account, apiKey } = await stack.createAccount({
      proofMode: { enabled: true, controlPercent: 50 },
    });
    const fail = (customerEmail: string) =>
      execute(apiKey, {
        paymentMethodToken: 'tok_visa',
        originalDeclineCode: 'try_again_later',
        customerEmail,
      });
    // Drawn per customer: the customers before the first control are treated (and recovered).
    let control: { email: string; transactionId: string } | null = null;
    let treated = 0;
    while (control === null && treated < 40) {
      const email = `settled-control${treated}@example.com`;
      const res = await fail(email);
      if (res.body.holdout === true) control = { email, transactionId: String(res.body.transactionId) };
      else treated += 1;
    }
    expect(control).not.toBeNull();
    // The same customer's second failure: a control too, which no pulse pays.
    expect((await fail(control!.email)).body).toMatchObject({ holdout: true });
    // The customer pays the first, naming it (which settles it as paid on their own); someone else pays on
    // the first try.
    const named = await pulse(apiKey, {
      customerEmail: control!.email,
      paysTransactionId: control!.transactionId,
    });
    expect(named.status).toBe(200);
    expect((await pulse(apiKey, { customerEmail: 'first-try@example.com' })).status).toBe(200);
    const settled = await stack.stores.recoveries.find(account.id, control!.transactionId);
    expect(settled?.paidOnTheirOwnAt).toBeInstanceOf(Date);
    expect((await summary(apiKey)).body).toMatchObject({ organicSuccesses: 1 });

    offsetMs = 31 * day;
    const from = encodeURIComponent(new Date(Date.now() - day).toISOString());
    expect((await summary(apiKey, `?from=${from}`)).body).toMatchObject({
      failedPayments: treated + 2,
      organicSuccesses: 1,
      proofMode: { treatment: treated, control: 2, controlRate: 0.5 },
    });
  });

  it.each([
    ['?from=2026-03-01T00:00:00Z&to=2026-02-01T00:00:00Z', 'to'],
    ['?from=2024-01-01T00:00:00Z&to=2026-01-01T00:00:00Z', 'to'],
    ['?from=yesterday', 'from'],
    ['?from=2024-01-01T00:00:00Z', 'from'],
    ['?from=2099-01-01T00:00:00Z', 'from'],
    ['?since=2026-01-01T00:00:00Z', 'since'],
  ])('%s is refused with 400 naming %s', async (query, field) => {
    const { apiKey } = await stack.createAccount();
    const res = await summary(apiKey, query);
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body.details)).toContain(field);
  });

  it('checks the window against the clock the report is computed with, and names a bad date alone', async () => {
    offsetMs = 31 * day;
    const { apiKey } = await stack.createAccount();
    // After the wall clock, but 21 days before the service's.
    const from = new Date(Date.now() + 10 * day).toISOString();
    const res = await summary(apiKey, `?from=${encodeURIComponent(from)}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ from, failedPayments: 0 });
    const bad = await summary(apiKey, '?from=yesterday');
    expect(bad.status).toBe(400);
    expect(bad.body.details).toEqual({ from: ['Invalid ISO datetime'] });
  });

  it('counts a pulse in the window its occurredAt falls in, not the one it was logged in', async () => {
    offsetMs = 0;
    const { apiKey } = await stack.createAccount();
    const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
    for (const occurredAt of [ago(40 * day), ago(day), ago(-3 * 60_000)])
      expect((await pulse(apiKey, { occurredAt })).status).toBe(200);
    // The last 30 days hold the one of yesterday: not the one 40 days ago, nor the one 3 minutes ahead.
    expect((await summary(apiKey)).body).toMatchObject({ organicSuccesses: 1 });
    const window = `?from=${encodeURIComponent(ago(45 * day))}&to=${encodeURIComponent(ago(35 * day))}`;
    const before = await summary(apiKey, window);
    expect(before.body).toMatchObject({ organicSuccesses: 1 });
  });

  it('needs the secret key', async () => {
    expect((await call(stack.baseUrl, 'GET', '/api/reports/summary')).status).toBe(401);
  });
});

describe('GET /api/reports/breakdown and recoup reports', () => {
  it('breaks the recovered revenue down by decline code, strategy, charges, days and gateway', async () => {
    offsetMs = 0;
    const gateways: GatewayConfig[] = [
      { name: 'main', kind: 'test', test: true, credentials: { declineAll: 'do_not_honor' } },
      { name: 'backup', kind: 'test', test: true, credentials: {} },
    ];
    const { account, apiKey } = await stack.createAccount({}, gateways);
    const clientId = account.id;
    const outcomes = [
      await execute(apiKey, {
        paymentMethodToken: 'tok_visa',
        originalDeclineCode: 'try_again_later',
        amount: 2500,
      }),
      await execute(apiKey, {
        paymentMethodToken: 'tok_visa',
        originalDeclineCode: 'Try Again Later',
        amount: 1500,
      }),
      await execute(apiKey, {
        paymentMethodToken: 'tok_visa',
        originalDeclineCode: 'fraudulent',
        amount: 900,
      }),
      await execute(apiKey, { paymentMethodToken: 'tok_mastercard', amount: 700, currency: 'EUR' }),
    ];
    expect(outcomes.map((o) => o.status)).toEqual([200, 200, 403, 202]);
    const res = await breakdown(apiKey);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      byDeclineCode: [
        {
          declineCode: 'try_again_later',
          group: 'recoverable',
          failedPayments: 2,
          recovered: 2,
          inProgress: 0,
          recoveryRate: 1,
          revenueByCurrency: { USD: { failed: 4000, recovered: 4000 } },
        },
        {
          declineCode: 'fraudulent',
          group: 'blocked',
          failedPayments: 1,
          recovered: 0,
          recoveryRate: 0,
          revenueByCurrency: { USD: { failed: 900, recovered: 0 } },
        },
        {
          declineCode: null,
          group: 'unknown',
          failedPayments: 1,
          recovered: 0,
          inProgress: 1,
          revenueByCurrency: { EUR: { failed: 700, recovered: 0 } },
        },
      ],
      byStrategy: [{ strategyUsed: 'backup_gateway', recovered: 2, recoveredByCurrency: { USD: 4000 } }],
      chargesToRecover: [{ attempts: 2, recovered: 2 }],
      daysToRecover: { recovered: 2 },
      byGateway: [
        { gateway: 'backup', attempts: 2, approved: 2, declined: 0, approvalRate: 1 },
        { gateway: 'main', attempts: 2, approved: 0, declined: 2, approvalRate: 0 },
      ],
    });
    expect(res.body.daysToRecover).toMatchObject({ p50: 0, p90: 0 }); // recovered at once

    // The operator's CLI prints the same report, and the summary the API gives.
    const cli = await recoup('breakdown', clientId, '--json');
    expect(cli.code).toBe(0);
    expect(JSON.parse(cli.stdout)).toMatchObject({
      ...res.body,
      from: expect.any(String),
      to: expect.any(String),
    });
    const table = await recoup('breakdown', clientId);
    expect(table.stdout).toMatch(/try_again_later\s+recoverable\s+2\s+2\s+100\.0 %\s+0\s+\$40\.00/);
    expect(table.stdout).toMatch(/backup_gateway\s+2\s+\$40\.00/);
    expect(table.stdout).toContain('(none given)');
    const summaryCli = await recoup('summary', clientId, '--json');
    const { from: _from, to: _to, ...figures } = (await summary(apiKey)).body;
    expect(JSON.parse(summaryCli.stdout)).toMatchObject(figures);
    expect((await recoup('summary', clientId)).stdout).toMatch(/recovered\s+2 \(50\.0 %\)/);

    // A window before these failures is empty; another account sees none of them.
    const before = `?to=${encodeURIComponent(new Date(Date.now() - 60_000).toISOString())}`;
    expect((await breakdown(apiKey, before)).body).toMatchObject({ byDeclineCode: [], byGateway: [] });
    const other = await stack.createAccount();
    expect((await breakdown(other.apiKey)).body).toMatchObject({ byDeclineCode: [], daysToRecover: null });
  });

  it('refuses a bad window with 400 (the CLI with exit 2), needs the secret key, and is in the OpenAPI document', async () => {
    const { account, apiKey } = await stack.createAccount();
    const clientId = account.id;
    const res = await breakdown(apiKey, '?from=2026-03-01T00:00:00Z&to=2026-02-01T00:00:00Z');
    expect(res.status).toBe(400);
    expect(res.body.details).toHaveProperty('to');
    expect((await call(stack.baseUrl, 'GET', '/api/reports/breakdown')).status).toBe(401);
    const bad = await recoup('breakdown', clientId, '--from', 'yesterday');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('from');
    const unknown = await recoup('summary', 'acct_unknown');
    expect(unknown.code).toBe(1);
    const openapi = await call(stack.baseUrl, 'GET', '/api/openapi.json');
    expect(Object.keys(openapi.body.paths as object)).toContain('/api/reports/breakdown');
  });
});
