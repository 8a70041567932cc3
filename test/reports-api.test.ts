import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startStack, type Stack } from './support/stack.js';

const day = 86_400_000;
let stack: Stack;
let offsetMs = 0;
let n = 0;
const amount = () => 5000 + (n += 1);

beforeAll(async () => {
  stack = await startStack({ clock: () => new Date(Date.now() + offsetMs) });
});
afterAll(() => stack.close());

const execute = (apiKey: string, body: Record<string, unknown>) =>
  call(stack.baseUrl, 'POST', '/api/recovery/execute', { key: apiKey, body: { amount: amount(), ...body } });
const pulse = (apiKey: string, body: Record<string, unknown> = {}) =>
  call(stack.baseUrl, 'POST', '/api/recovery/pulse', { key: apiKey, body: { amount: 5000, ...body } });
const summary = (apiKey: string, query = '') =>
  call(stack.baseUrl, 'GET', `/api/reports/summary${query}`, { key: apiKey });

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
      const res = await execute(apiKey, {
        paymentMethodToken: 'tok_visa',
        originalDeclineCode: 'try_again_later',
        customerEmail: email,
      });
      if (res.body.holdout === true) holdouts.push(email);
    }
    expect(holdouts.length).toBeGreaterThan(0);
    expect(holdouts.length).toBeLessThan(16);
    // Half the control customers pay on their own.
    const paid = holdouts.filter((_, i) => i % 2 === 0);
    for (const email of paid) await pulse(apiKey, { customerEmail: email });
    const watching = (await summary(apiKey)).body.proofMode as Record<string, unknown>;
    // Still inside the window: the recovered payments are decided, the unpaid controls are not.
    expect(watching).toMatchObject({ treatment: 16 - holdouts.length, control: paid.length });

    offsetMs = 31 * day;
    const from = new Date(Date.now() - day).toISOString();
    const res = await summary(apiKey, `?from=${encodeURIComponent(from)}`);
    expect(res.body.proofMode).toMatchObject({
      treatment: 16 - holdouts.length,
      control: holdouts.length,
      treatmentRate: 1,
      controlRate: paid.length / holdouts.length,
      insufficientData: true,
    });
    expect(res.body).toMatchObject({ failedPayments: 16, recovered: 16 - holdouts.length, recoveryRate: 1 });
  });

  it.each([
    ['?from=2026-03-01T00:00:00Z&to=2026-02-01T00:00:00Z', 'to'],
    ['?from=2024-01-01T00:00:00Z&to=2026-01-01T00:00:00Z', 'to'],
    ['?from=yesterday', 'from'],
    ['?since=2026-01-01T00:00:00Z', 'since'],
  ])('%s is refused with 400 naming %s', async (query, field) => {
    const { apiKey } = await stack.createAccount();
    const res = await summary(apiKey, query);
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body.details)).toContain(field);
  });

  it('needs the secret key', async () => {
    expect((await call(stack.baseUrl, 'GET', '/api/reports/summary')).status).toBe(401);
  });
});
