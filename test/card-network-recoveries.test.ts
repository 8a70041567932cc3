import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { poll } from './support/poll.js';
import { call, startStack, type Stack } from './support/stack.js';

let stack: Stack;
let n = 0;
/** A fresh amount per request keeps the 5-minute velocity rule (same card and amount) out of the way. */
const amount = () => 1000 + (n += 1);
const mastercardBin = '555555';

beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.close());

/** One recovery of a renewal on a Mastercard `token`, declined `try_again_later` (charged at once). */
async function recover(apiKey: string, token: string) {
  const res = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
    key: apiKey,
    body: {
      paymentMethodToken: token,
      binPrefix: mastercardBin,
      originalDeclineCode: 'try_again_later',
      amount: amount(),
    },
  });
  const id = String(res.body.transactionId);
  const status = await call(stack.baseUrl, 'GET', `/api/recovery/status/${id}`, { key: apiKey });
  return { res, status };
}

const charges = (token: string) => stack.stores.sandbox.countForToken('test', token);

describe('Mastercard advice 03 and 21 across recoveries of one card', () => {
  it.each(['03', '21'])(
    'a card one recovery got advice %s for is never charged by the next recovery: its screen blocks it',
    async (advice) => {
      const { apiKey, account } = await stack.createAccount();
      const token = `tok_decline_do_not_honor_mac${advice}`;
      // The blocked answer, naming the advice.
      const noLongerChargeable = {
        status: 403,
        body: {
          declineCode: 'card_no_longer_chargeable',
          recommendedAction: 'request_card_update',
          recommendation: expect.stringContaining(`merchant advice code ${advice}`),
        },
      };

      // The recovery that gets the advice ends at once, asking for a new card: no attempt is allowed again.
      const first = await recover(apiKey, token);
      expect(first.res).toMatchObject(noLongerChargeable);
      expect(await charges(token)).toBe(1);
      // The status record keeps the issuer's own code.
      const [blocked] = await stack.stores.recoveries.page(account.id, { limit: 1 });
      expect(blocked).toMatchObject({ state: 'blocked', lastDeclineCode: 'do_not_honor' });

      // The next invoice of the same card: its recovery starts with no advice of its own.
      const next = await recover(apiKey, token);
      expect(next.res).toMatchObject(noLongerChargeable);
      expect(await charges(token)).toBe(1);
    },
  );

  it('a risk prediction for the stopped card says block, naming the advice', async () => {
    const { apiKey } = await stack.createAccount();
    const token = 'tok_decline_do_not_honor_mac21';
    await recover(apiKey, token);
    const res = await call(stack.baseUrl, 'POST', '/api/predict/risk', {
      key: apiKey,
      body: { paymentMethodToken: token, amount: amount(), binPrefix: mastercardBin },
    });
    expect(res.body).toMatchObject({
      prediction: {
        recommendation: 'block',
        riskScore: 99,
        factors: [{ factor: 'card_network_stop', description: expect.stringContaining('21') }],
      },
    });
  });

  it('the stop is the card’s: another card of the account is charged', async () => {
    const { apiKey } = await stack.createAccount();
    await recover(apiKey, 'tok_decline_do_not_honor_mac03');
    const other = await recover(apiKey, 'tok_mastercard_other');
    expect(other.res.body).toMatchObject({ success: true });
    expect(await charges('tok_mastercard_other')).toBe(1);
  });
});

describe('Mastercard wait advice across recoveries of one card', () => {
  it('a card one recovery was told to wait for is not charged by the next recovery until the wait is over', async () => {
    const { apiKey } = await stack.createAccount();
    const token = 'tok_decline_do_not_honor_mac25';
    const before = await charges(token);
    const advisedAt = Date.now();

    // Declined with advice 25 (wait 24 hours): the recovery's own retry waits for it.
    const first = await recover(apiKey, token);
    expect(first.res.status).toBe(202);
    expect(await charges(token)).toBe(before + 1);

    // The next invoice of the same card, its failure told with no advice: it waits out the card's wait too.
    const next = await recover(apiKey, token);
    expect(next.res.status).toBe(202);
    expect(next.status.body).toMatchObject({ state: 'queued' });
    expect(Date.parse(String(next.status.body.nextAttemptAt))).toBeGreaterThanOrEqual(advisedAt + 86_400_000);
    expect(await charges(token)).toBe(before + 1);

    // Another card of the account is charged meanwhile.
    expect((await recover(apiKey, 'tok_mastercard_unadvised')).res.body).toMatchObject({ success: true });
  });
});

