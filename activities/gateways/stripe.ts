import Stripe from 'stripe';
import { z } from 'zod';
import { firmestDecline, normalizeDeclineCode } from '../../domain/declines.js';
import { toGatewayUnits } from '../../domain/money.js';
import { headerKeyWithin } from './gateway-keys.js';
import { isUnanswered } from './network-error.js';
import {
  declined,
  unchargeableAmount,
  refusedRequest,
  refusedToken,
  type CardOnFile,
  type CardPage,
  type ChargeAnswer,
  type ChargeOutcome,
  type ChargeRequest,
  type GatewayAdapter,
  type HostedCardForm,
  type LookupOutcome,
  type LookupRequest,
} from './types.js';

/**
 * A Stripe gateway's credentials: a secret or restricted key (it needs write access to PaymentIntents and
 * read access to PaymentMethods) and, optionally, another API base URL (a proxy, or the local
 * Stripe emulator in tests).
 */
export const StripeCredentials = z
  .object({
    secretKey: z
      .string()
      .regex(
        /^(sk|rk)_(test|live)_[A-Za-z0-9]+$/,
        'must be a Stripe secret key (sk_live_…) or restricted key',
      ),
    apiBase: z.url({ protocol: /^https?$/ }).optional(),
  })
  .strict();
export type StripeCredentials = z.infer<typeof StripeCredentials>;

/** Metadata key that names the Recoup attempt on its PaymentIntent: what a lookup finds the charge by. */
export const attemptKeyField = 'recoup_attempt_key';
/** Metadata key that names the card-update link a Checkout session was opened for. */
const linkField = 'recoup_link';
/** How far before the lost request a lookup looks: clocks differ, and Stripe stamps the PaymentIntent. */
const lookBackSeconds = 15 * 60;
/**
 * How long after a lost request a lookup that only reads believes a list without its PaymentIntent: Stripe
 * may still be processing the request (an issuer slow to answer) after the SDK gave up on both its tries.
 */
const processingSettleMs = 5 * 60_000;
/** Stripe takes idempotency keys of up to 255 characters. */
const idempotencyKeyMax = 255;
/**
 * How long after an attempt was first sent its key is surely still Stripe's: Stripe may remove a key once it
 * is 24 hours old, after which the same request is a new payment. An hour is left for clocks that differ.
 */
const keyKeptMs = 23 * 60 * 60 * 1000;

/** Stripe's official client for these credentials (the gateway and the Stripe Billing connector share it). */
export function stripeClient(credentials: StripeCredentials): Stripe {
  const base = credentials.apiBase ? new URL(credentials.apiBase) : null;
  return new Stripe(credentials.secretKey, {
    // A lost connection, a timeout or a 5xx is retried once by the SDK with the same idempotency key, so
    // it never charges twice. Each try may take the whole timeout: a charge (a PaymentMethod read, then the
    // PaymentIntent) can outlast the charge activity's 45 s, which is then retried with the same key too.
    maxNetworkRetries: 1,
    timeout: 20_000,
    appInfo: { name: 'Recoup' },
    ...(base
      ? {
          host: base.hostname,
          port: base.port || (base.protocol === 'https:' ? 443 : 80),
          protocol: base.protocol === 'https:' ? 'https' : 'http',
        }
      : {}),
  });
}

/**
 * Stripe's advice codes (`advice_code`, which carries the guidance its deprecated decline codes used to) that
 * say more than a decline code may: `do_not_try_again` (the issuer will not approve the card: never retried,
 * as Visa's category 1 asks) and `confirm_card_data` (not without new card details). `try_again_later` says
 * no more than a retryable decline does.
 */
const adviceDeclines: ReadonlyMap<string, string> = new Map([
  ['do_not_try_again', 'do_not_try_again'],
  ['confirm_card_data', 'new_account_information_available'],
]);

/** What a card error (a create's, or a PaymentIntent's `last_payment_error`) says about the card. */
interface CardDecline {
  code?: string | undefined;
  decline_code?: string | undefined;
  advice_code?: string | undefined;
  network_advice_code?: string | undefined;
  network_decline_code?: string | undefined;
}

