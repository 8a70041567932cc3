import { createHmac, timingSafeEqual } from 'node:crypto';
import Recurly from 'recurly';
import adapterModule from 'recurly/lib/recurly/DefaultHttpAdapter.js';
import { z } from 'zod';
import type { ConnectorAction, WriteBackOutcome } from '../../domain/connectors.js';
import { tokenFitsKind } from '../../domain/gateway-kinds.js';
import { minorUnitsOf } from '../../domain/money.js';
import { declineCodeOfRecurly } from './recurly-declines.js';
import { collectedByRecurly, markedByRecoup } from './recurly-paid-by.js';
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
import { jsonOf } from './webhook-body.js';

/**
 * The Recurly connector's configuration: the webhook endpoint's secret key and a private API key. Recurly's
 * JSON notifications carry ids only, so the connector cannot work without reading the API.
 */
export const RecurlyConfig = z
  .object({
    webhookSecret: z.string().trim().min(1, "must be the webhook endpoint's secret key"),
    apiKey: z
      .string({ error: 'is required: Recurly notifications name the payment, the API tells the rest' })
      .trim()
      .min(1, 'is required: Recurly notifications name the payment, the API tells the rest'),
    apiBase: z.url({ protocol: /^https?$/ }).optional(),
  })
  .strict();
export type RecurlyConfig = z.infer<typeof RecurlyConfig>;

/** The 5 minutes Recurly's own verifiers allow (Ruby client: `Recurly::Webhooks::DEFAULT_TOLERANCE`). */
const toleranceMs = 5 * 60 * 1000;

/**
 * Recurly's JSON signature (docs.recurly.com "Signature verification"; the official Ruby and Go clients):
 * `recurly-signature: <unix ms>,<sig>[,<sig>]`, each a hex HMAC-SHA256 of `<unix ms>.<raw body>` keyed with
 * the endpoint's secret. Two signatures appear for 24 h after the secret is regenerated; either suffices.
 * The Node client has no verifier, so this is the documented manual check.
 */
function signedByRecurly(header: string | undefined, body: Buffer, secret: string, now: Date): boolean {
  const [timestamp, ...signatures] = (header ?? '').split(',').map((part) => part.trim());
  if (!timestamp || !/^\d{1,15}$/.test(timestamp)) return false;
  if (Math.abs(now.getTime() - Number(timestamp)) > toleranceMs) return false;
  const expected = createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest();
  return signatures.some(
    (s) => /^[0-9a-f]{64}$/i.test(s) && timingSafeEqual(Buffer.from(s, 'hex'), expected),
  );
}

/** The JSON notification envelope: ids only (payment events name the transaction's `uuid`). */
const Notification = z.object({
  id: z.string().min(1),
  object_type: z.string().min(1),
  event_type: z.string().min(1),
  uuid: z.string().min(1).optional(),
  account_code: z.string().min(1).optional(),
});
type Notification = z.infer<typeof Notification>;

// The package's .d.ts declares an ES default export, but the file sets `module.exports` to the class itself,
// which is what a default import of CommonJS yields under Node.
const DefaultHttpAdapter = adapterModule as unknown as typeof adapterModule.default;

/** The official adapter, sending to `base` instead of Recurly's host (the client has no base-URL option). */
class RebasedAdapter extends DefaultHttpAdapter {
  constructor(private readonly base: string) {
    super({ timeout: 20_000 });
  }
  override execute(method: string, url: string, headers: Record<string, string>, body: string | null) {
    const { pathname, search } = new URL(url);
    return super.execute(method, `${this.base.replace(/\/$/, '')}${pathname}${search}`, headers, body);
  }
}

function clientOf(config: RecurlyConfig): Recurly.Client {
  return new Recurly.Client(config.apiKey, {
    httpAdapter: config.apiBase
      ? new RebasedAdapter(config.apiBase)
      : new DefaultHttpAdapter({ timeout: 20_000 }),
  });
}