describe("the account's networkRules", () => {
  it('Mastercard maxPer24h 2: the third charge of a card in 24 hours waits for the first to age out', async () => {
    const { apiKey } = await stack.createAccount({ networkRules: { mastercard: { maxPer24h: 2 } } });
    const token = 'tok_mastercard_capped';
    const started = Date.now();
    for (const _ of [1, 2]) expect((await recover(apiKey, token)).res.body).toMatchObject({ success: true });

    const third = await recover(apiKey, token);
    expect(third.res.status).toBe(202);
    expect(third.status.body).toMatchObject({ state: 'queued' });
    expect(Date.parse(String(third.status.body.nextAttemptAt))).toBeGreaterThanOrEqual(started + 86_400_000);
    expect(await charges(token)).toBe(2);
  });

  it('the defaults still allow the third', async () => {
    const { apiKey } = await stack.createAccount();
    const token = 'tok_mastercard_default_caps';
    for (const _ of [1, 2, 3])
      expect((await recover(apiKey, token)).res.body).toMatchObject({ success: true });
    expect(await charges(token)).toBe(3);
  });
});

describe('the caps of a card other than the payment’s own', () => {
  /** Executes a recovery of `body` (a fresh amount); returns the answer. */
  const execute = (apiKey: string, body: Record<string, unknown>) =>
    call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: apiKey,
      body: { originalDeclineCode: 'try_again_later', amount: amount(), ...body },
    });

  it.each([
    ['a Visa card', { binPrefix: '424242' }],
    ['a PayPal account', { paymentMethodType: 'paypal' }],
  ])('a fallback card after %s is held to the caps of a card of unknown brand', async (_, payment) => {
    // Cards of unknown brand: one attempt in 30 days; Visa keeps its 15.
    const { apiKey } = await stack.createAccount({ networkRules: { unknown: { maxPer30Days: 1 } } });
    const fallback = `tok_fallback_${randomBytes(6).toString('hex')}`;
    // The fallback card's one attempt of the month, in a recovery of its own.
    expect((await execute(apiKey, { paymentMethodToken: fallback })).body).toMatchObject({ success: true });

    const res = await execute(apiKey, {
      paymentMethodToken: 'tok_decline_incorrect_number',
      fallbackPaymentMethodTokens: [fallback],
      ...payment,
    });
    // The payment's card is invalid; its fallback, its month's attempt spent, is not charged: nothing left.
    expect(res.body).toMatchObject({
      success: false,
      recommendedAction: 'request_card_update',
      ai: { reasoning: 'No attempt is allowed before the retry window closes.' },
    });
    expect(await charges(fallback)).toBe(1);
  });

  it('the customer’s new card, saved through a card-update link, is held to the caps of a card of unknown brand, not the old card’s', async () => {
    const { apiKey, account } = await stack.createAccount({ networkRules: { unknown: { maxPer30Days: 1 } } });
    const newCard = `tok_new_card_${randomBytes(6).toString('hex')}`;
    // The new card's one attempt of the month, in a recovery of its own.
    expect((await execute(apiKey, { paymentMethodToken: newCard })).body).toMatchObject({ success: true });

    // A Visa card's recovery, declined again and queued; the customer saves the new card.
    const queued = await execute(apiKey, {
      paymentMethodToken: 'tok_decline_do_not_honor',
      binPrefix: '424242',
    });
    expect(queued.status).toBe(202);
    const transactionId = String(queued.body.transactionId);
    const link = await call<{ token: string }>(stack.baseUrl, 'POST', '/api/recovery/update-card/generate', {
      key: apiKey,
      body: { paymentMethodToken: 'tok_decline_do_not_honor', transactionId },
    });
    const saved = await call(stack.baseUrl, 'POST', '/api/recovery/update-card/complete', {
      key: apiKey,
      body: { token: link.body.token, newPaymentMethodToken: newCard },
    });
    expect(saved.status).toBe(200);

    const doc = await poll(
      () => stack.stores.recoveries.find(account.id, transactionId),
      (d) => d?.paymentMethodToken === newCard && d.state !== 'processing',
    );
    // Not charged: its month's attempt is spent, and the old card is replaced, so the recovery ends.
    expect(doc).toMatchObject({
      state: 'failed',
      paymentMethodToken: newCard,
      ai: { reasoning: 'No attempt is allowed before the retry window closes.' },
    });
    expect(doc?.attempts).toHaveLength(1);
    expect(await charges(newCard)).toBe(1);
  });
});
