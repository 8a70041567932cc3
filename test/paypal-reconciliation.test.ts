import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventRecord } from '../store/events.js';
import { startPayPalEmulator, type PayPalEmulator } from './support/paypal-emulator.js';
import { call, type Stack } from './support/stack.js';
import { stackOnTimeSkipping, startTimeSkipping } from './support/time-skipping.js';

// The whole service on Temporal's time-skipping server, against the PayPal emulator on the server's clock:
// a lost answer is looked up as the workflow does it, 30 seconds later and then backing off.

let env: TestWorkflowEnvironment;
let stack: Stack;
let paypal: PayPalEmulator;

beforeAll(async () => {
  env = await startTimeSkipping();
  stack = await stackOnTimeSkipping(env);
  paypal = await startPayPalEmulator(async () => new Date(await env.currentTimeMs()));
});
afterAll(async () => {
  await paypal?.close();
  await stack?.close();
  await env?.teardown();
});

/** Executes a PayPal payment of `token` on a PayPal account and lets its recovery run to its end. */
async function recoverOnPayPal(token: string) {
  const { apiKey, account } = await stack.createAccount({}, [
    { name: 'paypal', kind: 'paypal', test: false, credentials: paypal.credentials },
  ]);
  const answer = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
    key: apiKey,
    body: {
      amount: 2500,
      currency: 'usd',
      paymentMethodToken: token,
      paymentMethodType: 'paypal',
      originalDeclineCode: 'try_again_later',
    },
  });
  const transactionId = String(answer.body.transactionId);
  const doc = await stack.stores.recoveries.find(account.id, transactionId);
  await env.client.workflow.getHandle(doc!.workflowId).result();
  const final = (await stack.stores.recoveries.find(account.id, transactionId))!;
  const events = (await stack.stores.events.list({ accountId: account.id, limit: 100 })).filter(
    (e: EventRecord) => e.type.startsWith('recovery.'),
  );
  return { answer, final, events };
}

describe('a PayPal reference transaction whose answer is lost', () => {
  it('is reconciled by PayPal’s answer to the same MSGSUBID (error 11607 with the payment’s fields): one payment, never a second under another key', async () => {
    // Were 11607 read as a decline, the recovery would try again later under a new key, and pay again.
    paypal.addSource('6LOSTREF00000000', ['lost', 'complete']);
    const out = await recoverOnPayPal('reference|6LOSTREF00000000');
    expect(out.answer).toMatchObject({ status: 202, body: { status: 'unknown' } });
    expect(out.final.state).toBe('succeeded');
    const payments = paypal.payments().filter((p) => p.source === '6LOSTREF00000000');
    expect(payments).toHaveLength(1);
    expect(out.final.attempts).toEqual([
      expect.objectContaining({ outcome: 'approved', gatewayTransactionId: payments[0]!.id }),
    ]);
    expect(out.events.map((e) => e.type)).toEqual(['recovery.success']);
    expect(out.events[0]!.payload).toMatchObject({ trigger: 'reconciliation' });
  });
});
