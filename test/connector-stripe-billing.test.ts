import { randomBytes } from 'node:crypto';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stripeBilling } from '../activities/connectors/stripe-billing.js';
import { attemptKeyField } from '../activities/gateways/stripe.js';
import { admitRecovery } from '../api/admit-recovery.js';
import { RecoveryRequest } from '../domain/recovery-request.js';
import type { GatewayConfig } from '../domain/settings.js';
import { summaryOf } from '../services/reports.js';
import {
  cardUpdateRecovers,
  collectsWhatIsStillDue,
  expiryNoticeForwarded,
  paidNoticeLeftSucceeded,
  postWebhook,
  recoveryOfInvoice,
  redeliveryIsDuplicate,
  writtenBack,
} from './support/connectors.js';
import { poll } from './support/poll.js';
import { call, startStack, type Stack } from './support/stack.js';
import { startStripeEmulator, type StripeEmulator } from './support/stripe-emulator.js';

let stack: Stack;
let stripe: StripeEmulator;
let n = 0;
const webhookSecret = `whsec_${randomBytes(16).toString('hex')}`;

beforeAll(async () => {
  [stack, stripe] = await Promise.all([startStack(), startStripeEmulator()]);
});
afterAll(async () => {
  await stack.close();
  await stripe.close();
});

/** An account charging through Stripe (the emulator) with a Stripe Billing connector that reuses its key. */
async function connectedAccount(settings: Record<string, unknown> = {}) {
  const gateway: GatewayConfig = {
    name: 'stripe',
    kind: 'stripe',
    test: false,
    credentials: { secretKey: stripe.secretKey, apiBase: stripe.url },
  };
  const created = await stack.createAccount(settings, [gateway]);
  await stack.stores.accounts.setConnector(created.account.id, 'stripe-billing', { webhookSecret });
  return { id: created.account.id, apiKey: created.apiKey };
}

/** Whether the paywall holds the customer past due. */
async function isPastDue(apiKey: string, customerEmail: string): Promise<unknown> {
  const paywall = await call(
    stack.baseUrl,
    'GET',
    `/api/recovery/paywall-status?customerEmail=${encodeURIComponent(customerEmail)}`,
    { key: apiKey },
  );
  return paywall.body.isPastDue;
}

const day = 86_400_000;

/**
 * The account's summary report (what GET /api/reports/summary answers) as it will read 31 days from now,
 * when today's failures are decided.
 */
const summaryNextMonth = (accountId: string) =>
  summaryOf(
    stack.stores,
    accountId,
    { from: new Date(Date.now() - day).toISOString() },
    new Date(Date.now() + 31 * day),
  );

/** A Stripe event as Stripe sends it: JSON body and a Stripe-Signature header made by Stripe's own library. */
function signed(
  type: string,
  object: unknown,
  opts: { secret?: string; timestamp?: number; id?: string } = {},
) {
  const body = JSON.stringify({
    id: opts.id ?? `evt_${randomBytes(8).toString('hex')}`,
    object: 'event',
    type,
    api_version: '2026-10-28.endive',
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    data: { object },
  });
  const header = Stripe.webhooks.generateTestHeaderString({
    payload: body,
    secret: opts.secret ?? webhookSecret,
    ...(opts.timestamp ? { timestamp: opts.timestamp } : {}),
  });
  return { body, headers: { 'stripe-signature': header } };
}

/** Stripe's notice that the customer saved a card (`type` as Stripe names the payment method's kind). */
const attachedCard = (id: string, customer: string, type = 'card') =>
  signed('payment_method.attached', { id, object: 'payment_method', type, customer });

/**
 * Stripe reports the automatic payment of a new invoice failed; the card answers `answers` to Recoup. The
 * invoice is of 29.00 EUR unless `amount` (in Stripe's units) and `currency` say otherwise, and renews its
 * subscription unless `billingReason` says it is the subscription's first.
 */
function failedInvoice(
  answers: Parameters<StripeEmulator['addCard']>[1]['answers'],
  {
    legacy = false,
    email,
    amount = 2900,
    currency = 'eur',
    billingReason,
  }: {
    legacy?: boolean;
    email?: string;
    amount?: number;
    currency?: string;
    billingReason?: 'subscription_create' | 'subscription_cycle';
  } = {},
) {
  n += 1;
  const customer = `cus_billing${n}`;
  const card = `pm_billing${n}`;
  stripe.addCard(card, { customer, answers });
  const failed = stripe.addFailedInvoice({
    customer,
    email: email ?? `Billing${n}@Example.com`,
    amount,
    currency,
    card,
    // A technical failure: Recoup charges again at once (a soft decline would wait for a better time).
    decline: 'processing_error',
    legacy,
    billingReason,
  });
  return { ...failed, customer, card, event: signed('invoice.payment_failed', failed.invoice) };
}

