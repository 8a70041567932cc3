import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialsProblem } from '../activities/gateways/registry.js';
import { attemptKeyField, createStripeGateway } from '../activities/gateways/stripe.js';
import type { ChargeRequest, GatewayAdapter } from '../activities/gateways/types.js';
import { parseGateways } from '../cli/gateway-spec.js';
import { classifyDecline } from '../domain/declines.js';
import { sha256 } from '../runtime/crypto.js';
import { startStripeEmulator, type StripeEmulator } from './support/stripe-emulator.js';

let stripe: StripeEmulator;
let gateway: GatewayAdapter;
let n = 0;

beforeAll(async () => {
  stripe = await startStripeEmulator();
  gateway = createStripeGateway({ secretKey: stripe.secretKey, apiBase: stripe.url });
});
afterAll(() => stripe.close());

/** A saved card of a fresh customer, and a charge request for it with a fresh attempt key. */
function cardWith(answers: Parameters<StripeEmulator['addCard']>[1]['answers'], customer = true) {
  n += 1;
  const token = `pm_card${n}`;
  stripe.addCard(token, { customer: customer ? `cus_${n}` : null, answers });
  const req: ChargeRequest & { sentAt: number } = {
    token,
    amount: 1999,
    currency: 'EUR',
    paymentMethodType: 'card',
    idempotencyKey: `recovery-${n}/1`,
    sentAt: Date.now(),
  };
  return { token, customer: `cus_${n}`, req };
}

const intentsOf = (token: string) => stripe.intents().filter((i) => i.payment_method === token);

