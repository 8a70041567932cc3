import gocardless, {
  Environments,
  GoCardlessInternalError,
  InvalidApiUsageError,
  InvalidStateError,
  MalformedResponseError,
  ValidationFailedError,
  type GoCardlessClient,
  type Payment,
} from 'gocardless-nodejs';
import { z } from 'zod';
import { normalizeDeclineCode } from '../../domain/declines.js';
import { headerKeyWithin } from './gateway-keys.js';
import { isUnanswered } from './network-error.js';
import { RebasedAgent } from './rebased-agent.js';
import {
  declined,
  refusedRequest,
  refusedToken,
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

/** GoCardless takes idempotency keys of up to 128 characters. */
const idempotencyKeyMax = 128;
/**
 * How long after an attempt was first sent its key is taken to be still GoCardless's. GoCardless does not
 * say how long it keeps keys; Stripe's day is assumed, less an hour for clocks that differ. Past it, a
 * charge looks for the attempt's payment among the mandate's before it sends anything.
 */
const keyKeptMs = 23 * 60 * 60 * 1000;

/** A mandate that is cancelled, expired or failed cannot be debited any more (nothing is created). */
const mandateEnded = declined('revocation_of_authorization', null, null);

/** The reasons GoCardless gives for a refused request (`mandate_is_inactive` …). */
const reasonsOf = (error: InvalidStateError) => new Set(error.errors.map((e) => e.reason));

/** A lost answer: GoCardless failed itself, answered what cannot be read, or the connection broke. */
const isAmbiguous = (error: unknown) =>
  error instanceof GoCardlessInternalError || error instanceof MalformedResponseError || isUnanswered(error);

/**
 * GoCardless through its official SDK (`gocardless-nodejs`): each attempt is one payment against the
 * mandate, created with the attempt's idempotency key (a retried attempt gets the same payment back: the
 * SDK follows GoCardless's idempotent-creation conflict to it; one sent again a day after its first try,
 * `clock` against its first send, finds it among the mandate's first). A debit is not answered at once:
 * GoCardless submits it to the scheme and the payer's bank confirms or fails it over a few working days, so
 * a created payment is ambiguous and the lookup (the attempt's payment among the mandate's, else the same
 * request again, unless a stop was asked: `readOnly`) follows it, failing (and being tried again later, up to hourly) until the bank has
 * answered. A refusal of the request that comes the same every time is a decline. A failed payment's cause
 * (from its `failed` event) becomes the decline code. No card data, no wallets, no account updater: a new
 * mandate is the merchant's to set up.
 */
export function createGoCardlessGateway(
  credentials: GoCardlessCredentials,
  clock: () => Date = () => new Date(),
): GatewayAdapter {
  const client = goCardlessClient(credentials);

  /** Whether GoCardless knows the mandate (one deleted, or of the other environment, it does not). */
  async function knowsMandate(mandate: string): Promise<boolean> {
    try {
      await client.mandates.find(mandate);
      return true;
    } catch (error) {
      if (error instanceof InvalidApiUsageError && Number(error.code) === 404) return false;
      throw error;
    }
  }

  /**
   * What GoCardless's refusal to create the payment means, when it is refused the same way every time and
   * nothing is created: a mandate that ended, or was replaced by another, cannot be debited any more; a
   * currency other than its scheme's (EUR on a Bacs mandate) or an amount outside its limits never will be;
   * any other refusal of the request (`validation_failed`, `invalid_api_usage`, `invalid_state`) is declined
   * `request_refused`, or the mandate is not chargeable when GoCardless does not know it. Null for the rest
   * (a wrong token 401, permissions 403, a rate limit 429, GoCardless's own failure), which is thrown.
   */
  async function refusalOf(error: unknown, mandate: string): Promise<ChargeAnswer | null> {
    if (error instanceof InvalidStateError) {
      const reasons = reasonsOf(error);
      if (reasons.has('mandate_is_inactive')) return mandateEnded;
      return reasons.has('mandate_replaced') ? refusedToken() : refusedRequest();
    }
    if (error instanceof ValidationFailedError) {
      if (error.errors.some((e) => e.field === 'currency'))
        return declined('currency_not_supported', null, null);
      if (error.errors.some((e) => e.field === 'amount')) return unchargeableAmount();
    }
    if (!(error instanceof ValidationFailedError || error instanceof InvalidApiUsageError)) return null;
    return (await knowsMandate(mandate)) ? refusedRequest() : refusedToken();
  }

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
      headerKeyWithin(req.idempotencyKey, idempotencyKeyMax),
    );
  }

  /** The attempt's payment among the mandate's (by the attempt's key in its metadata), or null. */
  async function madeEarlier(req: { token: string; idempotencyKey: string }): Promise<Payment | null> {
    const { payments } = await client.payments.list({ mandate: req.token, limit: 500 });
    const key = attemptOf(req.idempotencyKey);
    return payments.find((p) => p.metadata?.recoup_attempt === key) ?? null;
  }

  async function charge(req: ChargeRequest): Promise<ChargeOutcome> {
    let payment: Payment | null = null;
    // Sent again a day after its first try: GoCardless may have dropped the key, and the same request would
    // be a second debit. The first try's payment is looked for first.
    const { firstSentAt } = req;
    if (firstSentAt !== undefined && clock().getTime() - firstSentAt >= keyKeptMs)
      payment = await madeEarlier(req);
    try {
      payment ??= await paymentOf(req);
    } catch (error) {
      if (isAmbiguous(error)) return { kind: 'ambiguous', reason: `GoCardless: ${(error as Error).message}` };
      const refused = await refusalOf(error, req.token);
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

  async function lookup(req: LookupRequest): Promise<LookupOutcome> {
    // The attempt's payment among the mandate's first: a lookup follows a debit for days, longer than
    // GoCardless may keep the key, and a mandate that ended refuses the request before its key would find
    // the payment an earlier try made (which still goes on to the bank). Then the same request with the same
    // key, which makes the attempt's one payment if none reached GoCardless — not once a stop was asked
    // (`readOnly`): none among the mandate's means none was made, and none is made now. Other errors throw,
    // and the lookup is tried again later.
    let payment = await madeEarlier(req);
    if (!payment && req.readOnly) return { kind: 'not_found' };
    try {
      payment ??= await paymentOf(req);
    } catch (error) {
      const refused = await refusalOf(error, req.token);
      if (!refused) throw error;
      return refused;
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
