import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../activities/index.js';
import { activityDeps, call, startStack, type Stack } from './support/stack.js';

// An account integrates in test mode (its primary gateway is a test gateway), then goes live when its
// primary gateway is switched. What its sandbox did must not pass for live data afterwards: the engine's
// learned statistics, the risk calibration, the reports and the paywall read the current mode's alone.

let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.close());

/** A test-mode account and how to call the API as it. */
async function integrating() {
  const { account, apiKey } = await stack.createAccount();
  expect(account.testMode).toBe(true);
  const post = (path: string, body: Record<string, unknown>) =>
    call(stack.baseUrl, 'POST', path, { key: apiKey, body });
  const get = (path: string) => call(stack.baseUrl, 'GET', path, { key: apiKey });
  /** Switches the primary gateway to a live one; the sandbox stays as a backup. */
  const goLive = async () => {
    // The live primary is the sandbox's adapter marked live (`test: false`), so the test can still charge it:
    // the account's mode follows the flag, as it does for any gateway.
    const live = await stack.stores.accounts.setGateways(account.id, [
      { name: 'live', kind: 'test', test: false, credentials: {} },
      { name: 'test', kind: 'test', test: true, credentials: {} },
    ]);
    expect(live?.testMode).toBe(false);
  };
  return { account, post, get, goLive };
}

const recovered = { paymentMethodToken: 'tok_visa', originalDeclineCode: 'try_again_later' };