/**
 * A card error as a decline: Stripe's decline code (or its error code), unless its advice code or the
 * network's own decline code (ISO 8583, as Visa and Mastercard answer) keeps the card from being charged
 * again more firmly (`firmestDecline`): Stripe answers many declines Visa forbids retrying as
 * `generic_decline` with `advice_code: do_not_try_again`. The advice is Mastercard's merchant advice code.
 */
function declineOf(error: CardDecline | null | undefined, id: string | null): ChargeAnswer {
  const code = firmestDecline(
    error?.decline_code ?? error?.code ?? 'card_declined',
    adviceDeclines.get(error?.advice_code ?? ''),
    normalizeDeclineCode(error?.network_decline_code),
  );
  return declined(code, error?.network_advice_code ?? null, id);
}

/** Our outcome of a PaymentIntent Stripe holds; `null` while it is still processing (no answer yet). */
function outcomeOf(intent: Stripe.PaymentIntent): ChargeAnswer | null {
  if (intent.status === 'succeeded') return { kind: 'approved', gatewayTransactionId: intent.id };
  if (intent.status === 'processing') return null;
  const error = intent.last_payment_error;
  if (intent.status === 'requires_action' || error?.code === 'authentication_required')
    return declined('authentication_required', null, intent.id);
  return declineOf(error, intent.id);
}

/** The PaymentMethod's customer (off-session charges of a saved card need it), or null when it has gone. */
async function customerOf(stripe: Stripe, token: string): Promise<{ customer: string | null } | null> {
  try {
    const method = await stripe.paymentMethods.retrieve(token);
    const customer = method.customer;
    return { customer: typeof customer === 'string' ? customer : (customer?.id ?? null) };
  } catch (error) {
    if (error instanceof Stripe.errors.StripeInvalidRequestError && error.code === 'resource_missing') {
      if (otherMode(error)) throw wrongModeKey(error);
      return null;
    }
    throw error;
  }
}

/**
 * Stripe's "No such PaymentMethod …; a similar object exists in live mode, but a test mode key was used":
 * the card exists, and the gateway's key is of the other mode. A configuration error, not a dead card.
 */
const otherMode = (error: Stripe.errors.StripeError) =>
  /similar object exists in (live|test) mode/i.test(error.message);

const wrongModeKey = (error: Stripe.errors.StripeError) =>
  new Error(`Stripe: the gateway's secret key is of the other mode than the card (${error.message})`, {
    cause: error,
  });

/** Stripe's refusals of a PaymentIntent's amount that no retry of the same charge can change. */
const amountRefusals: ReadonlySet<string> = new Set(['amount_too_small', 'amount_too_large']);

/** Parameters naming the payment method, or the customer it belongs to: refused, it cannot be charged. */
const methodParams: ReadonlySet<string> = new Set(['payment_method', 'customer']);

/**
 * Stripe's codes of a 400 that is the account's or the key's setup, not the payment's: the operator's to fix
 * (or, for the account's payment volume limits, lifted in time or by Stripe).
 */
const setupCodes: ReadonlySet<string> = new Set([
  'account_invalid',
  'api_key_expired',
  'charge_exceeds_source_limit',
  'charge_exceeds_transaction_limit',
  'charge_exceeds_weekly_limit',
  'livemode_mismatch',
  'platform_api_key_expired',
  'secret_key_required',
  'testmode_charges_only',
  'tls_version_unsupported',
]);

/**
 * Stripe's replay of the failure it kept under an idempotency key (`Idempotent-Replayed`): a 5xx the first
 * request ended with.
 */
const replayedFailure = (error: unknown) =>
  error instanceof Stripe.errors.StripeError &&
  (error.statusCode ?? 0) >= 500 &&
  error.headers?.['idempotent-replayed'] === 'true';

/** A lost answer: Stripe failed itself, or the connection broke once the request may have reached it. */
const unanswered = (error: Stripe.errors.StripeError) =>
  isUnanswered(error instanceof Stripe.errors.StripeConnectionError ? error.detail : error, error.statusCode);

