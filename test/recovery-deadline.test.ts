import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventsOf } from './support/events.js';
import { call, startStack, type Stack } from './support/stack.js';

// Execute waits this long for the first phase (25 s in service); each charge takes longer.
const deadlineMs = 1_000;
const gatewayLatencyMs = 5_000;

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ firstPhaseDeadlineMs: deadlineMs });
});
afterAll(() => stack.close());

describe('execute when the first phase outlives its wait', () => {
  it('tells the workflow so: the id the merchant is given is the one its webhook and status carry', async () => {
    const account = await stack.createAccount({}, [
      { name: 'test', kind: 'test', test: true, credentials: { latencyMs: String(gatewayLatencyMs) } },
    ]);
    // A trial conversion is charged at once; all three cards turn out invalid: a final failure, 15 s on.
    const startedAt = Date.now();
    const res = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: account.apiKey,
      body: {
        amount: 4200,
        paymentMethodToken: 'tok_decline_incorrect_number',
        fallbackPaymentMethodTokens: ['tok_decline_invalid_number', 'tok_decline_incorrect_cvc'],
        originalDeclineCode: 'insufficient_funds',
        isTrialConversion: true,
      },
    });
    // The charges (local activities) hold the workflow task, so the note reaches the workflow only once
    // it has ended: the failure came first after all, and is the answer, under its FAILED_API_ id. (Before,
    // the call answered 202 under the bare id at the deadline and the webhook carried FAILED_API_.)
    expect(Date.now() - startedAt).toBeGreaterThan(3 * gatewayLatencyMs);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: false, transactionId: expect.stringMatching(/^FAILED_API_/) });
    const given = res.body.transactionId as string;

    const [failed] = (await eventsOf(stack, account.account.id, ['recovery.failed'])).map((e) => e.payload);
    expect(failed).toMatchObject({ event: 'recovery.failed', serviceTransactionId: given });
    const status = await call(stack.baseUrl, 'GET', `/api/recovery/status/${given}`, { key: account.apiKey });
    expect(status.body).toMatchObject({ transactionId: given, status: 'failed' });
  });

  it('gives the outcome itself when the first phase ends within the wait', async () => {
    const account = await stack.createAccount();
    const res = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: account.apiKey,
      body: {
        amount: 4300,
        paymentMethodToken: 'tok_decline_incorrect_number',
        originalDeclineCode: 'insufficient_funds',
        isTrialConversion: true,
      },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: false, transactionId: expect.stringMatching(/^FAILED_API_/) });
  });
});
