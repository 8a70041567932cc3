import Stripe from 'stripe';
import { z } from 'zod';
import type { ConnectorAction, WriteBackOutcome } from '../../domain/connectors.js';
import { fromGatewayUnits } from '../../domain/money.js';
import type { GatewayConfig } from '../../domain/settings.js';
import { attemptKeyField, StripeCredentials, stripeClient } from '../gateways/stripe.js';
import {
  ignored,
  type ConnectorContext,
  type InvoiceStanding,
  type PlatformConnector,
  type RecoveredInvoice,
  type VerifiedEvent,
  type WriteBack,
} from './types.js';
import { notAnEvent, notAnEventIn } from './webhook-body.js';

/**
 * The Stripe Billing connector's configuration: the webhook endpoint's signing secret and, optionally, an
 * API key of its own. Invoices do not carry the card, so the connector reads it through the API: with this
 * key, else with the key of the account's Stripe gateway.
 */
export const StripeBillingConfig = z
  .object({
    webhookSecret: z.string().regex(/^whsec_[A-Za-z0-9+/=_-]+$/, 'must be a Stripe webhook secret (whsec_…)'),
    apiKey: StripeCredentials.shape.secretKey.optional(),
    apiBase: StripeCredentials.shape.apiBase,
  })
  .strict();
export type StripeBillingConfig = z.infer<typeof StripeBillingConfig>;

/** Stripe's default tolerance: a signed event older than 5 minutes is a replay. */
const toleranceSeconds = 300;

/** What every Stripe event carries and `interpret` reads: its id, its type and the object it is about. */
const EventEnvelope = z.object({
  id: z.string().min(1),
  type: z.string().min(1),
  data: z.object({ object: z.record(z.string(), z.unknown()) }),
});

/** The API credentials the connector reads and writes with, or null when it has none. */
function credentialsOf(config: StripeBillingConfig, gateways: GatewayConfig[]): StripeCredentials | null {
  if (config.apiKey)
    return { secretKey: config.apiKey, ...(config.apiBase ? { apiBase: config.apiBase } : {}) };
  const gateway = gateways.find((g) => g.kind === 'stripe');
  const parsed = gateway && StripeCredentials.safeParse(gateway.credentials);
  return parsed?.success ? parsed.data : null;
}

function clientOf(config: StripeBillingConfig, ctx: ConnectorContext): Stripe {
  const credentials = credentialsOf(config, ctx.gateways);
  if (!credentials) throw new Error('The Stripe Billing connector has no API key (checked when it was set)');
  return stripeClient(credentials);
}

const idOf = (ref: string | { id: string } | null | undefined) =>
  typeof ref === 'string' ? ref : (ref?.id ?? null);

/**
 * The PaymentIntent that last tried to pay an invoice. Webhook endpoints pinned to API versions before
 * 2025-03-31 still put it on the invoice; newer ones list it among the invoice's payments.
 */
async function lastIntentOf(stripe: Stripe, invoice: Stripe.Invoice): Promise<string | null> {
  const legacy = (invoice as { payment_intent?: string | { id: string } | null }).payment_intent;
  if (legacy) return idOf(legacy);
  const payments = await stripe.invoicePayments.list({ invoice: invoice.id, limit: 20 });
  // A paid one is a part of the invoice paid since (a partial payment), not the failure.
  const intents = payments.data
    .filter((p) => p.payment.type === 'payment_intent' && p.payment.payment_intent && p.status !== 'paid')
    .sort((a, b) => b.created - a.created);
  return idOf(intents[0]?.payment.payment_intent);
}

/** The invoice a PaymentIntent paid, by the legacy field or through the invoice payments. */
async function invoiceOf(stripe: Stripe, intent: Stripe.PaymentIntent): Promise<string | null> {
  const legacy = (intent as { invoice?: string | { id: string } | null }).invoice;
  if (legacy) return idOf(legacy);
  const payments = await stripe.invoicePayments.list({
    payment: { type: 'payment_intent', payment_intent: intent.id },
    limit: 1,
  });
  return idOf(payments.data[0]?.invoice);
}