/**
 * What a failed PaymentIntent creation means: a card error is a decline; a PaymentMethod Stripe will not
 * charge off-session any more (used once without a customer, of a type that cannot recur, its customer
 * gone) can never be charged again; an amount below Stripe's minimum or above its maximum is declined
 * `invalid_amount`; a lost answer or a 5xx is ambiguous; any other 400 (a currency the account does not
 * charge, a parameter Stripe rejects) is refused the same way every time, so it is declined
 * `request_refused`. The rest (rate limit, a conflict, wrong key or a key of the other mode, missing
 * permission, the account's setup, a connection never made) is thrown: nothing was charged, and the
 * activity tries again while the operator looks.
 */
function refusal(error: unknown): ChargeOutcome {
  if (!(error instanceof Stripe.errors.StripeError)) throw error;
  if (error instanceof Stripe.errors.StripeCardError) {
    const answer = error.payment_intent && outcomeOf(error.payment_intent);
    return answer ?? declineOf(error, null);
  }
  if (unanswered(error)) return { kind: 'ambiguous', reason: `Stripe: ${error.message}` };
  if (!(error instanceof Stripe.errors.StripeInvalidRequestError)) throw error;
  if (otherMode(error)) throw wrongModeKey(error);
  if (methodParams.has(error.param ?? '')) return refusedToken();
  // Below Stripe's minimum charge or above its maximum: the card is not tried again for it, another way may be.
  if (amountRefusals.has(error.code ?? '') || error.param === 'amount') return unchargeableAmount();
  if (error.statusCode === 400 && !setupCodes.has(error.code ?? '')) return refusedRequest();
  throw error;
}

/**
 * Stripe closes a Checkout session 30 minutes to 24 hours after it is created (a minute's margin each side):
 * one opened in a link's last half hour outlives the link by up to `min`, and the page takes its return
 * that long after the link expired.
 */
export const checkoutLifeMs = { min: 31 * 60_000, max: 24 * 3_600_000 - 60_000 };

/** When a Checkout session opened at `nowMs` closes: with the link, as far as Stripe allows (Unix seconds). */
export function checkoutExpiry(nowMs: number, openForMs: number): number {
  const lifeMs = Math.min(checkoutLifeMs.max, Math.max(checkoutLifeMs.min, openForMs));
  return Math.floor((nowMs + lifeMs) / 1000);
}

/**
 * Stripe through its official SDK: each attempt is one off-session PaymentIntent confirmed at once, created
 * with the attempt's idempotency key and named in its metadata. Card errors become declines with Stripe's
 * decline code (or a firmer one its advice code or the network's decline code gives) and network advice
 * code; a lost answer (connection error, timeout, 5xx) is ambiguous and is looked up in Stripe's
 * PaymentIntent list, which reads its own writes (its search does not), and when none is listed, by the
 * same request sent again under the key while Stripe keeps it (the lost request may still be under way:
 * Stripe's idempotency, not the list, says it made nothing). A charge sent
 * again once Stripe may have dropped its key (`clock` against the attempt's first send) looks the attempt up
 * first. Rate limits and errors of configuration (keys, permissions) throw, so the activity retries and the
 * Temporal UI shows why. Stripe updates saved cards in place (its card account updater), so there is
 * no token to refresh; a new card is collected by Stripe Checkout, never by Recoup. Amounts go in Stripe's
 * units (`toGatewayUnits`), which differ from ISO 4217 for ISK, UGX and MGA.
 */
