import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../activities/index.js';
import type { GatewayConfig } from '../domain/settings.js';
import { cardKeyOf } from '../runtime/crypto.js';
import { collections } from '../store/collections.js';
import {
  startBraintreeEmulator,
  type BraintreeEmulator,
  type EmulatedAnswer,
} from './support/braintree-emulator.js';
import { activityDeps, call, startStack, type Stack } from './support/stack.js';
import { attemptOf } from './support/attempts.js';

let stack: Stack;
let braintree: BraintreeEmulator;
let n = 0;

beforeAll(async () => {
  [stack, braintree] = await Promise.all([startStack(), startBraintreeEmulator()]);
});
afterAll(async () => {
  await stack.close();
  await braintree.close();
});

/** An account whose primary gateway is Braintree (the emulator), and one execute of a vaulted card. */
async function executeOnBraintree(answers: EmulatedAnswer[], originalDeclineCode: string, currency = 'usd') {
  n += 1;
  const paymentMethodToken = `recovery${n}`;
  braintree.addPaymentMethod(paymentMethodToken, { customerId: `customer${n}`, answers });
  const gateway: GatewayConfig = {
    name: 'braintree',
    kind: 'braintree',
    test: false,
    credentials: braintree.credentials,
  };
  const account = await stack.createAccount({}, [gateway]);
  const res = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
    key: account.apiKey,
    body: {
      paymentMethodToken: `${paymentMethodToken}|customer${n}`,
      amount: 4900,
      currency,
      originalDeclineCode,
    },
  });
  const id = String(res.body.transactionId);
  const status = await call(stack.baseUrl, 'GET', `/api/recovery/status/${id}`, { key: account.apiKey });
  const record = await stack.stores.recoveries.find(account.account.id, id);
  const sales = braintree.transactions().filter((t) => t.paymentMethodToken === paymentMethodToken);
  return {
    res,
    status,
    record,
    sales,
    accountId: account.account.id,
    token: `${paymentMethodToken}|customer${n}`,
  };
}

describe('a recovery on an account whose gateway is Braintree', () => {
  it('a technical decline is charged at once through Braintree: 200 success with the sale', async () => {
    const out = await executeOnBraintree(['approve'], 'processing_error');
    expect(out.res.status).toBe(200);
    expect(out.res.body).toMatchObject({ success: true, strategyUsed: 'primary' });
    expect(out.sales).toHaveLength(1);
    const [sale] = out.sales;
    expect(sale).toMatchObject({ amount: '49.00', currencyIsoCode: 'USD', transactionSource: 'recurring' });
    // The order id is the attempt: the workflow's id and the attempt number.
    expect(sale!.orderId).toMatch(/\/1$/);
    expect(out.status.body).toMatchObject({ status: 'succeeded', attemptCount: 1 });
    expect(out.record?.attempts).toEqual([
      expect.objectContaining({ outcome: 'approved', gateway: 'braintree', gatewayTransactionId: sale!.id }),
    ]);
  });

  it('a card the issuer reports lost is remembered as blocked, for the risk screen of its later recoveries', async () => {
    const out = await executeOnBraintree([{ decline: '2012' }], 'processing_error');
    expect(out.res.status).toBe(403);
    expect(out.sales).toHaveLength(1);
    expect(
      await stack.stores.recoveries.blockedCard(cardKeyOf(out.accountId, out.token), new Date(0)),
    ).toMatchObject({ declineCode: 'lost_card' });
  });

  it("Braintree's rejection for too many retries of the card ends the recovery with a card-update request, no smart retry", async () => {
    const out = await executeOnBraintree([{ reject: 'excessive_retry' }], 'processing_error');
    expect(out.res.status).toBe(200);
    expect(out.res.body).toMatchObject({
      success: false,
      strategyUsed: 'all_failed',
      recommendedAction: 'request_card_update',
    });
    expect(out.sales).toHaveLength(1);
    expect(out.record?.attempts).toEqual([
      expect.objectContaining({ outcome: 'declined', declineCode: 'excessive_retry' }),
    ]);
  });

  it('a payment method Braintree blocks ends the recovery as no longer chargeable, not remembered as an issuer’s block', async () => {
    const out = await executeOnBraintree([{ reject: 'payment_method_blocked' }], 'processing_error');
    expect(out.res.status).toBe(403);
    expect(out.res.body).toMatchObject({ declineCode: 'card_no_longer_chargeable' });
    expect(
      await stack.stores.recoveries.blockedCard(cardKeyOf(out.accountId, out.token), new Date(0)),
    ).toBeNull();
  });

  it('a token Braintree does not know (deleted, or a wrong key) blocks this recovery but is not remembered: a fixed key charges it again', async () => {
    const gateway: GatewayConfig = {
      name: 'braintree',
      kind: 'braintree',
      test: false,
      credentials: braintree.credentials,
    };
    const { apiKey, account } = await stack.createAccount({}, [gateway]);
    n += 1;
    const token = `unknown${n}|customer${n}`;
    // Two amounts: the same card and amount within 5 minutes would be a duplicate.
    const execute = (idempotencyKey: string, amount: number) =>
      call(stack.baseUrl, 'POST', '/api/recovery/execute', {
        key: apiKey,
        body: {
          paymentMethodToken: token,
          amount,
          originalDeclineCode: 'processing_error',
          idempotencyKey,
        },
      });
    const first = await execute(`unknown-${n}-1`, 4900);
    expect(first.status).toBe(403);
    expect(first.body).toMatchObject({ declineCode: 'card_no_longer_chargeable' });
    expect(await stack.stores.recoveries.blockedCard(cardKeyOf(account.id, token), new Date(0))).toBeNull();

    // The operator fixes the key (here: Braintree now holds the payment method): the next recovery charges it.
    braintree.addPaymentMethod(`unknown${n}`, { customerId: `customer${n}`, answers: ['approve'] });
    const second = await execute(`unknown-${n}-2`, 5900);
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ success: true });
  });

  it("Braintree's answer becomes the recovery's: a 2001 on the first attempt queues a smart retry", async () => {
    const out = await executeOnBraintree([{ decline: '2001' }], 'processing_error');
    expect(out.res.status).toBe(202);
    expect(out.res.body).toMatchObject({ status: 'queued', nextAttemptAt: expect.any(String) });
    expect(out.sales).toHaveLength(1);
    expect(out.status.body).toMatchObject({
      state: 'queued',
      attemptCount: 1,
      lastDeclineCode: 'insufficient_funds',
    });
  });

  it("a merchant's Braintree decline code is read: 2046 is a generic decline, queued for a smart time", async () => {
    const out = await executeOnBraintree(['approve'], '2046');
    expect(out.res.status).toBe(202);
    expect(String(out.res.body.message)).toMatch(/A generic_decline decline is best retried/);
    expect(out.sales).toHaveLength(0);
  });

  it('a payment in a currency Braintree has no merchant account for is never sent to it', async () => {
    const out = await executeOnBraintree(['approve'], 'processing_error', 'gbp');
    expect(out.res.status).toBe(200);
    expect(out.res.body).toMatchObject({
      success: false,
      gatewaysAttempted: 0,
      ai: { reasoning: 'No payment method or gateway is left that can be charged.' },
    });
    expect(out.sales).toHaveLength(0);
  });
});