/** The invoice as Stripe holds it now, or null when Stripe does not know it. */
async function currentInvoice(stripe: Stripe, id: string): Promise<Stripe.Invoice | null> {
  try {
    return await stripe.invoices.retrieve(id);
  } catch (error) {
    if (error instanceof Stripe.errors.StripeInvalidRequestError && error.code === 'resource_missing')
      return null;
    throw error;
  }
}

/** The subscription an invoice bills: under `parent` from API version 2025-03-31, on the invoice before. */
function subscriptionOf(invoice: Stripe.Invoice): string | null {
  const legacy = (invoice as { subscription?: string | { id: string } | null }).subscription;
  return idOf(invoice.parent?.subscription_details?.subscription ?? legacy);
}

/**
 * Whether the invoice is the first of a subscription still `incomplete`: the customer's own payment at
 * signup failed, on-session, and Stripe voids the invoice after 23 hours unless the customer pays it (its
 * subscription lifecycle). Recovering it off-session would charge someone who abandoned signup, and the
 * write-back (paid out of band) would activate the subscription.
 */
async function abandonedSignup(stripe: Stripe, invoice: Stripe.Invoice): Promise<boolean | 'unreadable'> {
  if (invoice.billing_reason !== 'subscription_create') return false;
  const id = subscriptionOf(invoice);
  if (!id) return false;
  try {
    const { status } = await stripe.subscriptions.retrieve(id);
    return status === 'incomplete' || status === 'incomplete_expired';
  } catch (error) {
    // A restricted key without Subscriptions read: no redelivery would read it either.
    if (error instanceof Stripe.errors.StripePermissionError) return 'unreadable';
    throw error;
  }
}

/**
 * Stripe neither orders events nor stops redelivering them (for days, after Recoup's own 5xx too), so the
 * event's invoice is a snapshot: the customer may have paid it at Stripe since. The invoice is read back,
 * and only one still open with an amount remaining is recovered, of that amount. A failed read throws: the
 * intake answers 5xx and Stripe delivers the event again.
 */
async function paymentFailed(stripe: Stripe, reported: Stripe.Invoice): Promise<ConnectorAction> {
  // An invoice the customer is to pay themselves (emailed, paid on the hosted page): Stripe never charges it
  // off-session, and neither may Recoup.
  if (reported.collection_method === 'send_invoice')
    return ignored('The invoice is sent for the customer to pay (send_invoice), not charged automatically');
  const invoice = await currentInvoice(stripe, reported.id);
  if (!invoice) return ignored('Stripe does not know the invoice');
  if (invoice.status === 'paid') return ignored('The invoice is paid at Stripe, nothing is owed');
  if (invoice.status !== 'open')
    return ignored(`The invoice is ${invoice.status ?? 'unknown'} at Stripe, no longer due for collection`);
  if (invoice.amount_remaining <= 0) return ignored('The invoice is paid at Stripe, nothing is owed');
  const signup = await abandonedSignup(stripe, invoice);
  if (signup === 'unreadable')
    return ignored(
      "The invoice is the first of a subscription, which the connector's key may not read (grant it Subscriptions read): Recoup does not charge off-session what may be a signup the customer abandoned",
    );
  if (signup)
    return ignored(
      "The invoice is the first of a subscription still incomplete: the customer's payment at signup failed, and Recoup does not charge it off-session",
    );
  // Stripe's units, not ISO's: 5,000 kr is 500000 at Stripe (ISK in hundredths), 5000 to Recoup.
  const amount = fromGatewayUnits(invoice.amount_remaining, invoice.currency, 'stripe');
  if (amount === null)
    return ignored(
      `The amount remaining (${invoice.amount_remaining} ${invoice.currency.toUpperCase()} in Stripe's units) is not a whole number of the currency's ISO 4217 minor units, so it cannot be recovered exactly`,
    );
  const intentId = await lastIntentOf(stripe, invoice);
  if (!intentId) return ignored('The invoice has no payment attempt to recover');
  const intent = await stripe.paymentIntents.retrieve(intentId);
  const error = intent.last_payment_error;
  const method = error?.payment_method ?? null;
  const token = method?.id ?? idOf(intent.payment_method);
  if (!token) return ignored('The failed payment names no payment method to retry');
  const code = error?.decline_code ?? error?.code;
  const country = method?.card?.country;
  return {
    kind: 'failure',
    failure: {
      invoiceId: invoice.id,
      customerId: idOf(invoice.customer),
      paymentMethodToken: token,
      amount,
      currency: invoice.currency,
      ...(code ? { originalDeclineCode: code } : {}),
      ...(invoice.customer_email ? { customerEmail: invoice.customer_email } : {}),
      ...(country ? { cardOrigin: country } : {}),
    },
  };
}

