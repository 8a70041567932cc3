import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConnectorConfig } from '../activities/connectors/registry.js';
import type { GatewayConfig } from '../domain/settings.js';
import { cardKeyOf } from '../runtime/crypto.js';
import { startBraintreeEmulator, type BraintreeEmulator } from './support/braintree-emulator.js';
import { postWebhook, recoveryOfInvoice, writtenBack } from './support/connectors.js';
import { call, startStack, type Stack } from './support/stack.js';

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

/** An account whose gateway is Braintree (the emulator), with the Braintree connector set. */
async function connectedAccount(settings: Record<string, unknown> = {}) {
  const gateways: GatewayConfig[] = [
    { name: 'braintree', kind: 'braintree', test: false, credentials: braintree.credentials },
  ];
  const { account, apiKey } = await stack.createAccount(settings, gateways);
  const parsed = parseConnectorConfig('braintree', {}, gateways);
  if (!('config' in parsed)) throw new Error(parsed.problem);
  await stack.stores.accounts.setConnector(account.id, 'braintree', parsed.config);
  return { accountId: account.id, apiKey };
}

/**
 * A $49.00 monthly subscription whose renewal Braintree just declined with `decline`, on a card whose next
 * sales answer `answers`; its recovery is keyed by the subscription and that failed renewal.
 */
async function pastDue(decline: string, answers: Array<'approve' | { decline: string }>) {
  n += 1;
  const token = `card${n}`;
  braintree.addPaymentMethod(token, { customerId: `cust${n}`, email: `Payer${n}@Example.com`, answers });
  const subscription = await braintree.addPastDueSubscription(`sub${n}`, {
    paymentMethodToken: token,
    balance: '49.00',
    decline,
  });
  const renewal = subscription.transactions[0]!;
  return { token, customerId: `cust${n}`, subscriptionId: subscription.id, key: `sub${n}:${renewal.id}` };
}

const form = { 'content-type': 'application/x-www-form-urlencoded' };
const post = (accountId: string, body: string) => postWebhook(stack, 'braintree', accountId, body, form);
const notify = (accountId: string, kind: string, subscriptionId: string) =>
  post(accountId, braintree.notification(kind, subscriptionId));
/** Braintree's charges of the subscription that carry an attempt key: Recoup's. */
const recoupSales = (subscriptionId: string) =>
  braintree.transactions().filter((t) => t.subscriptionId === subscriptionId && t.orderId !== '');

describe('Braintree connector: authentication and configuration', () => {
  it.each([
    ['no signature', (body: string) => body.replace(/bt_signature=[^&]*&?/, '')],
    [
      'a signature made with other API keys',
      () =>
        braintree.notification('subscription_went_past_due', `sub${n}`, {
          keys: { publicKey: String(braintree.credentials.publicKey), privateKey: 'not-the-key' },
        }),
    ],
    [
      'a payload changed after signing',
      (body: string) => body.replace(/bt_payload=[A-Za-z]/, 'bt_payload=A'),
    ],
  ])('%s is refused with 401 and starts nothing', async (_, tamper) => {
    const { accountId } = await connectedAccount();
    const { subscriptionId, key } = await pastDue('2001', ['approve']);
    const body = braintree.notification('subscription_went_past_due', subscriptionId);
    expect((await post(accountId, tamper(body))).status).toBe(401);
    expect(await stack.stores.recoveries.findByKey(accountId, key)).toBeNull();
  });

  it('an unknown client gets 404', async () => {
    const { subscriptionId } = await pastDue('2001', ['approve']);
    expect((await notify('acct_unknown', 'subscription_went_past_due', subscriptionId)).status).toBe(404);
  });

  it("needs the account's Braintree gateway: its API keys verify the webhooks and charge the subscriptions", () => {
    expect(parseConnectorConfig('braintree', {}, [])).toMatchObject({
      problem: expect.stringContaining('needs a Braintree gateway'),
    });
    const gateways: GatewayConfig[] = [
      { name: 'bt', kind: 'braintree', test: false, credentials: braintree.credentials },
    ];
    expect(parseConnectorConfig('braintree', { gateway: 'other' }, gateways)).toMatchObject({
      problem: expect.stringContaining('no Braintree gateway named other'),
    });
    expect(parseConnectorConfig('braintree', { gateway: 'bt' }, gateways)).toEqual({
      config: { gateway: 'bt' },
    });
    expect(parseConnectorConfig('braintree', { secret: 'x' }, gateways)).toMatchObject({
      problem: expect.stringContaining('secret'),
    });
  });
});

