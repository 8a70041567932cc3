import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BraintreeCredentials, createBraintreeGateway } from '../activities/gateways/braintree.js';
import { credentialsProblem } from '../activities/gateways/registry.js';
import type { ChargeRequest, GatewayAdapter } from '../activities/gateways/types.js';
import { routeOptions } from '../activities/gateways/routing.js';
import { parseGateways } from '../cli/gateway-spec.js';
import { classifyDecline } from '../domain/declines.js';
import { gatewayKinds, tokenExamples, tokenFitsKind } from '../domain/gateway-kinds.js';
import { recoveryRequestFor } from '../domain/recovery-request.js';
import {
  startBraintreeEmulator,
  type BraintreeEmulator,
  type EmulatedAnswer,
} from './support/braintree-emulator.js';

let braintree: BraintreeEmulator;
let gateway: GatewayAdapter;
let n = 0;

beforeAll(async () => {
  braintree = await startBraintreeEmulator();
  gateway = createBraintreeGateway(BraintreeCredentials.parse(braintree.credentials), () => new Date());
});
afterAll(() => braintree.close());
afterEach(() => {
  braintree.searchLag(0);
  braintree.failWith(null);
});

/** A vaulted card of a fresh customer, and a charge request for it with a fresh attempt key. */
function cardWith(answers: EmulatedAnswer[], currency = 'USD', amount = 1999) {
  n += 1;
  const customerId = `customer${n}`;
  braintree.addPaymentMethod(`card${n}`, { customerId, answers });
  const req: ChargeRequest & { sentAt: number } = {
    token: `card${n}|${customerId}`,
    amount,
    currency,
    paymentMethodType: 'card',
    idempotencyKey: `recovery-${n}/1`,
    sentAt: Date.now(),
  };
  return { paymentMethodToken: `card${n}`, customerId, req };
}

const salesOf = (token: string) => braintree.transactions().filter((t) => t.paymentMethodToken === token);
const lookupOf = (req: ChargeRequest & { sentAt: number }) => gateway.lookup(req);

