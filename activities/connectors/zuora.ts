import { z } from 'zod';
import type { ConnectorAction, WriteBackOutcome } from '../../domain/connectors.js';
import { tokenFitsKind } from '../../domain/gateway-kinds.js';
import { majorUnitsOf, minorUnitsOf } from '../../domain/money.js';
import {
  ignored,
  type ConnectorContext,
  owedBalance,
  type InvoiceStanding,
  type PlatformConnector,
  type RecoveredInvoice,
  type VerifiedEvent,
  type WriteBack,
} from './types.js';
import { api } from './zuora-api.js';
import { basicAuthMatches, bodyDigestId, jsonOf } from './webhook-body.js';

/**
 * The Zuora connector's configuration: the basic-auth pair set on the callout template, and an OAuth client
 * (Settings > Administration > Manage Users) to read the payment method's gateway token and to record the
 * recovered payment. Zuora's REST host differs per data centre (https://rest.zuora.com,
 * https://rest.eu.zuora.com, sandboxes…), so `apiBase` has no default.
 */
export const ZuoraConfig = z
  .object({
    // Basic auth splits the pair at the first colon, so a username holding one could never match.
    username: z.string().regex(/^[^:]{1,256}$/, 'must be 1–256 characters without a colon'),
    password: z.string().min(1).max(256),
    clientId: z
      .string()
      .trim()
      .min(1, 'is required: the callout names the payment method, the API its token'),
    clientSecret: z.string().trim().min(1).max(256),
    apiBase: z.url({
      protocol: /^https?$/,
      error: "must be the tenant's REST base, e.g. https://rest.zuora.com",
    }),
  })
  .strict();
export type ZuoraConfig = z.infer<typeof ZuoraConfig>;

/** The events Recoup acts on; each documented callout template says its own in its `event` field. */
const paymentFailure = 'Payment.Failure';
const paymentSuccess = 'Payment.Success';

/**
 * The body of the callout template docs/connectors.md gives (Zuora lets the merchant write the body, with
 * `{{DataSource.<Object>.<Field>}}` merge fields; a merge field renders as text, and an empty one as "").
 */
const text = z.string().trim();
const Callout = z.object({
  event: z.literal(paymentFailure),
  paymentId: text.min(1),
  invoiceId: text,
  accountId: text.min(1),
  paymentMethodId: text.min(1),
  amount: z.union([z.string(), z.number()]).transform(String),
  currency: text.min(3),
  gatewayResponseCode: text.optional(),
  bin: text.optional(),
  email: text.optional(),
});
type Callout = z.infer<typeof Callout>;

/** The body of the Payment Processed template (docs/connectors.md): the payment and the invoice it paid. */
const SuccessCallout = z.object({
  event: z.literal(paymentSuccess),
  paymentId: text.min(1),
  invoiceId: text,
  accountId: text.min(1),
});
type SuccessCallout = z.infer<typeof SuccessCallout>;
const AnyCallout = z.discriminatedUnion('event', [Callout, SuccessCallout]);

const PaymentMethod = z.object({ TokenId: z.string().nullish(), SecondTokenId: z.string().nullish() });
/**
 * An invoice as `GET /v1/invoices/{id}` gives it: its `amount`, the `balance` left to pay, and of what
 * brought the balance down, the payments applied (`paymentAmount`) and the part of them refunded
 * (`refundAmount`); credit memos, adjustments and credit balance have fields of their own.
 */
const Invoice = z.object({
  amount: z.number().nullish(),
  balance: z.number(),
  paymentAmount: z.number().nullish(),
  refundAmount: z.number().nullish(),
  status: z.string(),
  accountId: z.string(),
  currency: z.string().nullish(),
});
type Invoice = z.infer<typeof Invoice>;
const ApplicationParts = z.object({
  applicationParts: z.array(z.object({ paymentId: z.string().nullish() })).nullish(),
});
const Payment = z.object({ referenceId: z.string().nullish() });

/**
 * The card as the account's primary gateway charges it. A credit card reference transaction payment method
 * keeps the gateway's ids as TokenId / SecondTokenId (Stripe: card_…/pm_… and cus_…), so the one that fits
 * the gateway's token shape is the card. When neither fits, TokenId goes on, so the intake's 422 tells the
 * merchant (in Zuora's callout history) that this gateway cannot charge the card.
 */
async function cardOf(config: ZuoraConfig, paymentMethodId: string, ctx: ConnectorContext) {
  const body = await api(config, `/v1/object/payment-method/${encodeURIComponent(paymentMethodId)}`);
  if (body === null) return null;
  const method = PaymentMethod.parse(body);
  const kind = ctx.gateways[0]?.kind ?? 'test';
  const candidates = [method.TokenId, method.SecondTokenId].map((t) => t?.trim());
  return candidates.find((t): t is string => !!t && tokenFitsKind(kind, t)) ?? (candidates[0] || null);
}

/** The invoice as Zuora holds it now (`GET /v1/invoices/{id}`), or null when Zuora does not know it. */
async function currentInvoice(config: ZuoraConfig, invoiceId: string) {
  const found = await api(config, `/v1/invoices/${encodeURIComponent(invoiceId)}`);
  return found === null ? null : Invoice.parse(found);
}