describe('Stripe adapter: a charge is one off-session PaymentIntent', () => {
  it("an approved charge names the card's customer, the attempt and the amount in minor units", async () => {
    const { token, customer, req } = cardWith(['approve']);
    const outcome = await gateway.charge(req);
    const [intent] = intentsOf(token);
    expect(outcome).toEqual({ kind: 'approved', gatewayTransactionId: intent!.id });
    expect(intent).toMatchObject({
      amount: 1999,
      currency: 'eur',
      customer,
      off_session: true,
      status: 'succeeded',
      metadata: { [attemptKeyField]: req.idempotencyKey },
    });
    expect(stripe.creations().filter((k) => k === req.idempotencyKey)).toHaveLength(1);
  });

  it('a retried attempt replays the first answer instead of charging twice', async () => {
    const { token, req } = cardWith(['approve']);
    const first = await gateway.charge(req);
    const again = await gateway.charge(req);
    expect(again).toEqual(first);
    expect(intentsOf(token)).toHaveLength(1);
  });

  it('a card without a customer is charged without one', async () => {
    const { token, req } = cardWith(['approve'], false);
    expect((await gateway.charge(req)).kind).toBe('approved');
    expect(intentsOf(token)[0]!.customer).toBeNull();
  });

  it.each([
    [{ decline: 'insufficient_funds' }, 'insufficient_funds', null],
    [{ decline: 'do_not_honor', advice: '24' }, 'do_not_honor', '24'],
    [{ decline: 'generic_decline', advice: '03' }, 'generic_decline', '03'],
    [{ decline: 'expired_card', code: 'expired_card' }, 'expired_card', null],
    [
      { decline: 'authentication_required', code: 'authentication_required' },
      'authentication_required',
      null,
    ],
  ])('a card error %j is a decline with code %s and advice %s', async (answer, code, advice) => {
    const { token, req } = cardWith([answer]);
    const outcome = await gateway.charge(req);
    expect(outcome).toEqual({
      kind: 'declined',
      code,
      advice,
      gatewayTransactionId: intentsOf(token)[0]!.id,
    });
  });

  it.each([
    [{ decline: 'generic_decline', adviceCode: 'do_not_try_again' }, 'do_not_try_again', null],
    [
      { decline: 'insufficient_funds', adviceCode: 'do_not_try_again', advice: '03' },
      'do_not_try_again',
      '03',
    ],
    [
      { decline: 'generic_decline', adviceCode: 'confirm_card_data' },
      'new_account_information_available',
      null,
    ],
    [{ decline: 'generic_decline', networkDecline: '43' }, 'stolen_card', null],
    [
      { decline: 'do_not_honor', networkDecline: '14', adviceCode: 'try_again_later' },
      'invalid_number',
      null,
    ],
  ])(
    'a card error %j is read by its stricter advice or network decline code: declined %s (advice %s), not retried',
    async (answer, code, advice) => {
      const { token, req } = cardWith([answer]);
      expect(await gateway.charge(req)).toEqual({
        kind: 'declined',
        code,
        advice,
        gatewayTransactionId: intentsOf(token)[0]!.id,
      });
      expect(classifyDecline(code).retryable).toBe(false);
    },
  );

  it('an advice or network decline code no stricter than Stripe’s decline code leaves it as it is', async () => {
    const cases = [
      // Stripe's guidance, formerly its deprecated decline codes, now comes as the advice code.
      [{ decline: 'generic_decline', adviceCode: 'do_not_try_again' }, 'do_not_try_again'],
      [{ decline: 'generic_decline', adviceCode: 'try_again_later' }, 'generic_decline'],
      [{ decline: 'do_not_honor', networkDecline: '51' }, 'do_not_honor'],
      [{ decline: 'insufficient_funds', networkDecline: 'N0' }, 'insufficient_funds'],
      [{ decline: 'stolen_card', adviceCode: 'do_not_try_again', networkDecline: '46' }, 'stolen_card'],
      [{ decline: 'expired_card', code: 'expired_card', adviceCode: 'confirm_card_data' }, 'expired_card'],
    ] as const;
    for (const [answer, code] of cases) {
      const { req } = cardWith([answer]);
      expect({ answer, outcome: await gateway.charge(req) }).toMatchObject({ answer, outcome: { code } });
    }
  });

  it('a card that no longer exists at Stripe is not chargeable, and nothing is created', async () => {
    const req = { ...cardWith(['approve']).req, token: 'pm_detached' };
    expect(await gateway.charge(req)).toEqual({
      kind: 'declined',
      code: 'card_no_longer_chargeable',
      advice: null,
      gatewayTransactionId: null,
      tokenRefused: true,
    });
    expect(intentsOf('pm_detached')).toHaveLength(0);
  });

  it('a card Stripe will not charge off-session any more is no longer chargeable', async () => {
    const { token, req } = cardWith(['unusable']);
    expect(await gateway.charge(req)).toEqual({
      kind: 'declined',
      code: 'card_no_longer_chargeable',
      advice: null,
      gatewayTransactionId: null,
      tokenRefused: true,
    });
    expect(intentsOf(token)).toHaveLength(0);
  });

  it('a card of the other mode than the key (a test key on live cards) throws: a configuration error, not a dead card', async () => {
    const req = { ...cardWith(['approve']).req, token: 'pm_live_card' };
    await expect(gateway.charge(req)).rejects.toThrow(/secret key is of the other mode/);
    expect(intentsOf('pm_live_card')).toHaveLength(0);
  });

  it('an amount under Stripe’s minimum is declined invalid_amount (not retried), not thrown for ever', async () => {
    const { token, req } = cardWith(['approve']);
    expect(await gateway.charge({ ...req, amount: 30, currency: 'USD' })).toEqual({
      kind: 'declined',
      code: 'invalid_amount',
      advice: null,
      gatewayTransactionId: null,
    });
    expect(intentsOf(token)).toHaveLength(0);
  });

  it('a currency Stripe does not charge (IRR) is declined request_refused, not retried, never thrown for ever', async () => {
    const { token, req } = cardWith(['approve']);
    expect(await gateway.charge({ ...req, currency: 'IRR' })).toEqual({
      kind: 'declined',
      code: 'request_refused',
      advice: null,
      gatewayTransactionId: null,
    });
    expect(intentsOf(token)).toHaveLength(0);
    // The card is not tried again for it; another gateway or payment method may take it.
    expect(classifyDecline('request_refused')).toMatchObject({
      retryable: false,
      allowsFallback: true,
      stopsImmediately: false,
      recommendedAction: 'manual_review',
    });
    // Stripe's currencies depend on the account's country: it still routes every currency.
    expect(gateway.capabilities.currencies).toBeNull();
  });

  it('the account’s payment volume limit throws (the activity retries until it lifts): not a refusal for good', async () => {
    const { token, req } = cardWith(['volume_limit']);
    await expect(gateway.charge(req)).rejects.toThrow(/weekly volume limit/);
    expect(intentsOf(token)).toHaveLength(0);
  });

  it('a wrong key throws (the activity retries) and charges nothing', async () => {
    const { token, req } = cardWith(['approve']);
    const wrong = createStripeGateway({ secretKey: 'sk_test_wrong', apiBase: stripe.url });
    await expect(wrong.charge(req)).rejects.toThrow(/Invalid API Key/);
    expect(intentsOf(token)).toHaveLength(0);
  });
});