/**
 * A payment made at Stripe (its own retry, the customer on the hosted invoice page) towards the invoice: the
 * invoice is read back, and one still open with an amount remaining (a partial payment) lowers its recovery
 * to that amount; otherwise the recovery stops.
 */
async function paidNotice(stripe: Stripe, invoiceId: string): Promise<ConnectorAction> {
  const invoice = await currentInvoice(stripe, invoiceId);
  if (invoice?.status !== 'open' || invoice.amount_remaining <= 0) return { kind: 'paid', invoiceId };
  const amountDue = fromGatewayUnits(invoice.amount_remaining, invoice.currency, 'stripe');
  return amountDue === null
    ? ignored(
        `The amount remaining (${invoice.amount_remaining} in Stripe's units) is not a whole number of the currency's minor units`,
      )
    : { kind: 'partly_paid', invoiceId, amountDue, currency: invoice.currency };
}

async function interpret(
  event: VerifiedEvent,
  config: StripeBillingConfig,
  ctx: ConnectorContext,
): Promise<ConnectorAction> {
  if (event.type === notAnEvent) return ignored('The body is not a Stripe event');
  const object = (event.payload as Stripe.Event).data.object;
  switch (event.type) {
    case 'invoice.payment_failed':
      return paymentFailed(clientOf(config, ctx), object as Stripe.Invoice);
    case 'payment_method.attached': {
      const method = object as Stripe.PaymentMethod;
      // Recoup retries a card: a bank debit (sepa_debit, us_bank_account) or Link sent as one would fail, or
      // pull a debit the customer never agreed to off-session.
      if (method.type !== 'card')
        return ignored(`The payment method is a ${String(method.type)}, not a card Recoup retries`);
      const customerId = idOf(method.customer);
      return customerId
        ? { kind: 'card_updated', customerId, newToken: method.id }
        : { kind: 'ignored', reason: 'The payment method belongs to no customer' };
    }
    case 'customer.source.expiring': {
      // Stripe sends it for cards saved as sources (card_…) at the start of their expiry month.
      const source = object as Stripe.CustomerSource;
      if (source.object !== 'card')
        return { kind: 'ignored', reason: `The expiring source is a ${source.object}, not a card` };
      return {
        kind: 'card_expiring',
        card: {
          token: source.id,
          expMonth: source.exp_month,
          expYear: source.exp_year,
          brand: source.brand,
          last4: source.last4,
          customerEmail: null,
        },
      };
    }
    case 'payment_intent.succeeded': {
      const intent = object as Stripe.PaymentIntent;
      if (intent.metadata[attemptKeyField])
        return { kind: 'ignored', reason: 'A payment Recoup made itself' };
      const stripe = clientOf(config, ctx);
      const invoiceId = await invoiceOf(stripe, intent);
      return invoiceId ? paidNotice(stripe, invoiceId) : ignored('The payment paid no invoice');
    }
    case 'invoice_payment.paid': {
      // Stripe's notice of a payment applied to an invoice, also one attached after it succeeded (a
      // partial payment the customer made through another channel), which payment_intent.succeeded misses.
      const invoiceId = idOf((object as Stripe.InvoicePayment).invoice);
      return invoiceId
        ? paidNotice(clientOf(config, ctx), invoiceId)
        : ignored('The payment paid no invoice');
    }
    default:
      return { kind: 'ignored', reason: `Recoup does not act on ${event.type}` };
  }
}