/**
 * Zuora retries a callout that failed and may deliver it late, so the callout is a snapshot: the customer
 * may have paid the invoice since. It is read back, and only a Posted invoice with a balance is recovered,
 * of that balance. A failed read throws: the intake answers 5xx and Zuora (Retriable on) calls again.
 */
async function paymentFailed(
  c: Callout,
  config: ZuoraConfig,
  ctx: ConnectorContext,
): Promise<ConnectorAction> {
  // An empty merge field: the payment was for no invoice (e.g. a standalone payment).
  if (!c.invoiceId) return ignored('The failed payment was for no invoice');
  const invoice = await currentInvoice(config, c.invoiceId);
  if (!invoice) return ignored('Zuora does not know the invoice');
  if (invoice.status !== 'Posted')
    return ignored(`The invoice is ${invoice.status} at Zuora, no longer due for collection`);
  // Zuora keeps a paid invoice Posted: its balance (amount - payments + adjustments - credit) is what is due.
  if (invoice.balance <= 0) return ignored('The invoice is paid at Zuora, nothing is owed');
  const amount = minorUnitsOf(invoice.balance, c.currency);
  if (amount === null) return ignored(`The invoice's balance ${invoice.balance} is not an amount`);
  const token = await cardOf(config, c.paymentMethodId, ctx);
  if (!token) return ignored('The payment method has no gateway token');
  const code = c.gatewayResponseCode?.toLowerCase();
  return {
    kind: 'failure',
    failure: {
      invoiceId: c.invoiceId,
      customerId: c.accountId,
      paymentMethodToken: token,
      amount,
      currency: c.currency.toUpperCase(),
      ...(code ? { originalDeclineCode: code } : {}),
      ...(c.email ? { customerEmail: c.email } : {}),
      ...(c.bin && /^\d{6}/.test(c.bin) ? { binPrefix: c.bin.slice(0, 6) } : {}),
    },
  };
}

/**
 * A payment Zuora processed (the customer in a Zuora portal or payment page, or Zuora's own payment run):
 * the invoice's recovery stops once the invoice is read back with nothing left to pay; a partial payment
 * lowers it to the balance left. Recoup's own write-back is an External payment, which this event never
 * reports.
 */
async function paymentProcessed(c: SuccessCallout, config: ZuoraConfig): Promise<ConnectorAction> {
  if (!c.invoiceId) return ignored('The payment was for no invoice');
  const invoice = await currentInvoice(config, c.invoiceId);
  if (!invoice) return ignored('Zuora does not know the invoice');
  if (invoice.status !== 'Posted') return ignored(`The invoice is ${invoice.status} at Zuora, not paid`);
  if (invoice.balance <= 0) return { kind: 'paid', invoiceId: c.invoiceId };
  const currency = invoice.currency?.toUpperCase();
  const amountDue = currency ? minorUnitsOf(invoice.balance, currency) : null;
  return currency && amountDue
    ? { kind: 'partly_paid', invoiceId: c.invoiceId, amountDue, currency }
    : ignored(`The invoice still has a balance of ${invoice.balance} at Zuora, in no currency Recoup reads`);
}

/**
 * Whether payments settled the invoice: what they applied, less what was refunded of them, covers its whole
 * amount. Zuora keeps a settled invoice Posted with balance 0 however it was settled, so one a credit memo
 * or an adjustment brought there, alone or with part payments, reads as written off, not paid.
 */
function paidByPayments(invoice: Invoice, currency: string): boolean {
  // No amount to compare with (a response without it): not counted as paid, rather than counted wrongly.
  if (invoice.amount === null || invoice.amount === undefined) return false;
  const payments = minorUnitsOf(invoice.paymentAmount ?? 0, currency);
  const refunds = minorUnitsOf(invoice.refundAmount ?? 0, currency);
  const amount = minorUnitsOf(invoice.amount, currency);
  if (payments === null || refunds === null || amount === null) return false;
  return payments - refunds >= amount;
}

/**
 * The invoice as Zuora holds it just before Recoup charges it: owed while Posted with a balance (that
 * balance), else not owed, and paid when payments settled it. A failed read throws, so the charge waits
 * for Zuora.
 */
async function invoiceStanding(config: ZuoraConfig, recovered: RecoveredInvoice): Promise<InvoiceStanding> {
  const invoice = await currentInvoice(config, recovered.id);
  if (!invoice) return { kind: 'not_owed', reason: 'Zuora no longer knows the invoice' };
  // Without the invoice's currency its amounts are read in the recovery's, which Zuora's callout gave.
  const currency = invoice.currency?.toUpperCase() ?? recovered.currency;
  if (invoice.status !== 'Posted' || invoice.balance <= 0)
    return {
      kind: 'not_owed',
      reason: `The invoice is ${invoice.status} at Zuora, with nothing left to pay`,
      paid: invoice.status === 'Posted' && paidByPayments(invoice, currency),
    };
  return owedBalance(invoice.balance, currency);
}