describe('Stripe adapter: every attempt key reaches Stripe', () => {
  it('a key no header carries (a merchant’s inv-€-✓) is charged once: Stripe’s key is its SHA-256, the metadata names it', async () => {
    const { token, req } = cardWith(['approve']);
    const key = `recovery/acct_x/inv-€-✓-${n}/1`;
    const first = await gateway.charge({ ...req, idempotencyKey: key });
    expect(first.kind).toBe('approved');
    expect(await gateway.charge({ ...req, idempotencyKey: key })).toEqual(first);
    expect(intentsOf(token)).toEqual([
      expect.objectContaining({ metadata: { [attemptKeyField]: key }, status: 'succeeded' }),
    ]);
    expect(stripe.creations().filter((k) => k === sha256(key))).toHaveLength(2);
    // Its lookup finds it by the key as it is.
    expect(await gateway.lookup({ ...req, idempotencyKey: key })).toEqual(first);
  });

  it('a key a header carries as it is (Latin-1 included) is sent unchanged: an attempt under way keeps its key', async () => {
    const { req } = cardWith(['approve']);
    const key = `recovery/acct_x/facture-été-${n}/1`;
    await gateway.charge({ ...req, idempotencyKey: key });
    // The header goes out as UTF-8 bytes (the emulator's server reads them as Latin-1).
    const received = stripe.creations().map((k) => Buffer.from(k, 'latin1').toString('utf8'));
    expect(received).toContain(key);
  });
});

describe("Stripe adapter: a charge sent again after Stripe's key may be gone (24 h) looks the attempt up first", () => {
  const day = 24 * 60 * 60 * 1000;

  it('a charge approved a day ago, whose answer was never stored, is found, not made again', async () => {
    const { token, req } = cardWith(['approve']);
    const first = await gateway.charge(req);
    expect(first.kind).toBe('approved');
    stripe.forgetKeys();
    const later = createStripeGateway(
      { secretKey: stripe.secretKey, apiBase: stripe.url },
      () => new Date(req.sentAt + day),
    );
    expect(await later.charge({ ...req, firstSentAt: req.sentAt })).toEqual(first);
    expect(intentsOf(token)).toHaveLength(1);
  });

  it('with no PaymentIntent of the attempt at Stripe (its first try never reached it), the charge is made', async () => {
    const { token, req } = cardWith(['approve']);
    const later = createStripeGateway(
      { secretKey: stripe.secretKey, apiBase: stripe.url },
      () => new Date(req.sentAt + day),
    );
    expect((await later.charge({ ...req, firstSentAt: req.sentAt })).kind).toBe('approved');
    expect(intentsOf(token)).toHaveLength(1);
  });
});

describe("Stripe adapter: amounts go in Stripe's units, which are not always ISO 4217's", () => {
  it.each([
    [5000, 'ISK', 500000, '5,000 kr: Stripe writes ISK with two decimals that must be 00'],
    [5050, 'ISK', 505000, '5,050 kr (Stripe refuses 5050: not a multiple of 100)'],
    [5000, 'UGX', 500000, 'USh 5,000: UGX too'],
    [100000, 'MGA', 1000, 'Ar 1,000.00: MGA is zero-decimal at Stripe'],
    [5120, 'KWD', 5120, '5.120 KWD: three decimals, the last 0'],
    [500050, 'HUF', 500050, '5,000.50 Ft: HUF charges keep two decimals'],
  ])('%i %s (ISO minor units) is charged as %i: %s', async (amount, currency, stripeAmount) => {
    const { token, req } = cardWith(['approve']);
    expect((await gateway.charge({ ...req, amount, currency })).kind).toBe('approved');
    expect(intentsOf(token)).toEqual([
      expect.objectContaining({ amount: stripeAmount, currency: currency.toLowerCase() }),
    ]);
  });

  it.each([
    [100050, 'MGA', 'Ar 1,000.50: Stripe charges whole ariary'],
    [5124, 'KWD', '5.124 KWD: the last digit must be 0 at Stripe'],
  ])(
    '%i %s cannot be charged exactly (%s): declined invalid_amount, nothing sent, never rounded',
    async (amount, currency) => {
      const { token, req } = cardWith(['approve']);
      expect(await gateway.charge({ ...req, amount, currency })).toEqual({
        kind: 'declined',
        code: 'invalid_amount',
        advice: null,
        gatewayTransactionId: null,
      });
      expect(intentsOf(token)).toHaveLength(0);
      expect(stripe.creations()).not.toContain(req.idempotencyKey);
    },
  );
});