describe('Stripe Billing connector: invoice.payment_failed', () => {
  it('becomes a recovery keyed by the invoice, charged on the invoice’s card, written back as paid out of band', async () => {
    const account = await connectedAccount();
    const { invoice, card, subscription, event } = failedInvoice(['approve']);
    const res = await postWebhook(stack, 'stripe-billing', account.id, event.body, event.headers);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ received: true, action: 'recovery_started' });

    const doc = await writtenBack(stack, account.id, invoice.id);
    expect(doc).toMatchObject({
      paymentMethodToken: card,
      amount: 2900,
      currency: 'EUR',
      customerEmail: `billing${n}@example.com`,
      originalDeclineCode: 'processing_error',
      connector: { platform: 'stripe-billing', invoiceId: invoice.id, customerId: `cus_billing${n}` },
    });
    expect(doc?.request.cardOrigin).toBe('DE');
    expect(stripe.intents().filter((i) => i.metadata[attemptKeyField])).toEqual([
      expect.objectContaining({ payment_method: card, amount: 2900, currency: 'eur', status: 'succeeded' }),
    ]);
    expect(stripe.invoice(invoice.id)).toMatchObject({ status: 'paid', paid_out_of_band: true });
    expect(stripe.invoicePays()).toEqual([`recoup-write-back/${invoice.id}`]);
    // Paid, the past-due subscription is active again at Stripe.
    expect(stripe.subscription(subscription.id)).toMatchObject({ status: 'active' });

    // The merchant can look the recovery up by the invoice id.
    const status = await call(stack.baseUrl, 'GET', `/api/recovery/status?idempotencyKey=${invoice.id}`, {
      key: account.apiKey,
    });
    expect(status.body).toMatchObject({ status: 'succeeded', recovered: true, amount: 2900 });
  });

  it('the first invoice of a subscription the customer failed to pay at signup (incomplete) is ignored: no off-session charge, no write-back that would activate it', async () => {
    const account = await connectedAccount();
    const { invoice, card, subscription, event } = failedInvoice(['approve'], {
      billingReason: 'subscription_create',
    });
    const res = await postWebhook(stack, 'stripe-billing', account.id, event.body, event.headers);
    expect(res).toMatchObject({
      status: 200,
      body: { received: true, action: 'ignored', reason: expect.stringContaining('incomplete') },
    });
    expect(await stack.stores.recoveries.findByKey(account.id, invoice.id)).toBeNull();
    expect(stripe.intents().filter((i) => i.payment_method === card && i.metadata[attemptKeyField])).toEqual(
      [],
    );
    expect(stripe.invoicePays()).not.toContain(`recoup-write-back/${invoice.id}`);
    expect(stripe.subscription(subscription.id)).toMatchObject({ status: 'incomplete' });
  });

  it('reads the subscription from the invoice itself on endpoints pinned to API versions before 2025-03-31: an incomplete one’s first invoice is ignored too', async () => {
    const account = await connectedAccount();
    const { invoice, event } = failedInvoice(['approve'], {
      billingReason: 'subscription_create',
      legacy: true,
    });
    const res = await postWebhook(stack, 'stripe-billing', account.id, event.body, event.headers);
    expect(res.body).toMatchObject({ action: 'ignored', reason: expect.stringContaining('incomplete') });
    expect(await stack.stores.recoveries.findByKey(account.id, invoice.id)).toBeNull();
  });

  it('a first invoice whose subscription the key may not read is ignored with the permission to grant, not answered 5xx for ever', async () => {
    const account = await connectedAccount();
    const { invoice, event } = failedInvoice(['approve'], { billingReason: 'subscription_create' });
    stripe.denySubscriptionReads(true);
    try {
      const res = await postWebhook(stack, 'stripe-billing', account.id, event.body, event.headers);
      expect(res).toMatchObject({
        status: 200,
        body: { action: 'ignored', reason: expect.stringContaining('Subscriptions read') },
      });
      expect(await stack.stores.recoveries.findByKey(account.id, invoice.id)).toBeNull();
    } finally {
      stripe.denySubscriptionReads(false);
    }
  });

  it('an ISK invoice, in Stripe’s hundredths of a króna, is recovered in ISO units and charged in Stripe’s', async () => {
    const account = await connectedAccount();
    // 5,000 kr: Stripe writes ISK with two decimals that are always 00.
    const { invoice, card, event } = failedInvoice(['approve'], { amount: 500000, currency: 'isk' });
    const res = await postWebhook(stack, 'stripe-billing', account.id, event.body, event.headers);
    expect(res.body).toMatchObject({ action: 'recovery_started' });
    const doc = await writtenBack(stack, account.id, invoice.id);
    expect(doc).toMatchObject({ amount: 5000, currency: 'ISK' });
    expect(stripe.intents().filter((i) => i.payment_method === card && i.metadata[attemptKeyField])).toEqual([
      expect.objectContaining({ amount: 500000, currency: 'isk', status: 'succeeded' }),
    ]);
  });

  it('an invoice whose amount is a fraction of a króna (1250: 12.50 kr) is ignored, never recovered as a rounded sum', async () => {
    const account = await connectedAccount();
    const { invoice, card, event } = failedInvoice(['approve'], { amount: 1250, currency: 'isk' });
    const res = await postWebhook(stack, 'stripe-billing', account.id, event.body, event.headers);
    expect(res).toMatchObject({
      status: 200,
      body: { action: 'ignored', reason: expect.stringContaining('cannot be recovered exactly') },
    });
    expect(await stack.stores.recoveries.findByKey(account.id, invoice.id)).toBeNull();
    expect(stripe.intents().filter((i) => i.payment_method === card && i.metadata[attemptKeyField])).toEqual(
      [],
    );
  });

  it('a platform retry of the event changes nothing; a failure event after Recoup collected the invoice is ignored', async () => {
    const account = await connectedAccount();
    const { invoice, event } = failedInvoice(['approve']);
    await redeliveryIsDuplicate(stack, account.id, invoice.id, () =>
      postWebhook(stack, 'stripe-billing', account.id, event.body, event.headers),
    );
    // Written back as paid out of band: Stripe holds it paid.
    const other = signed('invoice.payment_failed', invoice);
    const late = await postWebhook(stack, 'stripe-billing', account.id, other.body, other.headers);
    expect(late.body).toMatchObject({
      action: 'ignored',
      reason: 'The invoice is paid at Stripe, nothing is owed',
    });
    expect(
      stripe.intents().filter((i) => i.customer === invoice.customer && i.metadata[attemptKeyField]),
    ).toHaveLength(1);
  });

  it('Stripe’s own next attempt failing too (a second event for the still open invoice) is the same recovery', async () => {
    const account = await connectedAccount();
    const { invoice, event } = failedInvoice([{ decline: 'do_not_honor' }]);
    await postWebhook(stack, 'stripe-billing', account.id, event.body, event.headers);
    const queued = await recoveryOfInvoice(stack, account.id, invoice.id, (d) => d.state === 'queued');
    const other = signed('invoice.payment_failed', invoice);
    const second = await postWebhook(stack, 'stripe-billing', account.id, other.body, other.headers);
    expect(second.body).toMatchObject({ action: 'already_received', transactionId: queued!.publicId });
    expect(
      stripe.intents().filter((i) => i.customer === invoice.customer && i.metadata[attemptKeyField]),
    ).toHaveLength(1);
  });

  it('another invoice for the same card and amount within 5 minutes is refused like a duplicate execute (409)', async () => {
    const account = await connectedAccount();
    const first = failedInvoice(['approve']);
    await postWebhook(stack, 'stripe-billing', account.id, first.event.body, first.event.headers);
    const { invoice } = stripe.addFailedInvoice({
      customer: first.customer,
      email: null,
      amount: 2900,
      currency: 'eur',
      card: first.card,
      decline: 'processing_error',
    });
    const second = signed('invoice.payment_failed', invoice);
    const res = await postWebhook(stack, 'stripe-billing', account.id, second.body, second.headers);
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ error: 'Duplicate request', existingTransactionId: expect.any(String) });
    expect(await stack.stores.recoveries.findByKey(account.id, invoice.id)).toBeNull();
    // Not marked handled: Stripe's retry after the 5 minutes is taken in.
    expect((await stack.stores.connectorEvents.latest(account.id, 5))[0]).toMatchObject({ doneAt: null });
  });

  it('reads the invoice’s payment from the invoice itself on endpoints pinned to API versions before 2025-03-31', async () => {
    const account = await connectedAccount();
    const { invoice, card, event } = failedInvoice(['approve'], { legacy: true });
    const res = await postWebhook(stack, 'stripe-billing', account.id, event.body, event.headers);
    expect(res.body).toMatchObject({ action: 'recovery_started' });
    const doc = await recoveryOfInvoice(stack, account.id, invoice.id, (d) => d.state === 'succeeded');
    expect(doc).toMatchObject({ paymentMethodToken: card, originalDeclineCode: 'processing_error' });
  });

  it('an email the platform holds that Recoup would refuse does not cost the recovery: it goes on without it', async () => {
    const account = await connectedAccount();
    const { invoice, event } = failedInvoice(['approve'], { email: 'not an email' });
    const res = await postWebhook(stack, 'stripe-billing', account.id, event.body, event.headers);
    expect(res.body).toMatchObject({ action: 'recovery_started' });
    const doc = await writtenBack(stack, account.id, invoice.id);
    expect(doc.customerEmail).toBeNull();
  });

  it('takes a signed invoice larger than the API’s 64 KiB body limit (invoices carry every line)', async () => {
    const account = await connectedAccount();
    const { invoice } = failedInvoice(['approve']);
    const lines = Array.from({ length: 400 }, (_, i) => ({ id: `il_${i}`, description: 'x'.repeat(200) }));
    const event = signed('invoice.payment_failed', { ...invoice, lines: { object: 'list', data: lines } });
    expect(event.body.length).toBeGreaterThan(64 * 1024);
    const res = await postWebhook(stack, 'stripe-billing', account.id, event.body, event.headers);
    expect(res).toMatchObject({ status: 200, body: { action: 'recovery_started' } });
  });
});

