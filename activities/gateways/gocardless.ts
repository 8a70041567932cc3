import gocardless, {
  Environments,
  GoCardlessInternalError,
  InvalidStateError,
  MalformedResponseError,
  ValidationFailedError,
  type GoCardlessClient,
  type Payment,
} from 'gocardless-nodejs';
import { z } from 'zod';
import { normalizeDeclineCode } from '../../domain/declines.js';
import { keyWithin } from './gateway-keys.js';
import { isNetworkError } from './network-error.js';
import { RebasedAgent } from './rebased-agent.js';
import {
  declined,
  unchargeableAmount,
  type ChargeAnswer,
  type ChargeOutcome,
  type ChargeRequest,
  type GatewayAdapter,
  type LookupOutcome,
  type LookupRequest,
} from './types.js';

/**
 * A GoCardless gateway's credentials: an access token, the environment and, optionally, another HTTPS
 * base URL (a proxy, or an emulator in tests). The mandate is the token.
 */
export const GoCardlessCredentials = z
  .object({
    accessToken: z.string().min(1),
    environment: z.enum(['sandbox', 'live']),
    apiBase: z.url({ protocol: /^https$/ }).optional(),
  })
  .strict();
export type GoCardlessCredentials = z.infer<typeof GoCardlessCredentials>;

/** GoCardless's official client for these credentials. */
function goCardlessClient(credentials: GoCardlessCredentials): GoCardlessClient {
  const environment = credentials.environment === 'live' ? Environments.Live : Environments.Sandbox;
  const agent = credentials.apiBase ? new RebasedAgent(new URL(credentials.apiBase)) : undefined;
  return gocardless(credentials.accessToken, environment, agent ? { proxy: { https: agent } } : {});
}

/** Currencies of GoCardless's debit schemes (Bacs, SEPA, ACH, Autogiro, Betalingsservice, BECS, BECS NZ, PAD). */
const schemeCurrencies = ['AUD', 'CAD', 'DKK', 'EUR', 'GBP', 'NZD', 'SEK', 'USD'] as const;
type SchemeCurrency = (typeof schemeCurrencies)[number];
const isSchemeCurrency = (c: string): c is SchemeCurrency =>
  (schemeCurrencies as readonly string[]).includes(c);

/** Statuses of a debit the bank has not answered yet (GoCardless collects over a few working days). */
const collecting: ReadonlySet<string> = new Set([
  'pending_customer_approval',
  'pending_submission',
  'submitted',
]);
/** Statuses of a collected debit. */
const collected: ReadonlySet<string> = new Set(['confirmed', 'paid_out']);

/** The attempt's key as its payment's metadata holds it (GoCardless takes values of up to 500 characters). */
const attemptOf = (idempotencyKey: string) => idempotencyKey.slice(0, 500);

/** A mandate that is cancelled, expired or failed cannot be debited any more (nothing is created). */
const inactiveMandate = (error: unknown) =>
  error instanceof InvalidStateError && error.errors.some((e) => e.reason === 'mandate_is_inactive');
const mandateEnded = declined('revocation_of_authorization', null, null);

/**
 * A payment the mandate can never take as asked: GoCardless validates it before creating anything (422
 * `validation_failed`), e.g. a currency other than the mandate's scheme's (EUR on a Bacs mandate) or an
 * amount outside the scheme's limits. The same request fails every time, so it is a decline the engine
 * does not retry (another gateway or payment method may still take it), not an error retried for ever.
 */
function refusedPayment(error: unknown): ChargeAnswer | null {
  if (!(error instanceof ValidationFailedError)) return null;
  if (error.errors.some((e) => e.field === 'currency')) return declined('currency_not_supported', null, null);
  if (error.errors.some((e) => e.field === 'amount')) return unchargeableAmount();
  return null;
}

const isAmbiguous = (error: unknown) =>
  error instanceof GoCardlessInternalError ||
  error instanceof MalformedResponseError ||
  // A network error of the HTTP client, not an API error of GoCardless's (those carry an error type).
  (isNetworkError(error) && !('errorType' in error));