describe('Braintree connector: subscription_went_past_due', () => {
  it('becomes a recovery charged through the subscription, which is paid up; nothing to write back but the check', async () => {
    const { accountId } = await connectedAccount();
    const { subscriptionId, key, token, customerId } = await pastDue('3000', ['approve']);
    const res = await notify(accountId, 'subscription_went_past_due', subscriptionId);
    expect(res).toMatchObject({ status: 200, body: { received: true, action: 'recovery_started' } });

    const doc = await writtenBack(stack, accountId, key, 'recorded');
    expect(doc).toMatchObject({
      paymentMethodToken: `${token}|${customerId}`,
      amount: 4900,
      currency: 'USD',
      customerEmail: `payer${n}@example.com`,
      // Braintree's processor response 3000 ("processor network unavailable") by its name.
      originalDeclineCode: 'issuer_not_available',
      connector: { platform: 'braintree', invoiceId: key, customerId, subscriptionId },
    });
    const [sale] = recoupSales(subscriptionId);
    expect(sale).toMatchObject({ amount: '49.00', status: 'submitted_for_settlement' });
    expect(sale!.orderId.startsWith(doc.workflowId)).toBe(true);
    expect(doc.gatewayTransactionId).toBe(sale!.id);
    expect(braintree.subscription(subscriptionId)).toMatchObject({ status: 'Active', balance: '0.00' });

    // Braintree then reports the subscription charged: Recoup's own sale, nothing to stop.
    const charged = await notify(accountId, 'subscription_charged_successfully', subscriptionId);
    expect(charged.body).toMatchObject({ action: 'ignored', reason: "The charge was Recoup's own" });
  });

  it('a redelivery is a duplicate, and a later failure of the same past-due spell is the same recovery', async () => {
    const { accountId } = await connectedAccount();
    const { subscriptionId, key } = await pastDue('2001', [{ decline: '2001' }]);
    const body = braintree.notification('subscription_went_past_due', subscriptionId);
    const first = await post(accountId, body);
    expect(first.body).toMatchObject({ action: 'recovery_started' });
    expect((await post(accountId, body)).body).toEqual({
      received: true,
      duplicate: true,
      action: 'recovery_started',
    });
    // Braintree's own retry fails too and the notice comes again (another timestamp): one recovery per spell.
    await braintree.retryOnBraintree(subscriptionId, { decline: '2001' });
    const again = await notify(accountId, 'subscription_went_past_due', subscriptionId);
    expect(again.body).toEqual({
      received: true,
      action: 'already_received',
      transactionId: first.body.transactionId,
    });
    const doc = await recoveryOfInvoice(stack, accountId, key, (d) => d.state === 'queued');
    expect(doc).toMatchObject({ _id: first.body.transactionId, state: 'queued' });
  });

  it("a queued recovery stops when Braintree's own retry collects the subscription", async () => {
    const { accountId } = await connectedAccount();
    const { subscriptionId, key } = await pastDue('2001', [{ decline: '2001' }]);
    await notify(accountId, 'subscription_went_past_due', subscriptionId);
    const queued = await recoveryOfInvoice(stack, accountId, key, (d) => d.state === 'queued');
    expect(queued?.state).toBe('queued');
    const before = recoupSales(subscriptionId).length;

    await braintree.retryOnBraintree(subscriptionId, 'approve');
    const paid = await notify(accountId, 'subscription_charged_successfully', subscriptionId);
    expect(paid.body).toEqual({ received: true, action: 'paid_elsewhere', transactionId: queued!._id });
    const done = await recoveryOfInvoice(stack, accountId, key, (d) => d.state === 'paid_elsewhere');
    expect(done).toMatchObject({ state: 'paid_elsewhere' });
    expect(recoupSales(subscriptionId)).toHaveLength(before);
  });

  it("a card the customer saves through Recoup's link goes onto the subscription, which is then charged with it", async () => {
    const { accountId, apiKey } = await connectedAccount({
      cardFormUrl: 'https://acme.example/billing/card',
    });
    const { subscriptionId, key, token, customerId } = await pastDue('2001', [{ decline: '2001' }]);
    const started = await notify(accountId, 'subscription_went_past_due', subscriptionId);
    const queued = await recoveryOfInvoice(stack, accountId, key, (d) => d.state === 'queued');
    expect(queued?.state).toBe('queued');
    const link = await call<{ token: string }>(stack.baseUrl, 'POST', '/api/recovery/update-card/generate', {
      key: apiKey,
      body: { paymentMethodToken: `${token}|${customerId}`, transactionId: started.body.transactionId },
    });
    braintree.addPaymentMethod(`new${n}`, { customerId, answers: ['approve'] });
    const done = await call(stack.baseUrl, 'POST', '/api/recovery/update-card/complete', {
      key: apiKey,
      body: { token: link.body.token, newPaymentMethodToken: `new${n}|${customerId}` },
    });
    expect(done.status).toBe(200);

    const doc = await writtenBack(stack, accountId, key, 'recorded');
    expect(doc.paymentMethodToken).toBe(`new${n}|${customerId}`);
    expect(recoupSales(subscriptionId).at(-1)).toMatchObject({
      paymentMethodToken: `new${n}`,
      status: 'submitted_for_settlement',
    });
    expect(braintree.subscription(subscriptionId)).toMatchObject({
      status: 'Active',
      paymentMethodToken: `new${n}`,
    });
  });

  it('a subscription Braintree collected unbeknown to Recoup is not charged: the recovery stops, and the card is not remembered as blocked', async () => {
    const { accountId, apiKey } = await connectedAccount();
    const { subscriptionId, key, token, customerId } = await pastDue('2001', [{ decline: '2001' }]);
    const started = await notify(accountId, 'subscription_went_past_due', subscriptionId);
    expect(await recoveryOfInvoice(stack, accountId, key, (d) => d.state === 'queued')).toBeTruthy();
    // Braintree's own retry collects it, and its notification never reaches Recoup.
    await braintree.retryOnBraintree(subscriptionId, 'approve');
    const before = recoupSales(subscriptionId).length;
    const link = await call<{ token: string }>(stack.baseUrl, 'POST', '/api/recovery/update-card/generate', {
      key: apiKey,
      body: { paymentMethodToken: `${token}|${customerId}`, transactionId: started.body.transactionId },
    });
    braintree.addPaymentMethod(`new${n}`, { customerId, answers: ['approve'] });
    const newCard = `new${n}|${customerId}`;
    const done = await call(stack.baseUrl, 'POST', '/api/recovery/update-card/complete', {
      key: apiKey,
      body: { token: link.body.token, newPaymentMethodToken: newCard },
    });
    expect(done.status).toBe(200);

    const ended = await recoveryOfInvoice(stack, accountId, key, (d) => d.endedAt !== undefined);
    expect(ended).toMatchObject({
      state: 'stopped',
      lastDeclineCode: 'subscription_not_past_due',
      recommendedAction: 'monitor',
      nextAttemptAt: null,
    });
    expect(ended?.recommendedActionReason).toMatch(/no longer owes this payment/);
    expect(recoupSales(subscriptionId)).toHaveLength(before);
    // Nothing is owed: no failure is reported to the merchant, and the customer is not behind.
    const events = await stack.stores.events.list({ accountId, limit: 200 });
    expect(events.map((e) => e.type)).not.toContain('recovery.failed');
    expect(events.map((e) => e.type)).not.toContain('recovery.blocked');
    const paywall = await call(
      stack.baseUrl,
      'GET',
      `/api/recovery/paywall-status?customerEmail=${encodeURIComponent(`Payer${n}@Example.com`)}`,
      { key: apiKey },
    );
    expect(paywall.body).toMatchObject({ isPastDue: false, failedPaymentCount: 0 });
    // "No longer owed" says nothing about the card: its next renewal's recovery is not blocked by it.
    expect(await stack.stores.recoveries.blockedCard(cardKeyOf(accountId, newCard), new Date(0))).toBeNull();
    // Nor does such a block remembered before this was told apart block the card.
    const remembered = cardKeyOf(accountId, `${token}|${customerId}`);
    const at = new Date();
    await stack.stores.recoveries.rememberBlockedCard(remembered, {
      transactionId: String(started.body.transactionId),
      declineCode: 'subscription_not_past_due',
      at,
    });
    expect(await stack.stores.recoveries.blockedCard(remembered, new Date(0))).toBeNull();
    await stack.stores.recoveries.rememberBlockedCard(remembered, {
      transactionId: 'x',
      declineCode: 'lost_card',
      at,
    });
    expect(await stack.stores.recoveries.blockedCard(remembered, new Date(0))).toMatchObject({
      declineCode: 'lost_card',
    });
  });

  it('a subscription Braintree collected before the webhook is read is ignored', async () => {
    const { accountId } = await connectedAccount();
    const { subscriptionId, key } = await pastDue('2001', ['approve']);
    await braintree.retryOnBraintree(subscriptionId, 'approve');
    const res = await notify(accountId, 'subscription_went_past_due', subscriptionId);
    expect(res.body).toMatchObject({
      action: 'ignored',
      reason: 'The subscription is Active, nothing is owed',
    });
    expect(await stack.stores.recoveries.findByKey(accountId, key)).toBeNull();
  });

  it('a subscription Braintree does not know is ignored', async () => {
    const { accountId } = await connectedAccount();
    const res = await notify(accountId, 'subscription_went_past_due', 'sub_gone');
    expect(res.body).toMatchObject({
      action: 'ignored',
      reason: 'Braintree no longer knows the subscription',
    });
  });

  it('Braintree refusing the API keys is a 5xx, so Braintree delivers again', async () => {
    const { accountId } = await connectedAccount();
    const { subscriptionId, key } = await pastDue('2001', ['approve']);
    const body = braintree.notification('subscription_went_past_due', subscriptionId);
    braintree.failWith(401);
    try {
      expect((await post(accountId, body)).status).toBeGreaterThanOrEqual(500);
    } finally {
      braintree.failWith(null);
    }
    expect(await stack.stores.recoveries.findByKey(accountId, key)).toBeNull();
    expect((await post(accountId, body)).body).toMatchObject({ action: 'recovery_started' });
  });
});