describe('Stripe Billing connector: a failure event that arrives late', () => {
  it('an older failure delivered after the customer paid the invoice at Stripe is ignored: nothing charged, not past due', async () => {
    const account = await connectedAccount();
    const { invoice, event } = failedInvoice([{ decline: 'do_not_honor' }]);
    // The customer pays on Stripe's hosted invoice page; Stripe's notice of it comes first.
    const paid = signed('payment_intent.succeeded', stripe.payInvoiceAtStripe(invoice.id));
    await postWebhook(stack, 'stripe-billing', account.id, paid.body, paid.headers);

    const late = await postWebhook(stack, 'stripe-billing', account.id, event.body, event.headers);
    expect(late).toEqual({
      status: 200,
      body: { received: true, action: 'ignored', reason: 'The invoice is paid at Stripe, nothing is owed' },
    });
    expect(await stack.stores.recoveries.findByKey(account.id, invoice.id)).toBeNull();
    expect(
      stripe.intents().filter((i) => i.customer === invoice.customer && i.metadata[attemptKeyField]),
    ).toEqual([]);
    expect(await isPastDue(account.apiKey, `billing${n}@example.com`)).toBe(false);
  });

  it('an invoice partly paid at Stripe since the event is recovered for what remains, not the event’s amount', async () => {
    const account = await connectedAccount();
    const { invoice, card, event } = failedInvoice(['approve']);
    stripe.payPartOfInvoiceAtStripe(invoice.id, 900);
    const res = await postWebhook(stack, 'stripe-billing', account.id, event.body, event.headers);
    expect(res.body).toMatchObject({ action: 'recovery_started' });
    const doc = await writtenBack(stack, account.id, invoice.id);
    expect(doc.amount).toBe(2000);
    expect(stripe.intents().filter((i) => i.payment_method === card && i.metadata[attemptKeyField])).toEqual([
      expect.objectContaining({ amount: 2000, status: 'succeeded' }),
    ]);
  });

  it('Stripe failing to answer the invoice read is a 5xx that starts nothing, so Stripe delivers again', async () => {
    const account = await connectedAccount();
    const { invoice, event } = failedInvoice(['approve']);
    stripe.invoiceOutage(Number.POSITIVE_INFINITY, 'reads');
    try {
      const res = await postWebhook(stack, 'stripe-billing', account.id, event.body, event.headers);
      expect(res.status).toBeGreaterThanOrEqual(500);
    } finally {
      stripe.invoiceOutage(null);
    }
    expect(await stack.stores.recoveries.findByKey(account.id, invoice.id)).toBeNull();
    expect((await stack.stores.connectorEvents.latest(account.id, 5))[0]).toMatchObject({ doneAt: null });
    // Stripe's redelivery, once it answers again, is taken in.
    const again = await postWebhook(stack, 'stripe-billing', account.id, event.body, event.headers);
    expect(again.body).toMatchObject({ action: 'recovery_started' });
    expect(await writtenBack(stack, account.id, invoice.id)).toMatchObject({ amount: 2900 });
  });
});