/**
 * The invoice as Stripe holds it just before Recoup charges it: owed while open with an amount remaining
 * (that amount), else not owed. A failed read throws, so the charge waits for Stripe to answer.
 */
async function invoiceStanding(
  config: StripeBillingConfig,
  recovered: RecoveredInvoice,
  ctx: ConnectorContext,
): Promise<InvoiceStanding> {
  const credentials = credentialsOf(config, ctx.gateways);
  if (!credentials) return { kind: 'unreadable' };
  const invoice = await currentInvoice(stripeClient(credentials), recovered.id);
  if (!invoice) return { kind: 'not_owed', reason: 'Stripe no longer knows the invoice' };
  if (invoice.status !== 'open' || invoice.amount_remaining <= 0)
    return {
      kind: 'not_owed',
      reason: `The invoice is ${invoice.status ?? 'unknown'} at Stripe`,
      paid: invoice.status === 'paid',
    };
  const amountDue = fromGatewayUnits(invoice.amount_remaining, invoice.currency, 'stripe');
  // Not a whole number of the currency's minor units (a partial payment left a fraction of a króna): no
  // amount Recoup can charge is exactly what is due, so none is charged.
  if (amountDue === null)
    return { kind: 'not_owed', reason: 'The amount remaining at Stripe cannot be charged exactly' };
  return { kind: 'owed', amountDue, currency: invoice.currency };
}

/**
 * Records the recovered payment on the invoice as paid outside Stripe, so Stripe stops collecting it. A paid
 * invoice is paid again under the same idempotency key: when Recoup's own earlier call paid it (its answer
 * lost to a timeout or a dead worker), Stripe replays that success, so the outcome is `recorded`; any
 * other payment leaves Stripe refusing the call (`already_paid`). Stripe keeps keys for 24 hours, so a retry
 * later than that cannot tell the two apart and reports `already_paid`.
 */
async function writeBack(
  config: StripeBillingConfig,
  payment: WriteBack,
  ctx: ConnectorContext,
): Promise<WriteBackOutcome> {
  const credentials = credentialsOf(config, ctx.gateways);
  if (!credentials) return 'not_configured';
  const stripe = stripeClient(credentials);
  const invoice = await stripe.invoices.retrieve(payment.invoiceId);
  if (invoice.status === 'void') return 'closed';
  try {
    await stripe.invoices.pay(
      payment.invoiceId,
      { paid_out_of_band: true },
      { idempotencyKey: `recoup-write-back/${payment.invoiceId}` },
    );
  } catch (error) {
    if (invoice.status === 'paid' && error instanceof Stripe.errors.StripeInvalidRequestError)
      return 'already_paid';
    throw error;
  }
  return 'recorded';
}

/** Stripe Billing: signed with Stripe-Signature, verified by Stripe's own library. */
export const stripeBilling: PlatformConnector<StripeBillingConfig> = {
  config: StripeBillingConfig,
  configProblem: (config, gateways) =>
    credentialsOf(config, gateways)
      ? null
      : 'apiKey is required when the account has no Stripe gateway: invoices do not carry the card to retry',
  verify(request, config, now) {
    const header = request.headers['stripe-signature'];
    if (!header) return Promise.resolve(null);
    let event: Stripe.Event;
    try {
      event = Stripe.webhooks.constructEvent(
        request.rawBody,
        header,
        config.webhookSecret,
        toleranceSeconds,
        undefined,
        now.getTime(),
      );
    } catch (error) {
      if (error instanceof Stripe.errors.StripeSignatureVerificationError) return Promise.resolve(null);
      // The library parses the body only once its signature passed: signed, yet not JSON.
      if (error instanceof SyntaxError) return Promise.resolve(notAnEventIn(request.rawBody));
      throw error;
    }
    const envelope = EventEnvelope.safeParse(event);
    return Promise.resolve(
      envelope.success
        ? { id: envelope.data.id, type: envelope.data.type, payload: event }
        : notAnEventIn(request.rawBody),
    );
  },
  interpret,
  invoiceStanding,
  writeBack,
};