describe('Braintree adapter: a charge is one recurring sale of the vaulted payment method', () => {
  it('an approved sale goes through the merchant account of the currency, with the attempt as its order id', async () => {
    const { paymentMethodToken, customerId, req } = cardWith(['approve']);
    const outcome = await gateway.charge(req);
    const [sale] = salesOf(paymentMethodToken);
    expect(outcome).toEqual({ kind: 'approved', gatewayTransactionId: sale!.id });
    expect(sale).toMatchObject({
      amount: '19.99',
      currencyIsoCode: 'USD',
      merchantAccountId: 'acme_usd',
      orderId: req.idempotencyKey,
      customerId,
      transactionSource: 'recurring',
      submitForSettlement: true,
      status: 'submitted_for_settlement',
    });
  });

  it.each([
    ['EUR', 4900, 'acme_eur', '49.00'],
    ['JPY', 4900, 'acme_jpy', '4900'],
  ])('a %s payment of %i minor units goes through %s as %s', async (currency, amount, account, sent) => {
    const { paymentMethodToken, req } = cardWith(['approve'], currency, amount);
    expect((await gateway.charge(req)).kind).toBe('approved');
    expect(salesOf(paymentMethodToken)[0]).toMatchObject({ merchantAccountId: account, amount: sent });
  });

  it('a retried attempt answers with the sale an earlier try made instead of selling again', async () => {
    const { paymentMethodToken, req } = cardWith(['approve']);
    const first = await gateway.charge(req);
    expect(await gateway.charge(req)).toEqual(first);
    expect(salesOf(paymentMethodToken)).toHaveLength(1);
  });

  it.each([
    [{ decline: '2001' }, 'insufficient_funds', null],
    [{ decline: '2000', advice: '24' }, 'do_not_honor', '24'],
    [{ decline: '2004' }, 'expired_card', null],
    [{ decline: '2014' }, 'fraud_suspected', null],
    [{ decline: '2099' }, 'authentication_required', null],
    [{ decline: '2999' }, '2999', null],
    [{ reject: 'fraud' }, 'fraudulent', null],
    [{ reject: 'cvv' }, 'incorrect_cvc', null],
    [{ reject: 'three_d_secure' }, 'authentication_required', null],
    ['failed', 'processing_error', null],
  ] as const)('a sale answered %j is a decline with code %s and advice %s', async (answer, code, advice) => {
    const { paymentMethodToken, req } = cardWith([answer]);
    expect(await gateway.charge(req)).toEqual({
      kind: 'declined',
      code,
      advice,
      gatewayTransactionId: salesOf(paymentMethodToken)[0]!.id,
    });
  });

  it.each([
    [{ reject: 'excessive_retry' }, 'excessive_retry', 'request_card_update'],
    [{ decline: '2023', hard: true }, 'hard_decline', 'request_card_update'],
  ] as const)(
    'a sale answered %j is declined %s, which stops its retries (not a retried processing_error)',
    async (answer, code, action) => {
      const { paymentMethodToken, req } = cardWith([answer]);
      expect(await gateway.charge(req)).toEqual({
        kind: 'declined',
        code,
        advice: null,
        gatewayTransactionId: salesOf(paymentMethodToken)[0]!.id,
      });
      expect(classifyDecline(code)).toMatchObject({
        retryable: false,
        allowsFallback: true,
        stopsImmediately: false,
        recommendedAction: action,
      });
    },
  );

  it.each(['application_incomplete', 'manual_transactions_disabled'])(
    'a sale rejected for the merchant account’s setup (%s) is a processing_error, retried once it is fixed',
    async (reject) => {
      const { req } = cardWith([{ reject }]);
      expect(await gateway.charge(req)).toMatchObject({ kind: 'declined', code: 'processing_error' });
      expect(classifyDecline('processing_error')).toMatchObject({ retryable: true });
    },
  );

  it('a hard decline keeps a code Recoup names, and a soft one with a code it does not is kept as it is', async () => {
    const hard = cardWith([{ decline: '2001', hard: true }]);
    expect(await gateway.charge(hard.req)).toMatchObject({ code: 'insufficient_funds' });
    const soft = cardWith([{ decline: '2023' }]);
    expect(await gateway.charge(soft.req)).toMatchObject({ code: '2023' });
  });

  it('a payment method Braintree blocks can never be charged there: refused, not remembered as an issuer’s block', async () => {
    const { paymentMethodToken, req } = cardWith([{ reject: 'payment_method_blocked' }]);
    expect(await gateway.charge(req)).toEqual({
      kind: 'declined',
      code: 'card_no_longer_chargeable',
      advice: null,
      gatewayTransactionId: salesOf(paymentMethodToken)[0]!.id,
      tokenRefused: true,
    });
  });

  it.each([
    [{ code: '81528', attribute: 'amount', message: 'Amount is too large.' }, 'invalid_amount'],
    [
      { code: '91537', attribute: 'purchase_order_number', message: 'Purchase order number is too long.' },
      'request_refused',
    ],
  ])(
    'a validation error %j is declined %s at once, nothing sold, never retried for ever',
    async (invalid, code) => {
      const { paymentMethodToken, req } = cardWith([{ invalid }]);
      expect(await gateway.charge(req)).toEqual({
        kind: 'declined',
        code,
        advice: null,
        gatewayTransactionId: null,
      });
      expect(salesOf(paymentMethodToken)).toHaveLength(0);
    },
  );

  it('a merchant account Braintree has suspended throws: the operator’s to fix, retried meanwhile', async () => {
    const { paymentMethodToken, req } = cardWith([
      {
        invalid: {
          code: '91514',
          attribute: 'merchant_account_id',
          message: 'Merchant account is suspended.',
        },
      },
    ]);
    await expect(gateway.charge(req)).rejects.toThrow(/91514 Merchant account is suspended/);
    expect(salesOf(paymentMethodToken)).toHaveLength(0);
  });

  it.each([
    ['a token that is not in the vault', 'missing|customer0'],
    ['a payment method of another customer', null],
  ])('%s can never be charged, and nothing is sold', async (_, token) => {
    const { paymentMethodToken, req } = cardWith(['approve']);
    const charged = await gateway.charge({ ...req, token: token ?? `${paymentMethodToken}|someone-else` });
    expect(charged).toEqual({
      kind: 'declined',
      code: 'card_no_longer_chargeable',
      advice: null,
      gatewayTransactionId: null,
      tokenRefused: true,
    });
    expect(braintree.transactions().filter((t) => t.orderId === req.idempotencyKey)).toHaveLength(0);
  });

  it.each([
    [401, /Authentication Error/],
    [429, /Too Many Requests/],
  ])('a %i throws (the activity retries) and sells nothing', async (status, message) => {
    const { paymentMethodToken, req } = cardWith(['approve']);
    braintree.failWith(status);
    await expect(gateway.charge(req)).rejects.toThrow(message);
    expect(salesOf(paymentMethodToken)).toHaveLength(0);
  });
});

