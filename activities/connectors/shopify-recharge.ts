import { createHash, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { ConnectorAction } from '../../domain/connectors.js';
import { tokenFitsKind } from '../../domain/gateway-kinds.js';
import { minorUnitsOf } from '../../domain/money.js';
import {
  ignored,
  type ConnectorContext,
  type InvoiceStanding,
  type PlatformConnector,
  type RecoveredInvoice,
  type VerifiedEvent,
} from './types.js';
import { bodyDigestId, jsonOf } from './webhook-body.js';

/**
 * The Recharge connector's configuration: the API token's client secret (it signs the webhooks) and the
 * API token itself. The failed charge names no card token, so the connector cannot work without the API.
 * `apiBase` replaces https://api.rechargeapps.com (tests point it at a loopback emulator).
 */
export const RechargeConfig = z
  .object({
    webhookSecret: z.string().trim().min(1, "must be the API token's client secret"),
    apiToken: z
      .string({ error: 'is required: Recharge charges name no card token, the API tells it' })
      .trim()
      .min(1, 'is required: Recharge charges name no card token, the API tells it'),
    apiBase: z.url({ protocol: /^https?$/ }).optional(),
  })
  .strict();
export type RechargeConfig = z.infer<typeof RechargeConfig>;

/**
 * Recharge's webhook validation (docs.getrecharge.com/docs/webhooks-overview#validating-webhooks; the Node
 * sample Recharge support gave in saudslm/recharge-api-node#13): `X-Recharge-Hmac-Sha256` is the hex SHA-256
 * of the API client secret followed by the raw body, a plain hash despite the name. The timestamped
 * `X-Recharge-Webhook-Signature` Recharge added later is sent alongside it, and its changelog ("Webhook
 * signatures now support timestamp verification") says the old header stays supported and is not
 * deprecated. Recharge has no Node admin SDK with a verifier, so this is the documented manual check.
 */
function signedByRecharge(header: string | undefined, body: Buffer, secret: string): boolean {
  const given = header?.trim() ?? '';
  if (!/^[0-9a-f]{64}$/i.test(given)) return false;
  const expected = createHash('sha256').update(secret, 'utf8').update(body).digest();
  return timingSafeEqual(Buffer.from(given, 'hex'), expected);
}

const id = z.union([z.number().int(), z.string().min(1)]).transform(String);
const text = z.string().nullish();
/** The charge fields read, as the 2021-11 charge object names them (webhook bodies are API payloads). */
const Charge = z.object({
  id,
  status: text,
  updated_at: text,
  total_price: text,
  currency: text,
  error_type: text,
  customer: z.object({ id, email: text }).nullish(),
  billing_address: z.object({ country_code: text }).nullish(),
});
const ChargeBody = z.object({ charge: Charge });
const PaymentMethods = z.object({
  payment_methods: z.array(
    z.object({
      default: z.boolean().nullish(),
      processor_name: text,
      processor_customer_token: text,
      processor_payment_method_token: text,
    }),
  ),
});
type PaymentMethod = z.infer<typeof PaymentMethods>['payment_methods'][number];

/**
 * A charge's status in lower case: webhooks come in the API version the merchant's token defaults to, and
 * 2021-01 writes statuses in upper case (SUCCESS, ERROR) where 2021-11 writes them in lower case.
 */
const statusOf = (charge: { status?: string | null }) => charge.status?.trim().toLowerCase() ?? null;

/** The topic a charge body without its header is taken for: one in error failed, one in success was paid. */
const topicOf = (status: string | null) =>
  status === 'error' ? 'charge/failed' : status === 'success' ? 'charge/paid' : 'unknown';

/**
 * Recharge sends no event id. A charge event is identified by topic, charge and the charge's `updated_at`,
 * which a retry of the same delivery repeats even if the body were serialised anew; anything else by the
 * hash of its bytes.
 */
function eventOf(rawBody: Buffer, topicHeader: string | undefined): VerifiedEvent {
  const json = jsonOf(rawBody);
  const charge = ChargeBody.safeParse(json);
  // The topic header is what Recharge integrations dispatch on; without one, the charge's status tells.
  const topic = topicHeader?.trim() || (charge.success ? topicOf(statusOf(charge.data.charge)) : 'unknown');
  if (charge.success) {
    const c = charge.data.charge;
    return { id: `${topic}:charge-${c.id}:${c.updated_at ?? ''}`, type: topic, payload: c };
  }
  return { id: `${topic}:${bodyDigestId(rawBody)}`, type: topic, payload: json ?? null };
}

/** One GET on Recharge's 2021-11 API; null on 404, a thrown error otherwise (the platform retries). */
async function read<T>(config: RechargeConfig, path: string, schema: z.ZodType<T>): Promise<T | null> {
  const base = (config.apiBase ?? 'https://api.rechargeapps.com').replace(/\/$/, '');
  const res = await fetch(`${base}${path}`, {
    headers: {
      'X-Recharge-Access-Token': config.apiToken,
      'X-Recharge-Version': '2021-11',
      accept: 'application/json',
    },
    signal: AbortSignal.timeout(20_000),
  });
  const body = await res.text();
  if (res.status === 404) return null;
  if (!res.ok) throw new Error(`Recharge answered ${res.status} to GET ${path}: ${body.slice(0, 300)}`);
  return schema.parse(JSON.parse(body));
}

/** What Recoup charges: the processor's token; Braintree's with its customer, as Recoup's Braintree takes it. */
function tokenOf(method: PaymentMethod): string | null {
  const token = method.processor_payment_method_token?.trim();
  if (!token) return null;
  return method.processor_name === 'braintree' && method.processor_customer_token
    ? `${token}|${method.processor_customer_token}`
    : token;
}

/**
 * The customer's card as the account's primary gateway charges it, the default first. When none fits, the
 * default's token is still returned, so the intake answers 422 and Recharge's webhook log shows why.
 */
function chosenToken(methods: PaymentMethod[], ctx: ConnectorContext): string | null {
  const kind = ctx.gateways[0]?.kind ?? 'test';
  const tokens = [...methods]
    .sort((a, b) => Number(!!b.default) - Number(!!a.default))
    .map(tokenOf)
    .filter((t): t is string => t !== null);
  return tokens.find((t) => tokenFitsKind(kind, t)) ?? tokens[0] ?? null;
}

async function chargeFailed(
  payload: unknown,
  config: RechargeConfig,
  ctx: ConnectorContext,
): Promise<ConnectorAction> {
  const reported = Charge.safeParse(payload);
  if (!reported.success) return ignored('The charge/failed event lacks its charge');
  // Read again: Recharge's own retry may have collected the charge since the webhook left.
  const fresh = await read(config, `/charges/${encodeURIComponent(reported.data.id)}`, ChargeBody);
  if (!fresh) return ignored('Recharge no longer knows the charge');
  const c = fresh.charge;
  if (statusOf(c) !== 'error') return ignored(`The charge is ${c.status ?? 'unknown'}, nothing is owed`);
  const customerId = c.customer?.id;
  if (!customerId) return ignored('The charge names no customer');
  const methods = await read(
    config,
    `/payment_methods?customer_id=${encodeURIComponent(customerId)}&limit=250`,
    PaymentMethods,
  );
  const token = chosenToken(methods?.payment_methods ?? [], ctx);
  if (!token) return ignored('The customer has no processor payment method to retry');
  const currency = c.currency ?? '';
  const amount = c.total_price ? minorUnitsOf(c.total_price, currency) : null;
  if (amount === null || !currency) return ignored('The charge names no amount');
  // error_type is Recharge's own category of the failure (error is the processor's sentence): passed on as
  // the decline code; codes Recoup does not know are classified `unknown` and retried conservatively.
  const code = c.error_type?.trim().toLowerCase();
  const country = c.billing_address?.country_code;
  return {
    kind: 'failure',
    failure: {
      invoiceId: c.id,
      customerId,
      paymentMethodToken: token,
      amount,
      currency,
      ...(code ? { originalDeclineCode: code } : {}),
      ...(c.customer?.email ? { customerEmail: c.customer.email } : {}),
      ...(country ? { cardOrigin: country } : {}),
    },
  };
}

/**
 * Recharge collected the charge (its own retry, the customer in the portal): the recovery keyed by the charge
 * id (as chargeFailed keys it) stops. Recoup's own recoveries never reach Recharge (nothing is written back),
 * and a charge/paid for a recovery that succeeded (the merchant settling the charge by hand) is left as it is
 * by the intake.
 */
function chargePaid(payload: unknown): ConnectorAction {
  const paid = Charge.safeParse(payload);
  if (!paid.success) return ignored('The charge/paid event lacks its charge');
  const status = statusOf(paid.data);
  if (status !== 'success') return ignored(`The charge is ${status ?? 'unknown'}, not paid`);
  return { kind: 'paid', invoiceId: paid.data.id };
}

/**
 * The charge as Recharge holds it just before Recoup charges it: owed while in error (failed, and not
 * collected since) with its total, else not owed (paid, skipped, refunded, or queued for Recharge to charge
 * itself). A failed read throws, so the charge waits for Recharge.
 */
async function invoiceStanding(
  config: RechargeConfig,
  recovered: RecoveredInvoice,
): Promise<InvoiceStanding> {
  const found = await read(config, `/charges/${encodeURIComponent(recovered.id)}`, ChargeBody);
  if (!found) return { kind: 'not_owed', reason: 'Recharge no longer knows the charge' };
  const c = found.charge;
  const status = statusOf(c) ?? 'unknown';
  if (status !== 'error')
    return { kind: 'not_owed', reason: `The charge is ${status} at Recharge`, paid: status === 'success' };
  const currency = c.currency ?? recovered.currency;
  const amountDue = c.total_price ? minorUnitsOf(c.total_price, currency) : null;
  if (amountDue === null) return { kind: 'not_owed', reason: 'The charge names no amount Recoup can charge' };
  return { kind: 'owed', amountDue, currency };
}

/**
 * Shopify Recharge: webhooks signed with `X-Recharge-Hmac-Sha256`, the card read through Recharge's REST API.
 * No write-back: Recharge's API has no call that records a payment made elsewhere on a charge
 * (`POST /charges/{id}/process` would charge the customer a second time), so the merchant sees
 * `writeBack: not_configured` and settles the charge in Recharge by hand.
 */
export const shopifyRecharge: PlatformConnector<RechargeConfig> = {
  config: RechargeConfig,
  verify(request, config) {
    if (!signedByRecharge(request.headers['x-recharge-hmac-sha256'], request.rawBody, config.webhookSecret))
      return Promise.resolve(null);
    return Promise.resolve(eventOf(request.rawBody, request.headers['x-recharge-topic']));
  },
  interpret(event, config, ctx) {
    switch (event.type) {
      case 'charge/failed':
        return chargeFailed(event.payload, config, ctx);
      case 'charge/paid':
        return Promise.resolve(chargePaid(event.payload));
      default:
        return Promise.resolve(ignored(`Recoup does not act on ${event.type}`));
    }
  },
  invoiceStanding,
};