describe('Braintree connector: other notifications', () => {
  it.each(['subscription_canceled', 'subscription_charged_unsuccessfully', 'check'])(
    '%s is answered 200 and ignored',
    async (kind) => {
      const { accountId } = await connectedAccount();
      const { subscriptionId, key } = await pastDue('2001', ['approve']);
      const res = await notify(accountId, kind, subscriptionId);
      expect(res).toMatchObject({ status: 200, body: { received: true, action: 'ignored' } });
      expect(await stack.stores.recoveries.findByKey(accountId, key)).toBeNull();
    },
  );

  it.each([
    ['without a timestamp', { timestamp: null }],
    ['whose payload is not XML', { text: 'subscription_went_past_due <unclosed' }],
    ['whose XML is no notification', { text: '<subscription><id>sub</id></subscription>' }],
  ] as const)(
    'a signed notification %s is answered 200 and ignored with why, not 5xx for Braintree to resend; a resend is a duplicate',
    async (_, options) => {
      const { accountId } = await connectedAccount();
      const { subscriptionId, key } = await pastDue('2001', ['approve']);
      const body = braintree.notification('subscription_went_past_due', subscriptionId, options);
      expect(await post(accountId, body)).toEqual({
        status: 200,
        body: {
          received: true,
          action: 'ignored',
          reason: 'The notification is not in the shape Braintree sends',
        },
      });
      expect(await post(accountId, body)).toEqual({
        status: 200,
        body: { received: true, duplicate: true, action: 'ignored' },
      });
      expect(await stack.stores.recoveries.findByKey(accountId, key)).toBeNull();
    },
  );
});