describe('Braintree adapter: a lost answer is ambiguous and looked up by order id, never sold again', () => {
  it('a sale whose answer is lost is found by its order id', async () => {
    const { paymentMethodToken, req } = cardWith(['lost']);
    expect((await gateway.charge(req)).kind).toBe('ambiguous');
    const sales = salesOf(paymentMethodToken);
    expect(await lookupOf(req)).toEqual({ kind: 'approved', gatewayTransactionId: sales[0]!.id });
    expect(sales).toHaveLength(1);
  });

  it("a 500 before selling is ambiguous; the lookup concludes nothing was sold only once Braintree's search has had two minutes", async () => {
    const { paymentMethodToken, req } = cardWith(['server_error']);
    expect((await gateway.charge(req)).kind).toBe('ambiguous');
    // Too soon: the search may not show the sale yet, so the lookup fails and is retried.
    await expect(lookupOf(req)).rejects.toThrow(/no sale .* yet/);
    expect(await lookupOf({ ...req, sentAt: Date.now() - 2 * 60_000 })).toEqual({ kind: 'not_found' });
    expect(salesOf(paymentMethodToken)).toHaveLength(0);
  });

  it('a sale still authorizing is ambiguous, and the lookup waits (fails, to be retried) until it is answered', async () => {
    const { paymentMethodToken, req } = cardWith(['authorizing']);
    expect(await gateway.charge(req)).toMatchObject({ kind: 'ambiguous', reason: /authorizing/ });
    await expect(lookupOf(req)).rejects.toThrow(/still authorizing/);
    // A retried attempt does not sell again while the first sale is pending.
    expect((await gateway.charge(req)).kind).toBe('ambiguous');
    expect(salesOf(paymentMethodToken)).toHaveLength(1);
  });

  it('a looked-up decline keeps its code and advice', async () => {
    const { req } = cardWith([{ decline: '2000', advice: '24' }]);
    await gateway.charge(req);
    expect(await lookupOf(req)).toMatchObject({ kind: 'declined', code: 'do_not_honor', advice: '24' });
  });

  const twoSales: Array<[Array<Parameters<BraintreeEmulator['addSale']>[2]>, string]> = [
    [[{ decline: '2001' }, 'approve'], 'the declined one listed first'],
    [['authorizing', 'approve'], 'one still authorizing listed first'],
    [['approve', { decline: '2001' }], 'the declined one listed after'],
  ];
  it.each(twoSales)(
    'of two sales with the attempt’s order id (%j: %s), the approved one is the answer, for the lookup and a retried charge',
    async (answers) => {
      const { paymentMethodToken, req } = cardWith(['approve']);
      const sales = [];
      for (const answer of answers)
        sales.push(await braintree.addSale(paymentMethodToken, req.idempotencyKey, answer));
      const approved = sales.find((s) => s.status === 'submitted_for_settlement')!;
      expect(await lookupOf(req)).toEqual({ kind: 'approved', gatewayTransactionId: approved.id });
      expect(await gateway.charge(req)).toEqual({ kind: 'approved', gatewayTransactionId: approved.id });
      expect(salesOf(paymentMethodToken)).toHaveLength(2);
    },
  );

  it('of a declined sale and one still authorizing, the lookup waits for the pending one', async () => {
    const { paymentMethodToken, req } = cardWith(['approve']);
    await braintree.addSale(paymentMethodToken, req.idempotencyKey, { decline: '2001' });
    await braintree.addSale(paymentMethodToken, req.idempotencyKey, 'authorizing');
    await expect(lookupOf(req)).rejects.toThrow(/still authorizing/);
  });

  it("a retry the search cannot see yet is stopped by Braintree's duplicate checking, and the lookup finds the one sale", async () => {
    braintree.searchLag(2_000);
    const { paymentMethodToken, req } = cardWith(['lost', 'approve']);
    expect((await gateway.charge(req)).kind).toBe('ambiguous');
    // The worker died with the answer; the activity tries again before the search index has the sale.
    expect(await gateway.charge(req)).toMatchObject({ kind: 'ambiguous', reason: /duplicate/ });
    const sales = salesOf(paymentMethodToken);
    expect(sales.map((s) => s.status)).toEqual(['submitted_for_settlement', 'gateway_rejected']);
    braintree.searchLag(0);
    expect(await lookupOf(req)).toEqual({ kind: 'approved', gatewayTransactionId: sales[0]!.id });
  });
});

