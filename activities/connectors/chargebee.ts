import { basicAuthValidator, WebhookAuthenticationError } from 'chargebee';
import { z } from 'zod';
import type { ConnectorAction } from '../../domain/connectors.js';
import { pageLocaleOf } from '../../domain/links.js';
import { clientOf, currentInvoice, writeBack } from './chargebee-api.js';
import {
  ignored,
  type ConnectorContext,
  type InvoiceStanding,
  type PlatformConnector,
  type RecoveredInvoice,
  type VerifiedEvent,
} from './types.js';
import { jsonOf, notAnEvent, notAnEventIn, samePair } from './webhook-body.js';

/**
 * The Chargebee connector's configuration: the basic-auth pair the merchant types into Chargebee's webhook
 * settings, and the site and an API key, which read each invoice before it is charged and write back. `apiBase` replaces https://{site}.chargebee.com
 * (tests point it at a loopback emulator).
 */
export const ChargebeeConfig = z
  .object({
    // Basic auth splits the pair at the first colon, so a username holding one could never match.
    username: z.string().regex(/^[^:]{1,256}$/, 'must be 1–256 characters without a colon'),
    password: z.string().min(1).max(256),
    site: z
      .string()
      .regex(/^[a-z0-9][a-z0-9-]{0,62}$/i, 'must be the site name (acme in acme.chargebee.com)')
      .optional(),
    // Optional in the schema only so configurations stored before they were required still load; `configProblem`
    // refuses a new one without them.
    apiKey: z.string().min(1).max(256).optional(),
    apiBase: z.url({ protocol: /^https?$/ }).optional(),
  })
  .strict()
  .refine((c) => (c.site === undefined) === (c.apiKey === undefined), {
    message: 'site and apiKey go together',
    path: ['apiKey'],
  });
export type ChargebeeConfig = z.infer<typeof ChargebeeConfig>;

// The envelope and the content fields read, as the SDK types them (types/resources/WebhookEvent.d.ts,
// Transaction.d.ts, Invoice.d.ts, Customer.d.ts, Card.d.ts, PaymentSource.d.ts). Chargebee leaves absent
// fields out.
const text = z.string().nullish();
const Envelope = z.object({ id: z.string().min(1), event_type: z.string().min(1) });
const PaymentFailedEvent = z.object({
  content: z.object({
    transaction: z.object({
      amount: z.int().nullish(),
      currency_code: text,
      customer_id: text,
      error_code: text,
      error_detail: z.object({ decline_code: text }).nullish(),
      linked_invoices: z.array(z.object({ invoice_id: z.string() })).nullish(),
      iin: text,
    }),
    invoice: z.object({ id: z.string(), amount_due: z.int().nullish(), currency_code: text }).nullish(),
    customer: z
      .object({
        id: z.string(),
        email: text,
        locale: text,
        payment_method: z.object({ reference_id: text, gateway: text }).nullish(),
      })
      .nullish(),
    card: z.object({ iin: text, issuing_country: text, billing_country: text }).nullish(),
  }),
});
const PaymentSucceededEvent = z.object({
  content: z.object({
    transaction: z.object({
      status: text,
      linked_invoices: z.array(z.object({ invoice_id: z.string(), invoice_status: z.string() })).nullish(),
    }),
    invoice: z
      .object({
        id: z.string(),
        status: z.string(),
        amount_due: z.int().nullish(),
        currency_code: text,
      })
      .nullish(),
  }),
});
const PaymentSourceUpdatedEvent = z.object({
  content: z.object({
    payment_source: z.object({
      customer_id: z.string(),
      reference_id: z.string(),
      gateway: text,
      status: z.string(),
      deleted: z.boolean().nullish(),
    }),
  }),
});

const PaymentSourceExpiringEvent = z.object({
  content: z.object({
    customer: z.object({ email: text }).nullish(),
    payment_source: z.object({
      reference_id: z.string(),
      gateway: text,
      card: z.object({
        brand: z.string(),
        last4: z.string(),
        expiry_month: z.int().min(1).max(12),
        expiry_year: z.int().min(2000).max(9999),
      }),
    }),
  }),
});

/**
 * The token Recoup charges, from a card's reference_id: `<gateway customer>/<gateway payment method>`
 * (Chargebee's "Update payment method for a customer": Stripe cus_…/card_… or pm_…; Braintree the customer
 * id and the payment method token). Stripe charges the payment method alone; Recoup's Braintree token is
 * `<payment method token>|<customer id>`, since a vaulted Braintree card is charged with its customer.
 * `gateway` is the one Chargebee names for the card, else the account's primary gateway.
 */