/**
 * GoCardless through its official SDK (`gocardless-nodejs`): each attempt is one payment against the
 * mandate, created with the attempt's idempotency key (a retried attempt gets the same payment back: the
 * SDK follows GoCardless's idempotent-creation conflict to it). A debit is not answered at once: GoCardless
 * submits it to the scheme and the payer's bank confirms or fails it over a few working days, so a created
 * payment is ambiguous and the lookup (the same request again) follows it, failing (and being tried again
 * later, up to hourly) until the bank has answered. A failed payment's cause (from its `failed` event)
 * becomes the decline code. No card data, no wallets, no account updater: a new mandate is the merchant's
 * to set up.
 */
export function createGoCardlessGateway(credentials: GoCardlessCredentials): GatewayAdapter {
  const client = goCardlessClient(credentials);

  /** The cause GoCardless gives for a payment that did not go through, as Recoup's decline name. */
  async function causeOf(payment: Payment): Promise<string> {
    if (payment.status === 'customer_approval_denied') return 'revocation_of_authorization';
    const { events } = await client.events.list({ payment: payment.id ?? '', limit: 20 });
    const event = events.find((e) => e.action === payment.status);
    return normalizeDeclineCode(event?.details?.cause) || 'generic_decline';
  }

  /** The payment's outcome; null while the bank has not answered. */
  async function outcomeOf(payment: Payment): Promise<ChargeAnswer | null> {
    const status = payment.status ?? '';
    const id = payment.id ?? null;
    if (collected.has(status) && id) return { kind: 'approved', gatewayTransactionId: id };
    if (collecting.has(status)) return null;
    return declined(await causeOf(payment), null, id);
  }

  /** Creates the attempt's payment, or (same key) gets the one an earlier try created. */
  function paymentOf(req: { token: string; amount: number; currency: string; idempotencyKey: string }) {
    const currency = req.currency.toUpperCase();
    // Routing only sends a payment to a gateway that takes its currency.
    if (!isSchemeCurrency(currency)) throw new Error(`GoCardless does not collect ${currency}`);
    return client.payments.create(
      {
        amount: req.amount,
        currency,
        links: { mandate: req.token },
        metadata: { recoup_attempt: attemptOf(req.idempotencyKey) },
      },
      // GoCardless takes idempotency keys of up to 128 characters.
      keyWithin(req.idempotencyKey, 128),
    );
  }

  async function charge(req: ChargeRequest): Promise<ChargeOutcome> {
    let payment: Payment;
    try {
      payment = await paymentOf(req);
    } catch (error) {
      if (inactiveMandate(error)) return mandateEnded;
      if (isAmbiguous(error)) return { kind: 'ambiguous', reason: `GoCardless: ${(error as Error).message}` };
      const refused = refusedPayment(error);
      if (refused) return refused;
      throw error;
    }
    return (
      (await outcomeOf(payment)) ?? {
        kind: 'ambiguous',
        reason: `GoCardless is collecting the debit ${payment.id ?? ''} (${payment.status ?? ''}); the payer's bank answers within a few working days`,
      }
    );
  }

  /**
   * The attempt's payment among the mandate's (by the attempt's key in its metadata), or null: a mandate
   * that ended may refuse the request before its idempotency key would find the payment an earlier try made.
   */
  async function madeEarlier(req: LookupRequest): Promise<Payment | null> {
    const { payments } = await client.payments.list({ mandate: req.token, limit: 500 });
    const key = attemptOf(req.idempotencyKey);
    return payments.find((p) => p.metadata?.recoup_attempt === key) ?? null;
  }

  async function lookup(req: LookupRequest): Promise<LookupOutcome> {
    // The same request with the same key: the payment an earlier try created (or, if none reached
    // GoCardless, the attempt's one payment now). Other errors throw, and the lookup is tried again later.
    let payment: Payment;
    try {
      payment = await paymentOf(req);
    } catch (error) {
      const refused = inactiveMandate(error) ? mandateEnded : refusedPayment(error);
      if (!refused) throw error;
      // Refused now, but an earlier try's payment may have been made (and go on to the bank).
      const earlier = await madeEarlier(req);
      if (!earlier) return refused;
      payment = earlier;
    }
    const outcome = await outcomeOf(payment);
    if (!outcome)
      throw new Error(`GoCardless is still collecting ${payment.id ?? ''} (${payment.status ?? ''})`);
    return outcome;
  }

  return {
    capabilities: { wallets: [], currencies: schemeCurrencies },
    charge,
    lookup,
  };
}