describe('Braintree adapter: an attempt a new worker sends again after a crash is never sold twice', () => {
  // Braintree, the adapter and the recovery on one clock the test moves.
  let now = Date.UTC(2026, 5, 1, 9);
  let onClock: BraintreeEmulator;
  let adapter: GatewayAdapter;
  beforeAll(async () => {
    onClock = await startBraintreeEmulator(() => new Date(now));
    adapter = createBraintreeGateway(BraintreeCredentials.parse(onClock.credentials), () => new Date(now));
  });
  afterAll(() => onClock.close());

  it("the replay's charge, with the workflow's fresh sentAt 45 s on, does not sell while the search lags: the first try's time counts", async () => {
    onClock.searchLag(2 * 60_000);
    onClock.addPaymentMethod('crashed', { customerId: 'crashed-customer', answers: ['lost', 'approve'] });
    const firstSentAt = now;
    const firstTry: ChargeRequest = {
      token: 'crashed|crashed-customer',
      amount: 1999,
      currency: 'USD',
      paymentMethodType: 'card',
      idempotencyKey: 'recovery-crashed/1',
      sentAt: firstSentAt,
      firstSentAt,
    };
    // The sale goes through, but its answer never reaches the worker: it died with the charge in flight.
    expect((await adapter.charge(firstTry)).kind).toBe('ambiguous');
    // Another worker replays the workflow task 45 s later (past Braintree's 30 s duplicate window): the
    // workflow decides the attempt again at its own time; the attempt's claim says when it was first sent.
    now += 45_000;
    const replay = { ...firstTry, sentAt: now };
    expect(await adapter.charge(replay)).toMatchObject({ kind: 'ambiguous', reason: /retried attempt/ });
    expect(onClock.transactions()).toHaveLength(1);
    // Once the search shows the sale, the lookup answers with it.
    now += 2 * 60_000;
    const [sale] = onClock.transactions();
    expect(await adapter.lookup(replay)).toEqual({ kind: 'approved', gatewayTransactionId: sale!.id });
    expect(onClock.transactions()).toHaveLength(1);
  });
});