function tokenOf(referenceId: string | null | undefined, gateway: string | null | undefined): string | null {
  const [customer, ...rest] = (referenceId ?? '').split('/').map((part) => part.trim());
  const method = rest.at(-1) ?? customer;
  if (!method) return null;
  // A Braintree reference of the customer alone names no card: it goes on as it is, and the intake's 422
  // tells the merchant (in Chargebee's webhook log) that Braintree cannot charge it.
  return gateway === 'braintree' && customer && rest.length > 0 ? `${method}|${customer}` : method;
}

/** The gateway that vaulted a card: as Chargebee names it, else the account's primary one. */
const gatewayOf = (named: string | null | undefined, ctx: ConnectorContext) =>
  named ?? ctx.gateways[0]?.kind ?? null;

/**
 * Why a configuration without the site and an API key recovers nothing: the event's invoice is a snapshot
 * that cannot be checked, and Recoup remembers no payment Chargebee reported (a payment_succeeded, then a
 * late payment_failed of the same invoice, would charge the customer twice); nor could it write back.
 */
const credentialsRequired =
  'site and apiKey are required: without reading the invoice, a payment_failed Chargebee delivers after the invoice was paid would be charged again';

/** The invoice's statuses that await the payment Recoup would collect (Chargebee's Invoice `status`). */
const awaitingPayment = new Set(['payment_due', 'not_paid']);

/**
 * Chargebee resends a webhook for days and does not order them, so the event's invoice is a snapshot: the
 * customer may have paid it since. The invoice is read back, and only one still awaiting payment is
 * recovered, of what it still owes; a failed read throws (the intake answers 5xx and Chargebee resends). A
 * configuration without API credentials (set before they were required) recovers nothing: a late
 * payment_failed of an invoice already paid would be charged again.
 */
async function paymentFailed(
  payload: unknown,
  config: ChargebeeConfig,
  ctx: ConnectorContext,
): Promise<ConnectorAction> {
  if (!config.site || !config.apiKey) return ignored(credentialsRequired);
  const parsed = PaymentFailedEvent.safeParse(payload);
  if (!parsed.success) return ignored('The payment_failed event lacks the transaction Recoup needs');
  const { transaction: t, invoice, customer, card } = parsed.data.content;
  const invoiceId = invoice?.id ?? t.linked_invoices?.[0]?.invoice_id;
  if (!invoiceId) return ignored('The failed payment was for no invoice');
  // The event names the gateway reference of the customer's primary payment method only.
  const method = customer?.payment_method;
  const token = tokenOf(method?.reference_id, gatewayOf(method?.gateway, ctx));
  if (!token) return ignored('The customer has no gateway payment method to retry');
  const current = await currentInvoice(clientOf(config.site, config.apiKey, config.apiBase), invoiceId);
  if (!current) return ignored('Chargebee does not know the invoice');
  if (current.status === 'paid') return ignored('The invoice is paid at Chargebee, nothing is owed');
  if (!awaitingPayment.has(current.status))
    return ignored(`The invoice is ${current.status} at Chargebee, no longer due for collection`);
  const amount = current.amount_due ?? 0;
  const currency = current.currency_code;
  if (amount <= 0) return ignored('The invoice is paid at Chargebee, nothing is owed');
  // Chargebee passes the gateway's codes through; Stripe's specific decline code sits under error_detail.
  const code = (t.error_detail?.decline_code ?? t.error_code)?.toLowerCase();
  const iin = card?.iin ?? t.iin;
  const country = card?.issuing_country ?? card?.billing_country;
  const locale = pageLocaleOf(customer?.locale);
  return {
    kind: 'failure',
    failure: {
      invoiceId,
      customerId: customer?.id ?? t.customer_id ?? null,
      paymentMethodToken: token,
      amount,
      currency,
      ...(code ? { originalDeclineCode: code } : {}),
      ...(customer?.email ? { customerEmail: customer.email } : {}),
      ...(country ? { cardOrigin: country } : {}),
      ...(iin && /^\d{6}/.test(iin) ? { binPrefix: iin.slice(0, 6) } : {}),
      ...(locale ? { locale } : {}),
    },
  };
}

/**
 * Chargebee collected an invoice (its own retry, the customer on the portal or the hosted invoice page): the
 * recovery keyed by that invoice (as paymentFailed keys it) stops. A payment that leaves part of the invoice
 * due lowers the recovery to that `amount_due`. The payment Recoup's write-back records may bring this event
 * too: its recovery has succeeded by then, and the intake leaves a succeeded recovery as it is.
 */
function paymentSucceeded(payload: unknown): ConnectorAction {
  const parsed = PaymentSucceededEvent.safeParse(payload);
  if (!parsed.success) return ignored('The payment_succeeded event lacks its transaction');
  const { transaction: t, invoice } = parsed.data.content;
  if (t.status && t.status !== 'success') return ignored(`The payment is ${t.status}, not collected`);
  const linked = t.linked_invoices?.[0];
  const paid = invoice
    ? { id: invoice.id, status: invoice.status }
    : linked && { id: linked.invoice_id, status: linked.invoice_status };
  if (!paid) return ignored('The payment paid no invoice');
  if (paid.status !== 'paid') {
    const due = invoice?.amount_due;
    return due && due > 0 && invoice.currency_code && awaitingPayment.has(invoice.status)
      ? { kind: 'partly_paid', invoiceId: invoice.id, amountDue: due, currency: invoice.currency_code }
      : ignored(`The invoice is ${paid.status} at Chargebee after the payment: part of it is still due`);
  }
  return { kind: 'paid', invoiceId: paid.id };
}

