import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attemptKeyField } from '../activities/gateways/stripe.js';
import type { GatewayConfig } from '../domain/settings.js';
import { cardKeyOf } from '../runtime/crypto.js';
import { call, startStack, type Stack } from './support/stack.js';
import { startStripeEmulator, type StripeEmulator } from './support/stripe-emulator.js';

let stack: Stack;
let stripe: StripeEmulator;
let n = 0;

beforeAll(async () => {
  [stack, stripe] = await Promise.all([startStack(), startStripeEmulator()]);
});
afterAll(async () => {
  await stack.close();
  await stripe.close();
});

/** An account whose primary gateway is Stripe (the emulator), and one execute of a card with `answers`. */
async function executeOnStripe(
  answers: Parameters<StripeEmulator['addCard']>[1]['answers'],
  originalDeclineCode: string,
  token = `pm_recovery${(n += 1)}`,
  money = { amount: 4900, currency: 'usd' },
  extra: { idempotencyKey?: string } = {},
) {
  if (answers.length > 0) stripe.addCard(token, { customer: `cus_recovery${n}`, answers });
  const gateway: GatewayConfig = {
    name: 'stripe',
    kind: 'stripe',
    test: false,
    credentials: { secretKey: stripe.secretKey, apiBase: stripe.url },
  };
  const account = await stack.createAccount({}, [gateway]);
  const res = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
    key: account.apiKey,
    body: { paymentMethodToken: token, ...money, originalDeclineCode, ...extra },
  });
  const id = String(res.body.transactionId);
  const status = await call(stack.baseUrl, 'GET', `/api/recovery/status/${id}`, { key: account.apiKey });
  const record = await stack.stores.recoveries.find(account.account.id, id);
  return { res, status, record, intents: stripe.intents().filter((i) => i.payment_method === token) };
}

describe('a recovery on an account whose gateway is Stripe', () => {
  it('a technical decline is charged at once through Stripe: 200 success with the PaymentIntent', async () => {
    const out = await executeOnStripe(['approve'], 'processing_error');
    expect(out.res.status).toBe(200);
    expect(out.intents).toHaveLength(1);
    const [intent] = out.intents;
    expect(out.res.body).toMatchObject({ success: true, strategyUsed: 'primary' });
    expect(intent).toMatchObject({ amount: 4900, currency: 'usd', status: 'succeeded', off_session: true });
    // One idempotency key per attempt: the workflow's id and the attempt number.
    expect(intent!.metadata[attemptKeyField]).toMatch(/\/1$/);
    expect(out.status.body).toMatchObject({ status: 'succeeded', attemptCount: 1 });
    expect(out.record?.attempts).toEqual([
      expect.objectContaining({ outcome: 'approved', gateway: 'stripe', gatewayTransactionId: intent!.id }),
    ]);
  });

  it("Stripe's decline code is the recovery's: a do-not-honor answer queues a smart retry", async () => {
    const out = await executeOnStripe([{ decline: 'do_not_honor' }], 'processing_error');
    expect(out.res.status).toBe(202);
    expect(out.res.body).toMatchObject({ status: 'queued', nextAttemptAt: expect.any(String) });
    expect(out.intents).toHaveLength(1);
    expect(out.status.body).toMatchObject({
      state: 'queued',
      attemptCount: 1,
      lastDeclineCode: 'do_not_honor',
    });
    expect(out.record?.attempts).toEqual([
      expect.objectContaining({
        outcome: 'declined',
        declineCode: 'do_not_honor',
        gatewayTransactionId: out.intents[0]!.id,
      }),
    ]);
  });

  it('an amount Stripe cannot express (Ar 1,000.50) is declined invalid_amount: nothing sent, no card budget spent', async () => {
    const token = `pm_recovery${(n += 1)}`;
    const out = await executeOnStripe(['approve'], 'processing_error', token, {
      amount: 100050,
      currency: 'mga',
    });
    expect(out.intents).toHaveLength(0);
    expect(out.record?.attempts).toEqual([
      expect.objectContaining({ outcome: 'declined', declineCode: 'invalid_amount' }),
    ]);
    const cardKey = cardKeyOf(out.record?.accountId ?? '', token);
    expect(await stack.stores.cardBudgets.attemptsSince(cardKey, new Date(0))).toEqual([]);
  });

  it('a merchant idempotency key no HTTP header carries (inv-€-✓) is charged once, not lost as a network error', async () => {
    const token = `pm_recovery${(n += 1)}`;
    const out = await executeOnStripe(['approve'], 'processing_error', token, undefined, {
      idempotencyKey: `inv-€-✓-${n}`,
    });
    expect(out.res.status).toBe(200);
    expect(out.res.body).toMatchObject({ success: true });
    expect(out.intents).toHaveLength(1);
    expect(out.intents[0]!.metadata[attemptKeyField]).toMatch(/\/inv-€-✓-\d+\/1$/);
  });

  it('a currency Stripe does not charge (IRR) ends the recovery at once for review, never retried for ever', async () => {
    const token = `pm_recovery${(n += 1)}`;
    const out = await executeOnStripe(['approve'], 'processing_error', token, {
      amount: 4900,
      currency: 'irr',
    });
    expect(out.res.status).toBe(200);
    expect(out.res.body).toMatchObject({
      success: false,
      strategyUsed: 'all_failed',
      recommendedAction: 'manual_review',
    });
    expect(out.intents).toHaveLength(0);
    expect(out.record?.attempts).toEqual([
      expect.objectContaining({ outcome: 'declined', declineCode: 'request_refused' }),
    ]);
  });

  it('a card that no longer exists at Stripe is blocked as no longer chargeable, and nothing is charged', async () => {
    const out = await executeOnStripe([], 'processing_error', 'pm_detached');
    expect(out.res.status).toBe(403);
    expect(out.res.body).toMatchObject({
      declineCode: 'card_no_longer_chargeable',
      recommendedAction: 'request_card_update',
    });
    expect(out.intents).toHaveLength(0);
  });
});