describe("Braintree adapter: a connector's recovery charges the past-due subscription itself", () => {
  /** A past-due $19.99 subscription on a fresh card, and a charge of it through the subscription. */
  async function pastDue(answers: EmulatedAnswer[]) {
    const card = cardWith(answers);
    const subscriptionId = `sub${n}`;
    await braintree.addPastDueSubscription(subscriptionId, {
      paymentMethodToken: card.paymentMethodToken,
      balance: '19.99',
      decline: '2001',
    });
    return { ...card, subscriptionId, req: { ...card.req, subscriptionId } };
  }
  const newSales = (subscriptionId: string) =>
    braintree.transactions().filter((t) => t.subscriptionId === subscriptionId && t.orderId !== '');

  it('an approved charge is a sale of the subscription with the attempt as order id; the subscription is paid up', async () => {
    const { subscriptionId, req } = await pastDue(['approve']);
    const outcome = await gateway.charge(req);
    const [sale] = newSales(subscriptionId);
    expect(outcome).toEqual({ kind: 'approved', gatewayTransactionId: sale!.id });
    // The subscription's own merchant account and card: no merchant account of the adapter is involved.
    expect(sale).toMatchObject({
      amount: '19.99',
      orderId: req.idempotencyKey,
      merchantAccountId: 'acme_usd',
    });
    expect(braintree.subscription(subscriptionId)).toMatchObject({ status: 'Active', balance: '0.00' });
    // A retried attempt finds its sale; Braintree would not charge an active subscription anyway.
    expect(await gateway.charge(req)).toEqual(outcome);
    expect(newSales(subscriptionId)).toHaveLength(1);
  });

  it('a declined charge keeps the subscription past due, with the decline named as usual', async () => {
    const { subscriptionId, req } = await pastDue([{ decline: '2001' }]);
    expect(await gateway.charge(req)).toMatchObject({ kind: 'declined', code: 'insufficient_funds' });
    expect(braintree.subscription(subscriptionId)).toMatchObject({ status: 'Past Due', balance: '19.99' });
  });

  it('a card the customer saved since is put on the subscription before it is charged', async () => {
    const { subscriptionId, req, customerId } = await pastDue([{ decline: '2001' }]);
    braintree.addPaymentMethod(`fresh${n}`, { customerId, answers: ['approve'] });
    const outcome = await gateway.charge({ ...req, token: `fresh${n}|${customerId}` });
    expect(outcome.kind).toBe('approved');
    expect(newSales(subscriptionId)).toMatchObject([{ paymentMethodToken: `fresh${n}` }]);
    expect(braintree.subscription(subscriptionId)).toMatchObject({
      status: 'Active',
      paymentMethodToken: `fresh${n}`,
    });
  });

  it('a subscription collected meanwhile by Braintree is not charged: subscription_not_past_due, which ends the recovery', async () => {
    const { subscriptionId, req } = await pastDue(['approve']);
    await braintree.retryOnBraintree(subscriptionId, 'approve');
    expect(await gateway.charge(req)).toEqual({
      kind: 'declined',
      code: 'subscription_not_past_due',
      advice: null,
      gatewayTransactionId: null,
    });
    expect(newSales(subscriptionId)).toHaveLength(0);
    expect(classifyDecline('subscription_not_past_due')).toMatchObject({
      retryable: false,
      allowsFallback: false,
      recommendedAction: 'monitor',
      // Says nothing about the card: not remembered as blocked (unlike a lost card).
      aboutTheCard: false,
    });
    expect(classifyDecline('lost_card').aboutTheCard).toBe(true);
  });

  it('a retry within 30 s that the lagging search cannot see answers with the sale the paid-up subscription lists, not subscription_not_past_due', async () => {
    braintree.searchLag(2 * 60_000);
    const { subscriptionId, req } = await pastDue(['approve']);
    const first = await gateway.charge(req);
    const [sale] = newSales(subscriptionId);
    expect(first).toEqual({ kind: 'approved', gatewayTransactionId: sale!.id });
    // The sale went through but was not stored (the worker died, or the store failed): the activity tries
    // the same attempt again at once, and the search does not show the sale yet.
    expect(await gateway.charge(req)).toEqual(first);
    expect(newSales(subscriptionId)).toHaveLength(1);
  });

  it('a retry within 30 s of a declined try answers with its decline, without selling again', async () => {
    braintree.searchLag(2 * 60_000);
    const { subscriptionId, req } = await pastDue([{ decline: '2001' }, 'approve']);
    const first = await gateway.charge(req);
    expect(first).toMatchObject({ kind: 'declined', code: 'insufficient_funds' });
    // Still past due: the subscription's list, not its status, shows the attempt was made.
    expect(await gateway.charge(req)).toEqual(first);
    expect(newSales(subscriptionId)).toHaveLength(1);
  });

  it('a lost answer is looked up by order id like any sale', async () => {
    const { subscriptionId, req } = await pastDue(['lost']);
    expect((await gateway.charge(req)).kind).toBe('ambiguous');
    const [sale] = newSales(subscriptionId);
    expect(await lookupOf(req)).toEqual({ kind: 'approved', gatewayTransactionId: sale!.id });
  });
});

describe('Braintree adapter: cards on file for the card health sweep', () => {
  it("lists each customer's default card by expiry month, this month and the next four, with the customer's email", async () => {
    const now = new Date();
    const month = (ahead: number) => {
      const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + ahead, 1));
      return { expMonth: d.getUTCMonth() + 1, expYear: d.getUTCFullYear() };
    };
    const card = (token: string, ahead: number, isDefault = true) => ({
      token,
      cardType: 'American Express',
      last4: '0005',
      ...month(ahead),
      default: isDefault,
    });
    braintree.addCustomer({ id: 'sweep1', email: 'one@example.com', cards: [card('s1', 0)] });
    braintree.addCustomer({ id: 'sweep2', email: null, cards: [card('s2', 4)] });
    // Not the default card: renewals are not charged to it.
    braintree.addCustomer({
      id: 'sweep3',
      email: 'three@example.com',
      cards: [card('s3a', 1, false), card('s3b', 12)],
    });
    // Beyond the months the sweep can warn about.
    braintree.addCustomer({ id: 'sweep4', email: 'four@example.com', cards: [card('s4', 5)] });
    const pages = [];
    let after: string | null = null;
    do {
      const page = await gateway.listCards!(after);
      pages.push(page.cards);
      after = page.next;
    } while (after !== null);
    expect(pages).toHaveLength(5);
    expect(pages.flat()).toEqual([
      { token: 's1|sweep1', brand: 'amex', last4: '0005', ...month(0), customerEmail: 'one@example.com' },
      { token: 's2|sweep2', brand: 'amex', last4: '0005', ...month(4), customerEmail: null },
    ]);
  });
});