function paymentSourceUpdated(payload: unknown, ctx: ConnectorContext): ConnectorAction {
  const parsed = PaymentSourceUpdatedEvent.safeParse(payload);
  if (!parsed.success) return ignored('The payment_source_updated event lacks its payment source');
  const source = parsed.data.content.payment_source;
  // An expired or invalid source would only decline again.
  if (source.deleted || !['valid', 'expiring'].includes(source.status))
    return ignored(`The payment source is not chargeable (${source.deleted ? 'deleted' : source.status})`);
  const newToken = tokenOf(source.reference_id, gatewayOf(source.gateway, ctx));
  return newToken
    ? { kind: 'card_updated', customerId: source.customer_id, newToken }
    : ignored('The payment source has no gateway reference');
}

/** Chargebee's notice of a card source about to expire: forwarded as card.expiring_soon. */
function paymentSourceExpiring(payload: unknown, ctx: ConnectorContext): ConnectorAction {
  const parsed = PaymentSourceExpiringEvent.safeParse(payload);
  if (!parsed.success) return ignored('The payment_source_expiring event names no card with its expiry');
  const { customer, payment_source: source } = parsed.data.content;
  const token = tokenOf(source.reference_id, gatewayOf(source.gateway, ctx));
  if (!token) return ignored('The payment source has no gateway reference');
  return {
    kind: 'card_expiring',
    card: {
      token,
      expMonth: source.card.expiry_month,
      expYear: source.card.expiry_year,
      brand: source.card.brand,
      last4: source.card.last4,
      customerEmail: customer?.email ?? null,
    },
  };
}

/**
 * The invoice as Chargebee holds it just before Recoup charges it: owed while it awaits payment with an
 * amount due (that amount), else not owed. A failed read throws, so the charge waits for Chargebee.
 */
async function invoiceStanding(
  config: ChargebeeConfig,
  recovered: RecoveredInvoice,
): Promise<InvoiceStanding> {
  if (!config.site || !config.apiKey) return { kind: 'unreadable' };
  const invoice = await currentInvoice(clientOf(config.site, config.apiKey, config.apiBase), recovered.id);
  if (!invoice) return { kind: 'not_owed', reason: 'Chargebee no longer knows the invoice' };
  const due = invoice.amount_due ?? 0;
  if (!awaitingPayment.has(invoice.status) || due <= 0)
    return {
      kind: 'not_owed',
      reason: `The invoice is ${invoice.status} at Chargebee`,
      paid: invoice.status === 'paid',
    };
  return { kind: 'owed', amountDue: due, currency: invoice.currency_code };
}

/** The event in an authenticated body. */
function eventOf(rawBody: Buffer): VerifiedEvent {
  const json = jsonOf(rawBody);
  const envelope = Envelope.safeParse(json);
  if (envelope.success) return { id: envelope.data.id, type: envelope.data.event_type, payload: json };
  // The merchant's own Chargebee sent it, yet it is no event: ignored (see notAnEventIn).
  return notAnEventIn(rawBody);
}

/** Chargebee: authenticated by the basic-auth pair set on the webhook, checked with the SDK's validator. */
export const chargebee: PlatformConnector<ChargebeeConfig> = {
  config: ChargebeeConfig,
  configProblem: (config) => (config.site && config.apiKey ? null : credentialsRequired),
  async verify(request, config) {
    const validate = basicAuthValidator((username, password) => samePair({ username, password }, config));
    try {
      await validate(request.headers);
    } catch (error) {
      if (error instanceof WebhookAuthenticationError) return null;
      throw error;
    }
    return eventOf(request.rawBody);
  },
  interpret(event, config, ctx) {
    switch (event.type) {
      case 'payment_failed':
        return paymentFailed(event.payload, config, ctx);
      case 'payment_succeeded':
        return Promise.resolve(paymentSucceeded(event.payload));
      case 'payment_source_updated':
        return Promise.resolve(paymentSourceUpdated(event.payload, ctx));
      case 'payment_source_expiring':
        return Promise.resolve(paymentSourceExpiring(event.payload, ctx));
      case notAnEvent:
        return Promise.resolve(ignored('The body is not a Chargebee event'));
      default:
        return Promise.resolve(ignored(`Recoup does not act on ${event.type}`));
    }
  },
  invoiceStanding,
  writeBack,
};