/**
 * A sale goes through but the worker dies before its answer; another worker replays the workflow 45 s later
 * and sends the attempt again with its own clock (after `beforeReplay`): Braintree sells once.
 */
async function soldOnceAfterReplay(
  paymentMethodType: 'card' | 'paypal' | 'venmo',
  brand: 'visa' | 'unknown',
  beforeReplay: (attemptKey: string) => Promise<unknown> = () => Promise.resolve(),
) {
  // Braintree and the worker on one clock the test moves.
  let now = Date.UTC(2026, 5, 1, 9);
  const onClock = await startBraintreeEmulator(() => new Date(now));
  try {
    onClock.addPaymentMethod('replayed', {
      customerId: 'replayed-customer',
      answers: ['lost', 'approve'],
    });
    onClock.searchLag(2 * 60_000);
    const { account } = await stack.createAccount({}, [
      { name: 'braintree', kind: 'braintree', test: false, credentials: onClock.credentials },
    ]);
    const activities = createActivities({ ...activityDeps(stack), clock: () => new Date(now) });
    const option = { gateway: 'braintree', token: 'replayed|replayed-customer', role: 'primary' } as const;
    const attempt = attemptOf(account.id, option, { amount: 4900, paymentMethodType, brand, now });
    // The sale goes through, but the worker dies before its answer: the workflow task is never completed.
    expect((await activities.attemptCharge(attempt)).kind).toBe('ambiguous');
    // Another worker replays the task 45 s later, and the workflow sends the attempt with its own clock.
    now += 45_000;
    await beforeReplay(attempt.attemptKey);
    expect(await activities.attemptCharge({ ...attempt, now })).toMatchObject({
      kind: 'ambiguous',
      reason: expect.stringMatching(/retried attempt/) as string,
    });
    expect(onClock.transactions()).toHaveLength(1);
    // Once Braintree's search shows the sale, the attempt answers with it.
    now += 2 * 60_000;
    const [sale] = onClock.transactions();
    expect(await activities.attemptCharge({ ...attempt, now })).toEqual({
      kind: 'approved',
      gatewayTransactionId: sale!.id,
    });
    expect(onClock.transactions()).toHaveLength(1);
  } finally {
    await onClock.close();
  }
}

describe('an attempt a worker charges again after replaying the workflow of one that died mid-sale', () => {
  // A card claims its network budget; PayPal and Venmo make no claim (no card brand), and sell once all the same.
  it.each([
    ['card', 'visa'],
    ['paypal', 'unknown'],
    ['venmo', 'unknown'],
  ] as const)(
    "a %s payment method sells once: the charge counts from the attempt's first-sent record, not from the replay's fresh clock",
    (paymentMethodType, brand) => soldOnceAfterReplay(paymentMethodType, brand),
  );

  it('a card attempt first sent by a worker of the version before that record sells once: its budget claim says when', () =>
    soldOnceAfterReplay('card', 'visa', (attemptKey) =>
      stack.stores.db.collection<{ _id: string }>(collections.attemptSends).deleteOne({ _id: attemptKey }),
    ));
});