describe('Braintree adapter: what it offers and how it is configured', () => {
  it('charges vaulted cards and wallets in the currencies it has merchant accounts for; no updater token, no card form', () => {
    expect(gateway.capabilities).toEqual({
      wallets: ['apple_pay', 'google_pay', 'paypal', 'venmo'],
      currencies: ['USD', 'EUR', 'JPY'],
    });
    expect('refreshCard' in gateway).toBe(false);
    expect('tokenize' in gateway).toBe(false);
    expect('hostedCardForm' in gateway).toBe(false);
  });

  it('routing skips a Braintree gateway for a currency it has no merchant account in', () => {
    const gateways = [
      { name: 'braintree', kind: 'braintree' as const, ...gateway.capabilities },
      { name: 'braintree-2', kind: 'braintree' as const, wallets: [], currencies: ['GBP'] },
    ];
    const route = (currency: string) =>
      routeOptions(gateways, 'card1|customer1', 'card', [], currency).map((o) => o.gateway);
    expect(route('EUR')).toEqual(['braintree']);
    expect(route('GBP')).toEqual(['braintree-2']);
    expect(route('CHF')).toEqual([]);
  });

  it('no example token of one kind has another kind’s shape: each kind’s tokens route to its own gateways only', () => {
    for (const kind of gatewayKinds)
      for (const token of tokenExamples(kind))
        expect({ token, kinds: gatewayKinds.filter((k) => tokenFitsKind(k, token)) }).toEqual({
          token,
          kinds: [kind],
        });
  });

  it('routes PayPal’s billing agreements and references to PayPal only, never to Braintree (which vaults PayPal accounts as its own tokens)', () => {
    const paypal = {
      name: 'paypal',
      kind: 'paypal' as const,
      wallets: ['paypal' as const],
      currencies: null,
    };
    const bt = { name: 'braintree', kind: 'braintree' as const, ...gateway.capabilities };
    const agreement = 'billing-agreement|B-7AB12345CD678901E';
    const reference = 'reference|9XW12345AB678901C';
    const route = (gateways: Array<typeof paypal | typeof bt>, token: string) =>
      routeOptions(gateways, token, 'paypal', [], 'USD').map((o) => `${o.gateway}:${o.role}`);
    expect(route([paypal, bt], agreement)).toEqual(['paypal:primary']);
    expect(route([paypal, bt], reference)).toEqual(['paypal:primary']);
    // With Braintree first, the PayPal token still goes to PayPal alone.
    expect(route([bt, paypal], agreement)).toEqual(['paypal:backup_gateway']);
    // A PayPal account vaulted in Braintree is a Braintree token, charged there.
    expect(route([paypal, bt], 'pp_token7|customer1')).toEqual(['braintree:backup_gateway']);
    // And an account whose primary gateway is Braintree does not take PayPal's tokens at intake.
    for (const token of [agreement, reference])
      expect(
        recoveryRequestFor('braintree').safeParse({ amount: 1000, paymentMethodToken: token }).success,
      ).toBe(false);
  });

  const valid = {
    merchantId: 'acme',
    publicKey: 'pub',
    privateKey: 'priv',
    environment: 'production',
    merchantAccounts: 'USD:acme_usd',
  };
  it.each([
    [{ ...valid, merchantId: undefined }, /merchantId/],
    [{ ...valid, environment: 'live' }, /environment/],
    [
      { ...valid, merchantAccounts: 'acme_usd' },
      /merchantAccounts: must list CURRENCY:merchantAccountId pairs/,
    ],
    [{ ...valid, merchantAccounts: 'USD:a,USD:b' }, /merchantAccounts: must name each currency once/],
    [{ ...valid, merchantAccounts: 'XXY:a' }, /merchantAccounts: must use ISO 4217/],
    [{ ...valid, extra: 'x' }, /extra/],
  ])('credentials %j are refused by the operator CLI', (credentials, problem) => {
    expect(credentialsProblem('braintree', credentials as Record<string, string>)).toMatch(problem);
    expect(() => parseGateways(`braintree:${JSON.stringify(credentials)}`, [])).toThrow(problem);
  });

  it('a Braintree gateway with its keys and merchant accounts is configured by the operator CLI', () => {
    expect(parseGateways(`braintree:${JSON.stringify(valid)}`, [])).toEqual([
      { name: 'braintree', kind: 'braintree', test: false, credentials: valid },
    ]);
  });
});