export function createStripeGateway(
  credentials: StripeCredentials,
  clock: () => Date = () => new Date(),
): GatewayAdapter {
  const stripe = stripeClient(credentials);

  /**
   * The attempt's PaymentIntent among the customer's created since shortly before the attempt was first
   * sent, found by the attempt's key in its metadata: its answer, 'processing' while Stripe has none yet, or
   * null when there is none.
   */
  async function attemptOf(
    req: Pick<LookupRequest, 'idempotencyKey' | 'sentAt' | 'firstSentAt'>,
    customer: string | null,
  ): Promise<ChargeAnswer | 'processing' | null> {
    const since = Math.floor((req.firstSentAt ?? req.sentAt) / 1000) - lookBackSeconds;
    const intents = stripe.paymentIntents.list({
      limit: 100,
      created: { gte: since },
      ...(customer ? { customer } : {}),
    });
    for await (const intent of intents) {
      if (intent.metadata[attemptKeyField] === req.idempotencyKey) return outcomeOf(intent) ?? 'processing';
    }
    return null;
  }

  /**
   * The attempt's PaymentIntent, created and confirmed under the attempt's key: the same request each time it
   * is sent (Stripe refuses a key sent again with other parameters), so Stripe answers every resend with the
   * first request's result. `amount` is in Stripe's units.
   */
  function create(req: LookupRequest | ChargeRequest, amount: number, customer: string | null) {
    return stripe.paymentIntents.create(
      {
        amount,
        currency: req.currency.toLowerCase(),
        payment_method: req.token,
        ...(customer ? { customer } : {}),
        confirm: true,
        off_session: true,
        // Off-session, nobody can follow a redirect: methods that need one are not offered (and Stripe then
        // needs no return_url).
        automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
        metadata: { [attemptKeyField]: req.idempotencyKey },
      },
      // The metadata names the attempt by its key as it is; the header takes it as a header can carry it.
      { idempotencyKey: headerKeyWithin(req.idempotencyKey, idempotencyKeyMax) },
    );
  }

  async function charge(req: ChargeRequest): Promise<ChargeOutcome> {
    // Stripe's units are not always ISO's (ISK in hundredths, MGA in whole ariary); an amount Stripe cannot
    // charge exactly is declined here, nothing sent, so the engine tries another way instead of a rounded sum.
    const amount = toGatewayUnits(req.amount, req.currency, 'stripe');
    if (amount === null) return unchargeableAmount();
    // Nothing is charged yet: a failure to read the card throws, and the activity tries again.
    const owner = await customerOf(stripe, req.token);
    // A PaymentMethod that no longer exists (detached, deleted) can never be charged again.
    if (!owner) return refusedToken();
    // Sent again a day after its first try (its answer lost to a store that was down meanwhile): Stripe may
    // have dropped the key, and the same request would be a second payment. The first try's is found instead.
    const { firstSentAt } = req;
    if (firstSentAt !== undefined && clock().getTime() - firstSentAt >= keyKeptMs) {
      const earlier = await attemptOf({ ...req, sentAt: firstSentAt }, owner.customer);
      if (earlier === 'processing')
        return { kind: 'ambiguous', reason: 'Stripe is still processing the payment' };
      if (earlier) return earlier;
    }
    try {
      const intent = await create(req, amount, owner.customer);
      return outcomeOf(intent) ?? { kind: 'ambiguous', reason: 'Stripe is still processing the payment' };
    } catch (error) {
      return refusal(error);
    }
  }

  /**
   * The lost request sent again under its key, while Stripe surely keeps it: the first request's result,
   * which Stripe replays (or, when the first never reached Stripe, the attempt's one payment, made now); null
   * for a failure Stripe replays (a 500 it kept under the key: the first request ended, and made no
   * PaymentIntent the list shows). Throws while there is no answer yet: the first request still under way
   * (Stripe answers 409 to its key meanwhile), or no answer to this one.
   */
  async function sendAgain(req: LookupRequest, customer: string | null): Promise<LookupOutcome | null> {
    const amount = toGatewayUnits(req.amount, req.currency, 'stripe');
    if (amount === null) return unchargeableAmount();
    let outcome: ChargeOutcome;
    try {
      outcome = outcomeOf(await create(req, amount, customer)) ?? {
        kind: 'ambiguous',
        reason: 'Stripe is still processing the payment',
      };
    } catch (error) {
      if (replayedFailure(error)) return null;
      outcome = refusal(error);
    }
    if (outcome.kind === 'ambiguous')
      throw new Error(`Stripe has no answer for ${req.idempotencyKey} yet: ${outcome.reason}`);
    return outcome;
  }

  async function lookup(req: LookupRequest): Promise<LookupOutcome> {
    const owner = await customerOf(stripe, req.token);
    const found = await attemptOf(req, owner?.customer ?? null);
    // Still processing: no answer yet, so the lookup fails and is retried later.
    if (found === 'processing')
      throw new Error(`Stripe's PaymentIntent of ${req.idempotencyKey} is still processing`);
    if (found) return found;
    // None listed: but the lost request may still be under way at Stripe, its PaymentIntent not made yet, so
    // "not charged" is Stripe's to say. While it keeps the key, the same request under it answers.
    const now = clock().getTime();
    if (owner && !req.readOnly && now - (req.firstSentAt ?? req.sentAt) < keyKeptMs)
      return (await sendAgain(req, owner.customer)) ?? { kind: 'not_found' };
    // Only a read (a stop was asked, the key may be gone, the card is): none listed is believed once the lost
    // request cannot still be under way.
    if (now - req.sentAt < processingSettleMs)
      throw new Error(
        `Stripe lists no PaymentIntent of ${req.idempotencyKey} yet; looking again before concluding`,
      );
    return { kind: 'not_found' };
  }

  /**
   * Stripe Checkout in setup mode: Stripe's page takes the card and saves it to the old card's customer,
   * so card data never passes through Recoup.
   */
  const hostedCardForm: HostedCardForm = {
    async start({ token, currency, reference, returnUrl, cancelUrl, openForMs }) {
      const owner = await customerOf(stripe, token);
      const session = await stripe.checkout.sessions.create({
        mode: 'setup',
        // Closed when the link expires (a session opened by a mail scanner, or left open, must not save a
        // card the expired link then refuses), within the 30 minutes to 24 hours Stripe allows: one opened
        // in the link's last half hour stays open past it, and the page still takes its card.
        expires_at: checkoutExpiry(Date.now(), openForMs),
        // Checkout offers the account's payment methods that work in this currency.
        currency: currency.toLowerCase(),
        ...(owner?.customer ? { customer: owner.customer } : {}),
        success_url: `${returnUrl}?session={CHECKOUT_SESSION_ID}`,
        cancel_url: cancelUrl,
        metadata: { [linkField]: reference },
      });
      if (!session.url) throw new Error(`Stripe Checkout session ${session.id} has no URL`);
      return { url: session.url };
    },

    async finish(id, reference) {
      let session: Stripe.Checkout.Session;
      try {
        session = await stripe.checkout.sessions.retrieve(id, { expand: ['setup_intent.payment_method'] });
      } catch (error) {
        if (error instanceof Stripe.errors.StripeInvalidRequestError && error.code === 'resource_missing')
          return null;
        throw error;
      }
      const intent = session.setup_intent;
      if (session.metadata?.[linkField] !== reference || session.status !== 'complete') return null;
      if (!intent || typeof intent === 'string' || intent.status !== 'succeeded') return null;
      const method = intent.payment_method;
      if (!method || typeof method === 'string') return null;
      return { token: method.id, brand: method.card?.brand ?? 'card', last4: method.card?.last4 ?? '' };
    },
  };

  /**
   * The card each customer's invoices and renewals are charged to by default (the customer's
   * `invoice_settings.default_payment_method`), 100 customers to a page; customers without one are skipped.
   */
  async function listCards(after: string | null): Promise<CardPage> {
    const page = await stripe.customers.list({
      limit: 100,
      ...(after ? { starting_after: after } : {}),
      expand: ['data.invoice_settings.default_payment_method'],
    });
    const cards = page.data.flatMap((customer): CardOnFile[] => {
      const method = customer.invoice_settings.default_payment_method;
      if (!method || typeof method === 'string' || !method.card) return [];
      const { brand, last4, exp_month, exp_year } = method.card;
      return [
        {
          token: method.id,
          brand,
          last4,
          expMonth: exp_month,
          expYear: exp_year,
          customerEmail: customer.email ?? null,
        },
      ];
    });
    return { cards, next: page.has_more ? (page.data.at(-1)?.id ?? null) : null };
  }

  return {
    capabilities: { wallets: ['apple_pay', 'google_pay'], currencies: null },
    charge,
    lookup,
    hostedCardForm,
    listCards,
  };
}