/** The account's card on Recurly as the account's primary gateway charges it, or null. */
async function cardOf(client: Recurly.Client, accountCode: string, ctx: ConnectorContext) {
  const kind = ctx.gateways[0]?.kind ?? 'test';
  try {
    const info = await client.getBillingInfo(`code-${accountCode}`);
    // Recurly keeps an external gateway's ids as typed references and as gateway_token (one may be a
    // customer id, not a card): the card is the one the account's gateway can charge.
    const candidates = [
      ...(info.paymentGatewayReferences ?? []).map((r) => r.token),
      info.paymentMethod?.gatewayToken,
    ];
    return candidates.find((t): t is string => !!t && tokenFitsKind(kind, t)) ?? null;
  } catch (error) {
    if (error instanceof Recurly.errors.NotFoundError) return null;
    throw error;
  }
}

async function paymentFailed(
  client: Recurly.Client,
  n: Notification,
  ctx: ConnectorContext,
): Promise<ConnectorAction> {
  if (!n.uuid) return ignored('The notification names no transaction');
  const transaction = await client.getTransaction(`uuid-${n.uuid}`);
  const invoiceId = transaction.invoice?.id;
  const accountCode = transaction.account?.code;
  // A declined card check (`verify`) or a customer's own checkout leaves no invoice to recover.
  if (!invoiceId || !accountCode || transaction.type === 'verify')
    return ignored('The failed payment was for no invoice');
  const invoice = await client.getInvoice(invoiceId);
  // Processing is a bank payment under way; failed means dunning has ended (the subscription may be gone).
  if (!invoice.balance || !['pending', 'past_due'].includes(invoice.state ?? ''))
    return ignored(`The invoice is ${invoice.state ?? 'unknown'}, nothing is owed`);
  const token = await cardOf(client, accountCode, ctx);
  if (!token) return ignored("The account has no card the account's gateway can charge");
  const currency = invoice.currency ?? transaction.currency ?? '';
  const method = transaction.paymentMethod;
  const code = transaction.statusCode ? declineCodeOfRecurly(transaction.statusCode) : undefined;
  const email = transaction.account?.email;
  return {
    kind: 'failure',
    failure: {
      invoiceId,
      customerId: accountCode,
      paymentMethodToken: token,
      amount: minorUnitsOf(invoice.balance, currency) ?? 0,
      currency,
      ...(code ? { originalDeclineCode: code } : {}),
      ...(email ? { customerEmail: email } : {}),
      ...(method?.ccBinCountry ? { cardOrigin: method.ccBinCountry } : {}),
      ...(method?.firstSix ? { binPrefix: method.firstSix } : {}),
    },
  };
}

/**
 * A payment Recurly collected (the customer on Recurly's hosted pages, or Recurly's own retry): when it left
 * the invoice paid, the invoice's recovery stops. Recoup's own write-back marks the invoice successful with no
 * transaction to notify of (and a notice of a recovery that succeeded changes nothing at the intake). A
 * payment that left part of the invoice owed lowers the recovery to the invoice's balance; one of no
 * invoice, or a refund, changes nothing.
 */
async function paymentSucceeded(client: Recurly.Client, n: Notification): Promise<ConnectorAction> {
  if (!n.uuid) return ignored('The notification names no transaction');
  const transaction = await client.getTransaction(`uuid-${n.uuid}`);
  const invoiceId = transaction.invoice?.id;
  if (!invoiceId || !collectedByRecurly(transaction)) return ignored('The payment paid no invoice');
  // Read back rather than trusted: the notification may be late, and a partial payment leaves a balance.
  const invoice = await client.getInvoice(invoiceId);
  if (invoice.state === 'paid') return { kind: 'paid', invoiceId };
  const currency = invoice.currency ?? '';
  const amountDue = invoice.balance ? minorUnitsOf(invoice.balance, currency) : null;
  return amountDue && ['pending', 'past_due'].includes(invoice.state ?? '')
    ? { kind: 'partly_paid', invoiceId, amountDue, currency }
    : ignored(`The invoice is ${invoice.state ?? 'unknown'} at Recurly, not paid`);
}