describe('Stripe Billing connector: a write-back retried', () => {
  /** The write-back activity's call for a payment Recoup recovered on `invoiceId`. */
  const writeBack = (invoiceId: string) =>
    stripeBilling.writeBack!(
      { webhookSecret, apiKey: stripe.secretKey, apiBase: stripe.url },
      {
        invoiceId,
        amount: 2900,
        currency: 'EUR',
        gatewayTransactionId: 'pi_recovered',
        recoveredAt: Date.now(),
      },
      { gateways: [] },
    );

  it('after Recoup’s own call paid the invoice but its answer was lost, is recorded, not already_paid', async () => {
    const { invoice } = failedInvoice(['approve']);
    stripe.loseInvoicePayAnswers(true);
    try {
      await expect(writeBack(invoice.id)).rejects.toThrow();
    } finally {
      stripe.loseInvoicePayAnswers(false);
    }
    expect(stripe.invoice(invoice.id)).toMatchObject({ status: 'paid', paid_out_of_band: true });
    // The activity's retry: Stripe replays the lost success under the same idempotency key.
    expect(await writeBack(invoice.id)).toBe('recorded');
  });

  it('after the customer paid the invoice at Stripe, is already_paid: the platform collected it too', async () => {
    const { invoice } = failedInvoice(['approve']);
    stripe.payInvoiceAtStripe(invoice.id);
    expect(await writeBack(invoice.id)).toBe('already_paid');
    expect(stripe.invoice(invoice.id)).toMatchObject({ status: 'paid', paid_out_of_band: false });
  });
});