/**
 * Whether a payment applied to the invoice carries `reference` (Recoup's gateway transaction id): its own
 * External payment, recorded by an earlier write-back whose answer was lost. Reads the invoice's
 * application parts (`GET /v1/invoices/{id}/application-parts`) and each part's payment.
 */
async function recordedByRecoup(config: ZuoraConfig, invoiceId: string, reference: string) {
  const found = await api(config, `/v1/invoices/${encodeURIComponent(invoiceId)}/application-parts`);
  const parts = ApplicationParts.parse(found ?? {}).applicationParts ?? [];
  const payments = await Promise.all(
    parts.flatMap(({ paymentId }) =>
      paymentId ? [api(config, `/v1/payments/${encodeURIComponent(paymentId)}`)] : [],
    ),
  );
  return payments.some((p) => p !== null && Payment.parse(p).referenceId === reference);
}

/**
 * The payment method type of Recoup's External payment. Zuora's "Create a payment": without a
 * `paymentMethodId` the account's default payment method is used, and one of another kind than the payment
 * is an error (an account Zuora charges by card has an electronic default), so `paymentMethodType` is to be
 * given for an external payment. Recoup collected by card, through the merchant's gateway outside Zuora:
 * Credit Card, a type Zuora lets external payments use once the tenant enables it.
 */
const externalPaymentMethodType = 'CreditCard';

/**
 * Records the recovered payment as an External payment applied to the invoice, which stops Zuora's
 * collection of it. The invoice is read first: a retry finds it paid, by Recoup's own payment whose answer
 * was lost (`recorded`: the payment carries the gateway transaction id as its reference) or by another one
 * (`already_paid`). The POST carries an idempotency key (Zuora keeps one 24 h: developer.zuora.com
 * "Idempotent requests").
 */
async function writeBack(config: ZuoraConfig, payment: WriteBack): Promise<WriteBackOutcome> {
  const invoice = await currentInvoice(config, payment.invoiceId);
  if (!invoice) throw new Error(`Zuora has no invoice ${payment.invoiceId}`);
  if (invoice.status === 'Canceled' || invoice.status === 'Cancelled') return 'closed';
  if (invoice.balance <= 0)
    return (await recordedByRecoup(config, payment.invoiceId, payment.gatewayTransactionId))
      ? 'recorded'
      : 'already_paid';
  // Never more than the balance: a charge that collected while part of the invoice was paid elsewhere took
  // more (the merchant refunds the rest), and Zuora applies no more than an invoice's balance.
  const owed = minorUnitsOf(invoice.balance, payment.currency) ?? payment.amount;
  const amount = majorUnitsOf(Math.min(payment.amount, owed), payment.currency);
  await api(config, '/v1/payments', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'idempotency-key': `recoup-write-back/${payment.invoiceId}`,
    },
    body: JSON.stringify({
      type: 'External',
      paymentMethodType: externalPaymentMethodType,
      accountId: invoice.accountId,
      amount,
      currency: payment.currency,
      effectiveDate: new Date(payment.recoveredAt).toISOString().slice(0, 10),
      invoices: [{ invoiceId: payment.invoiceId, amount }],
      referenceId: payment.gatewayTransactionId,
      comment: 'Recovered by Recoup',
    }),
  });
  return 'recorded';
}

/**
 * The event of an authenticated callout. Zuora's `Zuora-Notification-Id` header is the same on every retry
 * of one notification (docs.zuora.com "Callout notification overview"), so it is the event id; a callout
 * without it (a Workflow callout task) falls back to the payment's id, which one decline or one processed
 * payment has once.
 */
function eventOf(request: { headers: Record<string, string | undefined>; rawBody: Buffer }): VerifiedEvent {
  const notificationId = request.headers['zuora-notification-id']?.trim();
  const parsed = AnyCallout.safeParse(jsonOf(request.rawBody));
  if (parsed.success) {
    const { event, paymentId } = parsed.data;
    const fallback = `${event === paymentFailure ? 'payment' : 'payment-processed'}:${paymentId}`;
    return { id: notificationId || fallback, type: event, payload: parsed.data };
  }
  // The merchant's own Zuora sent it, yet in neither documented template: 200 and ignored, since an error
  // would only bring the same bytes back. Their hash stands in for a missing notification id.
  return { id: notificationId || bodyDigestId(request.rawBody), type: 'not_in_template', payload: null };
}

/** Zuora: callout notifications with basic auth, in the JSON templates docs/connectors.md gives. */
export const zuora: PlatformConnector<ZuoraConfig> = {
  config: ZuoraConfig,
  verify(request, config) {
    if (!basicAuthMatches(request.headers.authorization, config)) return Promise.resolve(null);
    return Promise.resolve(eventOf(request));
  },
  interpret(event, config, ctx) {
    if (event.type === paymentFailure) return paymentFailed(event.payload as Callout, config, ctx);
    if (event.type === paymentSuccess) return paymentProcessed(event.payload as SuccessCallout, config);
    return Promise.resolve(
      ignored(
        'The body is not a Recoup callout template, for Payment Declined or Payment Processed (docs/connectors.md)',
      ),
    );
  },
  invoiceStanding,
  writeBack,
};