async function billingInfoUpdated(
  client: Recurly.Client,
  n: Notification,
  ctx: ConnectorContext,
): Promise<ConnectorAction> {
  if (!n.account_code) return ignored('The notification names no account');
  const token = await cardOf(client, n.account_code, ctx);
  return token
    ? { kind: 'card_updated', customerId: n.account_code, newToken: token }
    : ignored("The new card is not one the account's gateway can charge");
}

function interpret(
  event: VerifiedEvent,
  config: RecurlyConfig,
  ctx: ConnectorContext,
): Promise<ConnectorAction> {
  const n = event.payload as Notification;
  switch (event.type) {
    case 'payment.failed':
      return paymentFailed(clientOf(config), n, ctx);
    case 'payment.succeeded':
      return paymentSucceeded(clientOf(config), n);
    case 'billing_info.updated':
      return billingInfoUpdated(clientOf(config), n, ctx);
    default:
      return Promise.resolve(ignored(`Recoup does not act on ${event.type}`));
  }
}

/**
 * The invoice as Recurly holds it just before Recoup charges it: owed while pending or past due with a
 * balance (that balance), else not owed. A failed read throws, so the charge waits for Recurly.
 */
async function invoiceStanding(config: RecurlyConfig, recovered: RecoveredInvoice): Promise<InvoiceStanding> {
  let invoice: Recurly.Invoice;
  try {
    invoice = await clientOf(config).getInvoice(recovered.id);
  } catch (error) {
    if (error instanceof Recurly.errors.NotFoundError)
      return { kind: 'not_owed', reason: 'Recurly no longer knows the invoice' };
    throw error;
  }
  const state = invoice.state ?? 'unknown';
  if (!invoice.balance || !['pending', 'past_due'].includes(state))
    return {
      kind: 'not_owed',
      reason: `The invoice is ${state} at Recurly, with nothing left to pay`,
      paid: state === 'paid',
    };
  return owedBalance(invoice.balance, invoice.currency ?? recovered.currency);
}

/**
 * Marks the invoice paid outside Recurly, which stops Recurly's dunning. `record_external_transaction` would
 * carry the amount but refuses auto-collecting invoices (the kind a failed renewal leaves); `mark_successful`
 * takes pending, processing, past_due and failed ones. A retry re-reads the invoice first, so it is
 * idempotent: one found paid by Recoup's own earlier mark, whose answer was lost, is `recorded`; one Recurly
 * collected is `already_paid`.
 */
async function writeBack(config: RecurlyConfig, payment: WriteBack): Promise<WriteBackOutcome> {
  const client = clientOf(config);
  const invoice = await client.getInvoice(payment.invoiceId);
  if (invoice.state === 'paid')
    return markedByRecoup(invoice, payment.recoveredAt) ? 'recorded' : 'already_paid';
  if (invoice.state === 'voided' || invoice.state === 'closed') return 'closed';
  await client.markInvoiceSuccessful(payment.invoiceId);
  return 'recorded';
}

/** Recurly: JSON notifications signed with `recurly-signature`, read through Recurly's official client. */
export const recurly: PlatformConnector<RecurlyConfig> = {
  config: RecurlyConfig,
  verify(request, config, now) {
    if (!signedByRecurly(request.headers['recurly-signature'], request.rawBody, config.webhookSecret, now))
      return Promise.resolve(null);
    // Signed but not a notification envelope (no id to deduplicate by): treated like a bad request.
    const parsed = Notification.safeParse(jsonOf(request.rawBody));
    if (!parsed.success) return Promise.resolve(null);
    const n = parsed.data;
    return Promise.resolve({ id: n.id, type: `${n.object_type}.${n.event_type}`, payload: n });
  },
  interpret,
  invoiceStanding,
  writeBack,
};