describe('Stripe Billing connector: authentication and addressing', () => {
  it('refuses a wrong secret, a stale signature and a missing one with 401, and records nothing', async () => {
    const account = await connectedAccount();
    const { invoice } = failedInvoice(['approve']);
    const wrong = signed('invoice.payment_failed', invoice, { secret: 'whsec_other' });
    const stale = signed('invoice.payment_failed', invoice, {
      timestamp: Math.floor(Date.now() / 1000) - 600,
    });
    for (const attempt of [wrong, stale, { body: wrong.body, headers: {} }]) {
      const res = await postWebhook(stack, 'stripe-billing', account.id, attempt.body, attempt.headers);
      expect(res).toEqual({ status: 401, body: { error: 'Invalid webhook signature or credentials' } });
    }
    // The challenge lets platforms that send basic auth only when asked (Zuora) answer it.
    const challenged = await fetch(`${stack.baseUrl}/api/connectors/stripe-billing/webhook/${account.id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: wrong.body,
    });
    expect(challenged.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
    // A body changed after signing fails too.
    const tampered = signed('invoice.payment_failed', invoice);
    const res = await postWebhook(
      stack,
      'stripe-billing',
      account.id,
      tampered.body.replace('2900', '29'),
      tampered.headers,
    );
    expect(res.status).toBe(401);
    expect(await stack.stores.recoveries.findByKey(account.id, invoice.id)).toBeNull();
    expect(await stack.stores.connectorEvents.latest(account.id, 10)).toEqual([]);
  });

  it.each(['not json', '{"hello":"world"}'])(
    'a correctly signed body that is no Stripe event (%s) is answered 200 and ignored, not 5xx for Stripe to resend; a resend is a duplicate',
    async (body) => {
      const account = await connectedAccount();
      const headers = {
        'stripe-signature': Stripe.webhooks.generateTestHeaderString({
          payload: body,
          secret: webhookSecret,
        }),
      };
      expect(await postWebhook(stack, 'stripe-billing', account.id, body, headers)).toEqual({
        status: 200,
        body: { received: true, action: 'ignored', reason: 'The body is not a Stripe event' },
      });
      expect(await postWebhook(stack, 'stripe-billing', account.id, body, headers)).toEqual({
        status: 200,
        body: { received: true, duplicate: true, action: 'ignored' },
      });
    },
  );

  it('answers 404 for an unknown platform, an unknown client, and a platform the client has not configured', async () => {
    const account = await connectedAccount();
    const { event } = failedInvoice(['approve']);
    for (const [platform, client] of [
      ['paddle', account.id],
      ['stripe-billing', 'acct_nobody'],
      ['chargebee', account.id],
    ] as const) {
      const res = await postWebhook(stack, platform, client, event.body, event.headers);
      expect(res.status, `${platform}/${client}`).toBe(404);
      expect(res.body.error).toEqual(expect.any(String));
    }
    await stack.stores.accounts.removeConnector(account.id, 'stripe-billing');
    const removed = await postWebhook(stack, 'stripe-billing', account.id, event.body, event.headers);
    expect(removed.status).toBe(404);
  });
});

describe('Stripe Billing connector: after the failure', () => {
  it('a card the customer attaches at Stripe retries the queued recovery with it at once', async () => {
    const account = await connectedAccount();
    const { invoice, customer, event } = failedInvoice([{ decline: 'do_not_honor' }]);
    await postWebhook(stack, 'stripe-billing', account.id, event.body, event.headers);
    const fresh = `pm_fresh${n}`;
    stripe.addCard(fresh, { customer, answers: ['approve'] });
    const attached = attachedCard(fresh, customer);
    await cardUpdateRecovers(
      stack,
      account.id,
      invoice.id,
      () => postWebhook(stack, 'stripe-billing', account.id, attached.body, attached.headers),
      fresh,
    );
    expect(stripe.intents().filter((i) => i.payment_method === fresh)).toHaveLength(1);
  });

  it('an invoice Stripe collected itself stops the queued recovery: paid elsewhere, nothing more charged', async () => {
    const account = await connectedAccount();
    const { invoice, card, event } = failedInvoice([{ decline: 'do_not_honor' }]);
    await postWebhook(stack, 'stripe-billing', account.id, event.body, event.headers);
    await recoveryOfInvoice(stack, account.id, invoice.id, (d) => d.state === 'queued');
    const charged = stripe.intents().filter((i) => i.payment_method === card).length;

    const paid = signed('payment_intent.succeeded', stripe.payInvoiceAtStripe(invoice.id));
    const res = await postWebhook(stack, 'stripe-billing', account.id, paid.body, paid.headers);
    expect(res.body).toMatchObject({ received: true, action: 'paid_elsewhere' });
    const doc = await recoveryOfInvoice(stack, account.id, invoice.id, (d) => d.state === 'paid_elsewhere');
    expect(doc).toMatchObject({ state: 'paid_elsewhere', nextAttemptAt: null });
    const status = await call(stack.baseUrl, 'GET', `/api/recovery/status?idempotencyKey=${invoice.id}`, {
      key: account.apiKey,
    });
    expect(status.body).toMatchObject({ status: 'succeeded', state: 'paid_elsewhere', recovered: false });
    expect(stripe.intents().filter((i) => i.payment_method === card)).toHaveLength(charged);
    // The customer no longer owes anything.
    expect(await isPastDue(account.apiKey, doc!.customerEmail!)).toBe(false);
  });

  /**
   * A failed invoice (`amount` in Stripe's units) queued; the customer pays `paid` of it at Stripe, then
   * attaches a new card, which is charged what is still due (`amountDue`, ISO minor units; Stripe's are
   * `unit` of them). Returns the recovery and the new card.
   */
  async function partlyPaidThenNewCard(o: {
    amount?: number;
    currency?: string;
    paid: number;
    amountDue: number;
    unit?: number;
  }) {
    const account = await connectedAccount();
    const { invoice, customer, event } = failedInvoice([{ decline: 'do_not_honor' }], {
      ...(o.amount ? { amount: o.amount } : {}),
      ...(o.currency ? { currency: o.currency } : {}),
    });
    await postWebhook(stack, 'stripe-billing', account.id, event.body, event.headers);
    const fresh = `pm_fresh${n}`;
    stripe.addCard(fresh, { customer, answers: ['approve'] });
    const attached = attachedCard(fresh, customer);
    const done = await collectsWhatIsStillDue(stack, account.id, invoice.id, {
      // Paid once the recovery is queued: an attempt that read the invoice partly paid would collect no more.
      sendPartial: () => {
        const partial = signed(
          'payment_intent.succeeded',
          stripe.payPartOfInvoiceAtStripe(invoice.id, o.paid),
        );
        return postWebhook(stack, 'stripe-billing', account.id, partial.body, partial.headers);
      },
      sendUpdate: () => postWebhook(stack, 'stripe-billing', account.id, attached.body, attached.headers),
      newToken: fresh,
      amountDue: o.amountDue,
      charged: (doc) => {
        const intent = stripe.intents().find((i) => i.id === doc.gatewayTransactionId);
        const amount = intent && intent.amount / (o.unit ?? 1);
        return Promise.resolve(intent ? { token: intent.payment_method, amount: amount! } : null);
      },
    });
    return { done, fresh };
  }

  it('a payment of part of the invoice at Stripe lowers its queued recovery: the new card is charged what remains, and that is written back', async () => {
    const { done, fresh } = await partlyPaidThenNewCard({ paid: 900, amountDue: 2000 });
    expect(stripe.intents().filter((i) => i.payment_method === fresh)).toEqual([
      expect.objectContaining({ amount: 2000, status: 'succeeded' }),
    ]);
    expect(done.writeBack).toBe('recorded');
  });

  it('a partial payment of an ISK invoice lowers the recovery in ISO units, and the new card is charged in Stripe’s', async () => {
    // 5,000 kr, 2,000 of them paid at Stripe: 3,000 kr left (300000 in Stripe's hundredths of a króna).
    const { done, fresh } = await partlyPaidThenNewCard({
      amount: 500000,
      currency: 'isk',
      paid: 200000,
      amountDue: 3000,
      unit: 100,
    });
    expect(done).toMatchObject({ currency: 'ISK', request: { amount: 5000 } });
    expect(stripe.intents().filter((i) => i.payment_method === fresh)).toEqual([
      expect.objectContaining({ amount: 300000, currency: 'isk', status: 'succeeded' }),
    ]);
  });

  it('Stripe’s invoice_payment.paid reports a payment applied to the invoice: part of it lowers the recovery, the rest stops it', async () => {
    const account = await connectedAccount();
    const { invoice, event } = failedInvoice([{ decline: 'do_not_honor' }]);
    await postWebhook(stack, 'stripe-billing', account.id, event.body, event.headers);
    const queued = await recoveryOfInvoice(stack, account.id, invoice.id, (d) => d.state === 'queued');
    const applied = (intent: { id: string }) =>
      signed('invoice_payment.paid', {
        id: `inpay_${intent.id}`,
        object: 'invoice_payment',
        invoice: invoice.id,
        payment: { type: 'payment_intent', payment_intent: intent.id },
        status: 'paid',
      });
    const part = applied(stripe.payPartOfInvoiceAtStripe(invoice.id, 900));
    expect((await postWebhook(stack, 'stripe-billing', account.id, part.body, part.headers)).body).toEqual({
      received: true,
      action: 'amount_lowered',
      transactionId: queued!.publicId,
      amountDue: 2000,
    });
    const rest = applied(stripe.payInvoiceAtStripe(invoice.id));
    expect((await postWebhook(stack, 'stripe-billing', account.id, rest.body, rest.headers)).body).toEqual({
      received: true,
      action: 'paid_elsewhere',
      transactionId: queued!.publicId,
    });
    expect(
      await recoveryOfInvoice(stack, account.id, invoice.id, (d) => d.state === 'paid_elsewhere'),
    ).toMatchObject({
      state: 'paid_elsewhere',
    });
  });

  it('an invoice Stripe collected whose recovery never started (its intake died) is stopped before any charge', async () => {
    const account = await connectedAccount();
    const { invoice, card, customer } = failedInvoice(['approve']);
    // Stored two minutes ago by an intake that died before starting its workflow.
    const stored = await admitRecovery(
      stack.stores,
      (await stack.stores.accounts.find(account.id))!,
      RecoveryRequest.parse({
        paymentMethodToken: card,
        amount: 2900,
        currency: 'EUR',
        idempotencyKey: invoice.id,
        originalDeclineCode: 'processing_error',
      }),
      new Date(Date.now() - 120_000),
      { platform: 'stripe-billing', invoiceId: invoice.id, customerId: customer },
    );
    if (stored.kind !== 'admitted') throw new Error('not admitted');

    const paid = signed('payment_intent.succeeded', stripe.payInvoiceAtStripe(invoice.id));
    const res = await postWebhook(stack, 'stripe-billing', account.id, paid.body, paid.headers);
    expect(res.body).toMatchObject({
      received: true,
      action: 'paid_elsewhere',
      transactionId: stored.doc._id,
    });
    const doc = await recoveryOfInvoice(stack, account.id, invoice.id, (d) => d.state === 'paid_elsewhere');
    expect(doc).toMatchObject({ state: 'paid_elsewhere', attempts: [] });
    // Stripe's own collection is the card's only charge: none of Recoup's.
    expect(stripe.intents().filter((i) => i.payment_method === card && i.metadata[attemptKeyField])).toEqual(
      [],
    );
  });

  it('an invoice Stripe collected for a Proof Mode control counts as paid on the customer’s own: not past due, a collected control', async () => {
    const account = await connectedAccount({ proofMode: { enabled: true, controlPercent: 50 } });
    // Half the customers fall in the control group: failures until one does.
    let control: ReturnType<typeof failedInvoice> | undefined;
    for (let i = 0; i < 30 && !control; i += 1) {
      const failed = failedInvoice([{ decline: 'do_not_honor' }]);
      await postWebhook(stack, 'stripe-billing', account.id, failed.event.body, failed.event.headers);
      const doc = await recoveryOfInvoice(
        stack,
        account.id,
        failed.invoice.id,
        (d) => d.state !== 'processing',
      );
      if (doc?.state === 'holdout') control = failed;
    }
    if (!control) throw new Error('no failure fell in the control group');
    const doc = await recoveryOfInvoice(stack, account.id, control.invoice.id, () => true);

    const paid = signed('payment_intent.succeeded', stripe.payInvoiceAtStripe(control.invoice.id));
    const res = await postWebhook(stack, 'stripe-billing', account.id, paid.body, paid.headers);
    expect(res.body).toEqual({ received: true, action: 'control_paid', transactionId: doc!.publicId });
    // Still a control Recoup never charged, now paid: not past due, and collected in the comparison.
    const byRecoup = stripe
      .intents()
      .filter((i) => i.customer === control.customer && i.metadata[attemptKeyField]);
    expect(byRecoup).toHaveLength(0);
    const after = await recoveryOfInvoice(stack, account.id, control.invoice.id, () => true);
    expect(after).toMatchObject({ state: 'holdout', paidOnTheirOwnAt: expect.any(Date) });
    expect(await isPastDue(account.apiKey, after!.customerEmail!)).toBe(false);
    expect((await summaryNextMonth(account.id)).proofMode).toMatchObject({ control: 1, controlRate: 1 });
  });

  it('an invoice Stripe collected after its recovery failed counts as paid on the customer’s own: not past due, a collected treated payment', async () => {
    const account = await connectedAccount({ proofMode: { enabled: true, controlPercent: 0 } });
    const { invoice, event } = failedInvoice([{ decline: 'expired_card', code: 'expired_card' }]);
    await postWebhook(stack, 'stripe-billing', account.id, event.body, event.headers);
    const failed = await recoveryOfInvoice(stack, account.id, invoice.id, (d) => d.state === 'failed');
    expect(failed).toMatchObject({ state: 'failed', inProofMode: true, lastDeclineCode: 'expired_card' });
    const email = failed!.customerEmail!;
    expect(await isPastDue(account.apiKey, email)).toBe(true);

    // The customer pays the invoice at Stripe after Recoup gave up on it.
    const intent = stripe.payInvoiceAtStripe(invoice.id);
    const paid = signed('payment_intent.succeeded', intent);
    const res = await postWebhook(stack, 'stripe-billing', account.id, paid.body, paid.headers);
    expect(res.body).toEqual({ received: true, action: 'paid_after_end', transactionId: failed!.publicId });
    const after = await recoveryOfInvoice(stack, account.id, invoice.id, () => true);
    expect(after).toMatchObject({ state: 'failed', paidOnTheirOwnAt: expect.any(Date) });
    expect(await isPastDue(account.apiKey, email)).toBe(false);
    expect((await summaryNextMonth(account.id)).proofMode).toMatchObject({ treatment: 1, treatmentRate: 1 });

    // Another notice of the same payment keeps the first one's time.
    const again = signed('payment_intent.succeeded', intent);
    await postWebhook(stack, 'stripe-billing', account.id, again.body, again.headers);
    const last = await recoveryOfInvoice(stack, account.id, invoice.id, () => true);
    expect(last?.paidOnTheirOwnAt).toEqual(after!.paidOnTheirOwnAt);
  });

  it('an invoice whose recovery Recoup already collected is left as it is when Stripe reports it paid', async () => {
    const account = await connectedAccount();
    const { invoice, event } = failedInvoice(['approve']);
    await postWebhook(stack, 'stripe-billing', account.id, event.body, event.headers);
    await writtenBack(stack, account.id, invoice.id);
    const paid = signed('payment_intent.succeeded', stripe.payInvoiceAtStripe(invoice.id));
    const res = await postWebhook(stack, 'stripe-billing', account.id, paid.body, paid.headers);
    await paidNoticeLeftSucceeded(stack, account.id, invoice.id, res);
  });

  it('ignores Recoup’s own payments, payments of no invoice, invoices Stripe does not know and other events', async () => {
    const account = await connectedAccount();
    const own = signed('payment_intent.succeeded', {
      id: 'pi_own',
      object: 'payment_intent',
      metadata: { [attemptKeyField]: 'recovery/x/1' },
    });
    const loose = signed('payment_intent.succeeded', {
      id: 'pi_loose',
      object: 'payment_intent',
      metadata: {},
    });
    const unknown = signed('invoice.payment_failed', {
      id: 'in_unknown',
      object: 'invoice',
      customer: 'cus_x',
      amount_remaining: 100,
      currency: 'usd',
      customer_email: null,
    });
    const other = signed('customer.created', { id: 'cus_new', object: 'customer' });
    for (const event of [own, loose, unknown, other]) {
      const res = await postWebhook(stack, 'stripe-billing', account.id, event.body, event.headers);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ received: true, action: 'ignored', reason: expect.any(String) });
    }
    expect(await stack.stores.recoveries.findByKey(account.id, 'in_unknown')).toBeNull();
  });
});

describe('Stripe Billing connector: the invoice read again before each charge', () => {
  it('an invoice the customer paid at Stripe, its paid notice not yet in, is not charged again when the card they saved arrives first: the recovery stops', async () => {
    const account = await connectedAccount();
    const { invoice, customer, event } = failedInvoice([{ decline: 'do_not_honor' }]);
    await postWebhook(stack, 'stripe-billing', account.id, event.body, event.headers);
    await recoveryOfInvoice(stack, account.id, invoice.id, (d) => d.state === 'queued');
    // Paid on Stripe's hosted invoice page with a card saved for later: payment_method.attached comes first.
    stripe.payInvoiceAtStripe(invoice.id);
    const fresh = `pm_fresh${n}`;
    stripe.addCard(fresh, { customer, answers: ['approve'] });
    const attached = attachedCard(fresh, customer);
    const res = await postWebhook(stack, 'stripe-billing', account.id, attached.body, attached.headers);
    expect(res.body).toEqual({ received: true, action: 'card_updated', recoveriesRetried: 1 });

    const ended = await recoveryOfInvoice(stack, account.id, invoice.id, (d) => d.endedAt !== undefined);
    expect(ended).toMatchObject({
      state: 'stopped',
      lastDeclineCode: 'invoice_not_owed',
      recommendedAction: 'monitor',
      nextAttemptAt: null,
    });
    expect(stripe.intents().filter((i) => i.payment_method === fresh)).toEqual([]);
    expect(stripe.invoicePays()).not.toContain(`recoup-write-back/${invoice.id}`);
    const events = await stack.stores.events.list({ accountId: account.id, limit: 200 });
    expect(events.map((e) => e.type)).not.toContain('recovery.failed');
    expect(await isPastDue(account.apiKey, ended!.customerEmail!)).toBe(false);
    // Collected at Stripe, as its lost notice would have said: counted as paid on the customer's own.
    const settled = await recoveryOfInvoice(
      stack,
      account.id,
      invoice.id,
      (d) => d.paidOnTheirOwnAt !== undefined,
    );
    expect(settled?.paidOnTheirOwnAt).toBeInstanceOf(Date);
  });

  it('Stripe not answering the invoice read holds the charge until it does: nothing is sent blind, nothing declined', async () => {
    const account = await connectedAccount();
    const { invoice, customer, event } = failedInvoice([{ decline: 'do_not_honor' }]);
    await postWebhook(stack, 'stripe-billing', account.id, event.body, event.headers);
    await recoveryOfInvoice(stack, account.id, invoice.id, (d) => d.state === 'queued');
    const fresh = `pm_fresh${n}`;
    stripe.addCard(fresh, { customer, answers: ['approve'] });
    stripe.invoiceOutage(Number.POSITIVE_INFINITY, 'reads');
    try {
      const attached = attachedCard(fresh, customer);
      await postWebhook(stack, 'stripe-billing', account.id, attached.body, attached.headers);
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      expect(stripe.intents().filter((i) => i.payment_method === fresh)).toEqual([]);
      expect(await stack.stores.recoveries.findByKey(account.id, invoice.id)).toMatchObject({
        state: 'processing',
        attempts: [expect.objectContaining({ declineCode: 'do_not_honor' })],
      });
    } finally {
      stripe.invoiceOutage(null);
    }
    // Stripe answers again: the invoice is still owed, and the held attempt charges the new card.
    const done = await writtenBack(stack, account.id, invoice.id);
    expect(done.paymentMethodToken).toBe(fresh);
    expect(stripe.intents().filter((i) => i.payment_method === fresh)).toHaveLength(1);
  });

  it('an invoice partly paid at Stripe, its notice lost, is never charged in full: the recovery is lowered to what remains', async () => {
    const account = await connectedAccount();
    const { invoice, customer, event } = failedInvoice([{ decline: 'do_not_honor' }]);
    await postWebhook(stack, 'stripe-billing', account.id, event.body, event.headers);
    const queued = await recoveryOfInvoice(stack, account.id, invoice.id, (d) => d.state === 'queued');
    stripe.payPartOfInvoiceAtStripe(invoice.id, 900);
    const fresh = `pm_fresh${n}`;
    stripe.addCard(fresh, { customer, answers: ['approve'] });
    const attached = attachedCard(fresh, customer);
    await postWebhook(stack, 'stripe-billing', account.id, attached.body, attached.headers);
    // The attempt is held, and the workflow told what is still due, as a partial-payment notice would.
    const workflow = stack.temporal.workflow.getHandle(queued!.workflowId);
    const told = await poll(
      async () => (await workflow.fetchHistory()).events ?? [],
      (events) => events.some((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'amountDue'),
    );
    expect(told.some((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'amountDue')).toBe(
      true,
    );
    expect(stripe.intents().filter((i) => i.payment_method === fresh)).toEqual([]);
    // The customer's next card collects only the 20.00 still due of the 29.00.
    const other = `pm_other${n}`;
    stripe.addCard(other, { customer, answers: ['approve'] });
    const again = attachedCard(other, customer);
    await postWebhook(stack, 'stripe-billing', account.id, again.body, again.headers);
    const done = await writtenBack(stack, account.id, invoice.id);
    expect(done).toMatchObject({ amount: 2000, paymentMethodToken: other });
    expect(stripe.intents().filter((i) => [fresh, other].includes(i.payment_method))).toEqual([
      expect.objectContaining({ payment_method: other, amount: 2000, status: 'succeeded' }),
    ]);
  });

  it('a bank debit or Link method the customer saves is not retried as a card', async () => {
    const account = await connectedAccount();
    const { invoice, customer, event } = failedInvoice([{ decline: 'do_not_honor' }]);
    await postWebhook(stack, 'stripe-billing', account.id, event.body, event.headers);
    await recoveryOfInvoice(stack, account.id, invoice.id, (d) => d.state === 'queued');
    for (const type of ['sepa_debit', 'us_bank_account', 'link']) {
      const method = `pm_${type.replaceAll('_', '')}${n}`;
      stripe.addCard(method, { customer, answers: ['approve'] });
      const attached = attachedCard(method, customer, type);
      const res = await postWebhook(stack, 'stripe-billing', account.id, attached.body, attached.headers);
      expect(res.body).toEqual({
        received: true,
        action: 'ignored',
        reason: `The payment method is a ${type}, not a card Recoup retries`,
      });
      expect(stripe.intents().filter((i) => i.payment_method === method)).toEqual([]);
    }
    expect(await stack.stores.recoveries.findByKey(account.id, invoice.id)).toMatchObject({
      state: 'queued',
    });
  });

  it('a failed invoice the customer is to pay themselves (send_invoice) is not recovered off-session', async () => {
    const account = await connectedAccount();
    const { invoice, card } = failedInvoice(['approve']);
    const manual = signed('invoice.payment_failed', { ...invoice, collection_method: 'send_invoice' });
    const res = await postWebhook(stack, 'stripe-billing', account.id, manual.body, manual.headers);
    expect(res).toMatchObject({
      status: 200,
      body: { action: 'ignored', reason: expect.stringContaining('send_invoice') },
    });
    expect(await stack.stores.recoveries.findByKey(account.id, invoice.id)).toBeNull();
    expect(stripe.intents().filter((i) => i.payment_method === card && i.metadata[attemptKeyField])).toEqual(
      [],
    );
  });
});

describe('Stripe Billing connector: customer.source.expiring', () => {
  it('forwards Stripe’s notice of an expiring card source as one card.expiring_soon', async () => {
    const account = await connectedAccount();
    const card = {
      id: 'card_expiring1',
      object: 'card',
      brand: 'MasterCard',
      last4: '4444',
      exp_month: 12,
      exp_year: 2030,
      customer: 'cus_expiring',
      country: 'NO',
    };
    const event = signed('customer.source.expiring', card);
    const payload = await expiryNoticeForwarded(
      stack,
      account.id,
      () => postWebhook(stack, 'stripe-billing', account.id, event.body, event.headers),
      { paymentMethodToken: 'card_expiring1', expMonth: 12, expYear: 2030 },
    );
    expect(payload.message).toMatch(/^stripe-billing reports that the MasterCard card ending 4444/);
    expect(payload).not.toHaveProperty('customerEmail');
  });

  it('ignores an expiring source that is not a card', async () => {
    const account = await connectedAccount();
    const event = signed('customer.source.expiring', { id: 'src_1', object: 'source', type: 'sepa_debit' });
    const res = await postWebhook(stack, 'stripe-billing', account.id, event.body, event.headers);
    expect(res.body).toMatchObject({
      action: 'ignored',
      reason: 'The expiring source is a source, not a card',
    });
  });
});
