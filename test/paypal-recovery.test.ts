import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cardKeyOf } from '../runtime/crypto.js';
import { startPayPalEmulator, type PayPalEmulator, type PayPalScript } from './support/paypal-emulator.js';
import { call, startStack, type Stack } from './support/stack.js';

let stack: Stack;
let paypal: PayPalEmulator;
let n = 0;

beforeAll(async () => {
  [stack, paypal] = await Promise.all([startStack(), startPayPalEmulator()]);
});
afterAll(async () => {
  await stack.close();
  await paypal.close();
});

/** An account whose primary gateway is PayPal (the emulator), and one execute of a PayPal payment. */
async function executeOnPayPal(
  answers: PayPalScript[],
  originalDeclineCode: string,
  opts: {
    via?: 'billing-agreement' | 'reference';
    credentials?: Record<string, string>;
    /** Attempts the card-budget store already counts on the token (as it would on a card). */
    claimedBefore?: number;
    /** The payment, in ISO minor units (25.00 EUR unless given). */
    amount?: number;
    currency?: string;
  } = {},
) {
  n += 1;
  const via = opts.via ?? 'billing-agreement';
  const source = via === 'billing-agreement' ? `B-${n}STACK0000000000` : `7STACK${n}0000000`;
  const token = `${via}|${source}`;
  paypal.addSource(source, answers);
  const account = await stack.createAccount({}, [
    { name: 'paypal', kind: 'paypal', test: false, credentials: opts.credentials ?? paypal.credentials },
  ]);
  for (let i = 0; i < (opts.claimedBefore ?? 0); i += 1)
    await stack.stores.cardBudgets.claim({
      cardKey: cardKeyOf(account.account.id, token),
      brand: 'unknown',
      declineCode: 'generic_decline',
      advice: null,
      attemptKey: `earlier/${i}`,
      now: new Date(),
    });
  const res = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
    key: account.apiKey,
    body: {
      paymentMethodToken: token,
      paymentMethodType: 'paypal',
      amount: opts.amount ?? 2500,
      currency: opts.currency ?? 'eur',
      originalDeclineCode,
    },
  });
  const id = String(res.body.transactionId);
  const status = await call(stack.baseUrl, 'GET', `/api/recovery/status/${id}`, { key: account.apiKey });
  const record = await stack.stores.recoveries.find(account.account.id, id);
  const payments = paypal.payments().filter((p) => p.source === source);
  return { res, status, record, payments, accountId: account.account.id };
}

describe('a recovery on an account whose gateway is PayPal', () => {
  it('a technical decline is charged at once with the billing agreement: 200 success with the capture id', async () => {
    const out = await executeOnPayPal(['complete'], 'processing_error');
    expect(out.res.status).toBe(200);
    expect(out.res.body).toMatchObject({ success: true, strategyUsed: 'primary', gatewaysAttempted: 1 });
    expect(out.payments).toHaveLength(1);
    const [payment] = out.payments;
    expect(payment).toMatchObject({ amount: '25.00', currency: 'EUR' });
    expect(payment!.requestId).toMatch(/\/1$/);
    expect(out.record?.attempts).toEqual([
      expect.objectContaining({ outcome: 'approved', gateway: 'paypal', gatewayTransactionId: payment!.id }),
    ]);
  });

  it("PayPal's refusal becomes the recovery's decline: a declined funding source queues a smart retry", async () => {
    const out = await executeOnPayPal([{ refuse: 'INSTRUMENT_DECLINED' }], 'processing_error');
    expect(out.res.status).toBe(202);
    expect(out.res.body).toMatchObject({ status: 'queued', nextAttemptAt: expect.any(String) });
    expect(out.payments).toHaveLength(0);
    expect(out.status.body).toMatchObject({ state: 'queued', lastDeclineCode: 'generic_decline' });
  });

  it('a cancelled billing agreement blocks the recovery: 403, the merchant is told to get a new payment method', async () => {
    const out = await executeOnPayPal([{ refuse: 'AGREEMENT_ALREADY_CANCELLED' }], 'processing_error');
    expect(out.res.status).toBe(403);
    // The spec's name for a card (here an agreement) that can no longer be charged; the record keeps PayPal's.
    expect(out.res.body).toMatchObject({
      action: 'blocked',
      declineCode: 'card_no_longer_chargeable',
      recommendedAction: 'request_card_update',
    });
    const [blocked] = await stack.stores.recoveries.page(out.accountId, { limit: 1 });
    expect(blocked).toMatchObject({
      state: 'blocked',
      lastDeclineCode: 'revocation_of_authorization',
      recommendedActionReason: expect.stringContaining('(decline code revocation_of_authorization)'),
    });
    expect(out.payments).toHaveLength(0);
  });

  it('no card network rule applies to an agreement: charged even past the 15 attempts a card of unknown brand gets', async () => {
    const out = await executeOnPayPal(['complete'], 'processing_error', { claimedBefore: 15 });
    expect(out.res.status).toBe(200);
    expect(out.res.body).toMatchObject({ success: true });
    expect(out.payments).toHaveLength(1);
  });

  it('a reference transaction goes through the NVP API', async () => {
    const out = await executeOnPayPal(['complete'], 'processing_error', { via: 'reference' });
    expect(out.res.body).toMatchObject({ success: true });
    expect(out.payments).toEqual([expect.objectContaining({ via: 'reference', amount: '25.00' })]);
  });

  it('a HUF payment is paid in whole forints, as PayPal takes HUF: 5,000.00 Ft is "5000"', async () => {
    const out = await executeOnPayPal(['complete'], 'processing_error', { amount: 500000, currency: 'huf' });
    expect(out.res.body).toMatchObject({ success: true });
    expect(out.payments).toEqual([expect.objectContaining({ amount: '5000', currency: 'HUF' })]);
  });

  it('5,000.50 Ft, which PayPal cannot take, is never sent nor rounded: the attempt is declined invalid_amount', async () => {
    const out = await executeOnPayPal(['complete'], 'processing_error', { amount: 500050, currency: 'HUF' });
    expect(out.payments).toHaveLength(0);
    expect(out.record?.attempts).toEqual([
      expect.objectContaining({ gateway: 'paypal', outcome: 'declined', declineCode: 'invalid_amount' }),
    ]);
  });

  it('a reference token on a PayPal gateway without NVP credentials is never sent to it', async () => {
    const { nvpUser: _u, nvpPassword: _p, nvpSignature: _s, ...rest } = paypal.credentials;
    const out = await executeOnPayPal(['complete'], 'processing_error', {
      via: 'reference',
      credentials: rest,
    });
    expect(out.res.status).toBe(200);
    expect(out.res.body).toMatchObject({
      success: false,
      gatewaysAttempted: 0,
      ai: { reasoning: 'No payment method or gateway is left that can be charged.' },
    });
    expect(out.payments).toHaveLength(0);
  });
});