describe('an account that goes live after integrating in test mode', () => {
  it('plans its live recoveries with what live charges taught, never the sandbox', async () => {
    const m = await integrating();
    const activities = createActivities(activityDeps(stack));
    /** The approved charges the account's statistics count, by decline code (their weights are not whole). */
    const learned = async () =>
      Object.fromEntries(
        Object.entries((await activities.loadStats(m.account.id)).byCode).map(([code, t]) => [code, t.s]),
      );
    for (const amount of [1000, 1100, 1200])
      expect((await m.post('/api/recovery/execute', { ...recovered, amount })).status).toBe(200);
    // In test mode the sandbox's outcomes are learned, and planned with.
    expect(await learned()).toEqual({ try_again_later: 3 });

    await m.goLive();
    expect(await learned()).toEqual({});
    const live = await m.post('/api/recovery/execute', { ...recovered, amount: 1300 });
    expect(live.status).toBe(200);
    expect(live.body).not.toHaveProperty('isSimulated');
    expect(await learned()).toEqual({ try_again_later: 1 });
  });

  it('scores its live predictions with the outcomes of live ones, never the sandbox', async () => {
    const m = await integrating();
    const score = async () => {
      const res = await m.post('/api/predict/risk', {
        paymentMethodToken: 'tok_visa',
        amount: 1999,
        scheduledDate: '2026-12-09',
      });
      return res.body.prediction as { predictionId: string; riskScore: number };
    };
    for (let i = 0; i < 25; i += 1)
      await m.post('/api/predict/outcome', { predictionId: (await score()).predictionId, outcome: 'failed' });
    // 25 sandbox failures against the prior's 25 observations at 8 %: (25 + 2) / 50.
    expect((await score()).riskScore).toBe(54);

    await m.goLive();
    expect((await score()).riskScore).toBe(8);
  });

  it('reports the recoveries of its current mode: the sandbox’s in test mode, once live only live ones', async () => {
    const m = await integrating();
    for (const amount of [1000, 1100])
      expect((await m.post('/api/recovery/execute', { ...recovered, amount })).status).toBe(200);
    expect((await m.get('/api/reports/summary')).body).toMatchObject({
      failedPayments: 2,
      recovered: 2,
      revenueByCurrency: { USD: { failed: 2100, recovered: 2100 } },
    });

    await m.goLive();
    const emptied = (await m.get('/api/reports/summary')).body;
    expect(emptied).toMatchObject({ failedPayments: 0, recovered: 0 });
    expect(emptied.revenueByCurrency).toEqual({});
    expect((await m.get('/api/reports/breakdown')).body.byDeclineCode).toEqual([]);
    expect((await m.post('/api/recovery/execute', { ...recovered, amount: 1300 })).status).toBe(200);
    expect((await m.get('/api/reports/summary')).body).toMatchObject({
      failedPayments: 1,
      recovered: 1,
      revenueByCurrency: { USD: { failed: 1300, recovered: 1300 } },
    });
    expect((await m.get('/api/reports/breakdown')).body).toMatchObject({
      byDeclineCode: [{ declineCode: 'try_again_later', failedPayments: 1, recovered: 1 }],
    });
  });

  it('counts the organic successes it logged in its current mode alone: the sandbox’s pulses are not a live baseline', async () => {
    const m = await integrating();
    const pulse = (body: Record<string, unknown>) => m.post('/api/recovery/pulse', { amount: 2000, ...body });
    const logged = async (body: Record<string, unknown>) => {
      const res = await pulse(body);
      expect(res.status).toBe(200);
      return res.body.transactionId as string;
    };
    const sandboxIds = [await logged({ transactionId: 'order_1' }), await logged({})];
    expect((await m.get('/api/reports/summary')).body).toMatchObject({ organicSuccesses: 2 });

    await m.goLive();
    expect((await m.get('/api/reports/summary')).body).toMatchObject({ organicSuccesses: 0 });
    // The merchant's live order ids start over: a live order_1 is a payment of its own, not a re-send.
    const liveId = await logged({ transactionId: 'order_1' });
    expect(sandboxIds).not.toContain(liveId);
    expect(await logged({ transactionId: 'order_1' })).toBe(liveId);
    expect((await m.get('/api/reports/summary')).body).toMatchObject({ organicSuccesses: 1 });
  });

  it('settles with a pulse only a failure of the pulse’s own mode: a live payment never pays a sandbox recovery', async () => {
    const m = await integrating();
    const owed = {
      paymentMethodToken: 'tok_decline_insufficient_funds',
      originalDeclineCode: 'insufficient_funds',
    };
    const sandbox = await m.post('/api/recovery/execute', {
      ...owed,
      amount: 1400,
      customerEmail: 'both@example.com',
    });
    expect(sandbox.status).toBe(202);
    const sandboxId = String(sandbox.body.transactionId);
    const paying = (paysTransactionId: string, amount: number) =>
      m.post('/api/recovery/pulse', { amount, customerEmail: 'both@example.com', paysTransactionId });
    const organic = async () => (await m.get('/api/reports/summary')).body.organicSuccesses as number;

    await m.goLive();
    const refused = await paying(sandboxId, 1400);
    expect(refused.status).toBe(400);
    expect(refused.body.details).toEqual({
      paysTransactionId: ['is a sandbox recovery: a live pulse pays only a live one'],
    });
    // Nothing was logged nor settled: the sandbox recovery still waits for its retry.
    expect(await organic()).toBe(0);
    expect((await m.get(`/api/recovery/status/${sandboxId}`)).body).toMatchObject({ state: 'queued' });
    expect((await stack.stores.recoveries.find(m.account.id, sandboxId))?.paidOnTheirOwnAt).toBeUndefined();

    // And back in test mode, a sandbox payment never pays a live recovery.
    const live = await m.post('/api/recovery/execute', {
      ...owed,
      amount: 1500,
      customerEmail: 'both@example.com',
    });
    expect(live.status).toBe(202);
    await stack.stores.accounts.setGateways(m.account.id, [
      { name: 'test', kind: 'test', test: true, credentials: {} },
    ]);
    const backwards = await paying(String(live.body.transactionId), 1500);
    expect(backwards.status).toBe(400);
    expect(backwards.body.details).toEqual({
      paysTransactionId: ['is a live recovery: a pulse logged in test mode pays only a sandbox one'],
    });
    // Its own mode's failure it settles.
    expect((await paying(sandboxId, 1400)).status).toBe(200);
    expect((await m.get(`/api/recovery/status/${sandboxId}`)).body).toMatchObject({
      state: 'paid_elsewhere',
    });
    // The customer's export shows the one pulse logged: the sandbox's, and the failure it paid.
    const exported = await m.post('/api/customers/export', { customerEmail: 'both@example.com' });
    expect(exported.body.pulses).toEqual([
      expect.objectContaining({ amount: 1400, paysTransactionId: sandboxId, isSimulated: true }),
    ]);
  });

  it('is past due on the paywall, and to the risk screen, for what the customer owes in its current mode alone', async () => {
    const m = await integrating();
    const email = 'sam@example.com';
    const paywall = async () =>
      (await m.get(`/api/recovery/paywall-status?customerEmail=${encodeURIComponent(email)}`)).body;
    const factors = async () => {
      const res = await m.post('/api/predict/risk', {
        paymentMethodToken: 'tok_visa_other',
        amount: 1999,
        customerEmail: email,
        scheduledDate: '2026-12-09',
      });
      return (res.body.prediction as { factors: Array<{ factor: string }> }).factors.map((f) => f.factor);
    };
    const sandbox = await m.post('/api/recovery/execute', {
      paymentMethodToken: 'tok_decline_insufficient_funds',
      originalDeclineCode: 'insufficient_funds',
      amount: 1500,
      customerEmail: email,
    });
    expect(sandbox.status).toBe(202);
    expect(await paywall()).toMatchObject({ isPastDue: true, totalOwedCents: 1500 });
    expect(await factors()).toEqual(['customer_past_due']);

    await m.goLive();
    expect(await paywall()).toMatchObject({ isPastDue: false, totalOwedCents: 0, failedPaymentCount: 0 });
    expect(await factors()).toEqual([]);
    const live = await m.post('/api/recovery/execute', {
      paymentMethodToken: 'tok_visa',
      originalDeclineCode: 'fraudulent',
      amount: 900,
      customerEmail: email,
    });
    expect(live.status).toBe(403);
    expect(await paywall()).toMatchObject({ isPastDue: true, totalOwedCents: 900, failedPaymentCount: 1 });
    expect(await factors()).toEqual(['customer_past_due']);
  });
});