describe('Stripe adapter: a lost answer is ambiguous and looked up, never charged again', () => {
  it('a charge whose answer is lost is found by its attempt key among the customer’s other payments', async () => {
    const { token, customer, req } = cardWith(['lost']);
    // More than one page of the customer's other payments after it, so the lookup has to page.
    const outcome = await gateway.charge(req);
    expect(outcome.kind).toBe('ambiguous');
    for (let i = 0; i < 120; i += 1) stripe.addIntent({ customer });
    const found = await gateway.lookup(req);
    expect(found).toEqual({ kind: 'approved', gatewayTransactionId: intentsOf(token)[0]!.id });
    expect(intentsOf(token)).toHaveLength(1);
  });

  it('a 500 before charging is ambiguous, and the lookup finds nothing was charged', async () => {
    const { token, req } = cardWith(['server_error']);
    expect((await gateway.charge(req)).kind).toBe('ambiguous');
    const found = await gateway.lookup(req);
    expect(found).toEqual({ kind: 'not_found' });
    expect(intentsOf(token)).toHaveLength(0);
  });

  it('a looked-up decline keeps its code and advice', async () => {
    const { req } = cardWith([{ decline: 'do_not_honor', advice: '24' }]);
    await gateway.charge(req);
    const found = await gateway.lookup(req);
    expect(found).toMatchObject({ kind: 'declined', code: 'do_not_honor', advice: '24' });
  });

  it('a looked-up decline (the PaymentIntent’s last_payment_error) is read by its advice code too', async () => {
    const { req } = cardWith([{ decline: 'generic_decline', adviceCode: 'do_not_try_again', advice: '21' }]);
    await gateway.charge(req);
    expect(await gateway.lookup(req)).toMatchObject({
      kind: 'declined',
      code: 'do_not_try_again',
      advice: '21',
    });
  });

  it('while Stripe still processes the lost request, the lookup concludes nothing (it fails, to be retried) until the payment is there', async () => {
    const slowMs = 3_000;
    const { token, req } = cardWith([{ slowMs }]);
    const sent = Date.now();
    expect((await gateway.charge(req)).kind).toBe('ambiguous');
    // Nothing is listed yet, but the request is still under way at Stripe: not "never charged".
    expect(intentsOf(token)).toHaveLength(0);
    await expect(gateway.lookup(req)).rejects.toThrow(/no answer/);
    await new Promise((done) => setTimeout(done, sent + slowMs + 200 - Date.now()));
    const [intent] = intentsOf(token);
    expect(await gateway.lookup(req)).toEqual({ kind: 'approved', gatewayTransactionId: intent!.id });
    expect(intentsOf(token)).toHaveLength(1);
  });

  it('once a stop was asked (readOnly), the lookup only reads: nothing is sent again, and none listed is not_found only once the lost request cannot still be under way', async () => {
    const { token, req } = cardWith(['approve']);
    await expect(gateway.lookup({ ...req, readOnly: true })).rejects.toThrow(/looking again/);
    const settled = { ...req, sentAt: Date.now() - 5 * 60_000, readOnly: true };
    expect(await gateway.lookup(settled)).toEqual({ kind: 'not_found' });
    expect(intentsOf(token)).toHaveLength(0);
    expect(stripe.creations()).not.toContain(req.idempotencyKey);
  });

  it('a lost request that never reached Stripe is sent again by the lookup under its key: charged once, and only within Stripe’s key window', async () => {
    const { token, req } = cardWith(['approve']);
    const found = await gateway.lookup(req);
    const [intent] = intentsOf(token);
    expect(found).toEqual({ kind: 'approved', gatewayTransactionId: intent!.id });
    expect(await gateway.lookup(req)).toEqual(found);
    expect(intentsOf(token)).toHaveLength(1);
    // A day after the attempt was first sent Stripe may have dropped the key: the lookup only reads.
    const other = cardWith(['approve']);
    const later = createStripeGateway(
      { secretKey: stripe.secretKey, apiBase: stripe.url },
      () => new Date(other.req.sentAt + 24 * 60 * 60 * 1000),
    );
    expect(await later.lookup({ ...other.req, firstSentAt: other.req.sentAt })).toEqual({
      kind: 'not_found',
    });
    expect(intentsOf(other.token)).toHaveLength(0);
  });
});

describe('Stripe adapter: what it offers and how it is configured', () => {
  it('has no account-updater token (Stripe updates saved cards in place); new cards go through Stripe Checkout', () => {
    expect('refreshCard' in gateway).toBe(false);
    expect('tokenize' in gateway).toBe(false);
    expect(gateway.hostedCardForm).toBeDefined();
    expect(gateway.capabilities.wallets).toEqual(['apple_pay', 'google_pay']);
  });

  it.each([
    [{}, /secretKey/],
    [{ secretKey: 'pk_live_abc' }, /secretKey: must be a Stripe secret key/],
    [{ secretKey: 'sk_live_abc', apiBase: 'ftp://x' }, /apiBase/],
    [{ secretKey: 'sk_live_abc', extra: 'x' }, /extra/],
  ])('credentials %j are refused by the operator CLI', (credentials, problem) => {
    expect(credentialsProblem('stripe', credentials as Record<string, string>)).toMatch(problem);
    expect(() => parseGateways(`stripe:${JSON.stringify(credentials)}`, [])).toThrow(problem);
  });

  it('a Stripe gateway with a secret key is configured by the operator CLI', () => {
    expect(parseGateways('stripe:{"secretKey":"sk_live_abc"}', ['test'])).toEqual([
      { name: 'stripe', kind: 'stripe', test: false, credentials: { secretKey: 'sk_live_abc' } },
      { name: 'test', kind: 'test', test: true, credentials: {} },
    ]);
  });
});
