// The library is CommonJS whose named exports Node's ESM loader cannot see: its values come off the default export.
import adyen, {
  type Client,
  type Config,
  type HttpURLConnectionClient as HttpClient,
  type Types,
} from '@adyen/api-library';
import { z } from 'zod';
import { toGatewayUnits } from '../../domain/money.js';
import type { AdyenAuthorisation } from '../../store/adyen-authorisations.js';
import {
  answerOf,
  awaitingAuthorisation,
  heldPayment,
  outcomeOf,
  refusal,
  unanswered,
} from './adyen-answers.js';
import { headerKeyWithin, keyWithin } from './gateway-keys.js';
import {
  PaymentPendingError,
  unchargeableAmount,
  type ChargeAnswer,
  type ChargeOutcome,
  type ChargeRequest,
  type GatewayAdapter,
  type LookupOutcome,
  type LookupRequest,
} from './types.js';

const { CheckoutAPI, EnvironmentEnum, HttpURLConnectionClient } = adyen;
const { checkout } = adyen.Types;
type PaymentRequest = Types.checkout.PaymentRequest;
type PaymentResponse = Types.checkout.PaymentResponse;

/** Adyen takes an `Idempotency-Key` of at most 64 characters and a payment `reference` of at most 80. */
const idempotencyKeyMax = 64;
const referenceMax = 80;
/**
 * How long Adyen is sure to keep an idempotency key: at least 31 days by its current documentation, 7 by
 * earlier versions of it (the shorter is taken). After that the same request may be a new payment.
 */
const keyKeptMs = 7 * 24 * 60 * 60 * 1000;
/**
 * Attempts first sent from this instant on (the release that added it) ask Adyen to capture at once
 * (`captureDelayHours: 0`), whatever the merchant account's capture setting. One first sent before it is
 * sent again and looked up with the request it was first sent with: a replay is the same request.
 */
export const captureAtOnceFrom = Date.UTC(2026, 10, 27);

/**
 * An Adyen gateway's credentials: a Checkout API key, the environment and, for live, the account's
 * endpoint prefix (Adyen gives each live account its own host); optionally another HTTPS base URL (a
 * proxy, or an emulator in tests). The merchant account is in each token. For Adyen's standard webhook
 * (api/routes/gateway-webhooks.ts), the HMAC key it signs with and, optionally, the basic-auth pair it
 * sends.
 */
export const AdyenCredentials = z
  .object({
    apiKey: z.string().min(1),
    environment: z.enum(['test', 'live']),
    liveEndpointUrlPrefix: z
      .string()
      .regex(
        /^[a-z0-9]+-[A-Za-z0-9]+$/,
        'must be the live endpoint prefix from the Customer Area, e.g. 1797a841fbb37ca7-AdyenDemo',
      )
      .optional(),
    apiBase: z.url({ protocol: /^https$/ }).optional(),
    hmacKey: z
      .string()
      .regex(
        /^[0-9A-Fa-f]{64}$/,
        "must be the hex HMAC key of the standard webhook, from the Customer Area's webhook settings",
      )
      .optional(),
    // Basic auth splits the pair at the first colon, so a username holding one could never match.
    notificationUsername: z
      .string()
      .regex(/^[^:]{1,256}$/, 'must be 1–256 characters without a colon')
      .optional(),
    notificationPassword: z.string().min(1).max(256).optional(),
  })
  .strict()
  .refine((c) => c.environment === 'test' || c.liveEndpointUrlPrefix !== undefined, {
    message: 'a live Adyen account needs its liveEndpointUrlPrefix',
    path: ['liveEndpointUrlPrefix'],
  })
  .refine((c) => (c.notificationUsername === undefined) === (c.notificationPassword === undefined), {
    message: 'notificationUsername and notificationPassword go together',
    path: ['notificationPassword'],
  })
  .refine((c) => c.notificationUsername === undefined || c.hmacKey !== undefined, {
    message: "the webhook's basic-auth pair needs its hmacKey: every notification's signature is checked",
    path: ['hmacKey'],
  });
export type AdyenCredentials = z.infer<typeof AdyenCredentials>;

/** What the library's HTTP client takes after the endpoint (body, config, key flag, options). */
type RequestRest = Parameters<HttpClient['request']> extends [string, ...infer R] ? R : never;

/** Sends the library's requests to another HTTPS base, keeping the path (`/v72/payments`). */
class RebasedClient extends HttpURLConnectionClient {
  constructor(private readonly base: string) {
    super();
  }

  override request(endpoint: string, ...rest: RequestRest) {
    const url = new URL(endpoint);
    return super.request(`${this.base.replace(/\/$/, '')}${url.pathname}${url.search}`, ...rest);
  }
}

/** Adyen's official client for these credentials. */
export function adyenClient(credentials: AdyenCredentials): Client {
  const config: Config = {
    apiKey: credentials.apiKey,
    environment: credentials.environment === 'live' ? EnvironmentEnum.LIVE : EnvironmentEnum.TEST,
    // A charge is answered, or given up as ambiguous, inside the charge activity's 45 s.
    connectionTimeoutMillis: 20_000,
    applicationName: 'Recoup',
    ...(credentials.liveEndpointUrlPrefix
      ? { liveEndpointUrlPrefix: credentials.liveEndpointUrlPrefix }
      : {}),
  };
  return new adyen.Client(config, credentials.apiBase ? new RebasedClient(credentials.apiBase) : undefined);
}

/** `<merchantAccount>|<storedPaymentMethodId>|<shopperReference>`, the spec's token shape for Adyen. */
function storedToken(token: string) {
  const [merchantAccount = '', storedPaymentMethodId = '', shopperReference = ''] = token.split('|');
  return { merchantAccount, storedPaymentMethodId, shopperReference };
}

/** A request too late to replay: Adyen may have dropped the key, and the same request could pay again. */
function keyMayBeGone(req: { idempotencyKey: string }, sentAt: number): Error {
  const reference = keyWithin(req.idempotencyKey, referenceMax);
  return new Error(
    `Adyen may no longer hold the idempotency key of ${req.idempotencyKey} (sent ${new Date(sentAt).toISOString()}): the same request could be a second payment, so it is not sent. Find the payment by its reference ${reference} in Adyen's Customer Area`,
  );
}

/** The AUTHORISATION Adyen's webhook brought for a payment of the gateway's account, by PSP reference. */
export type AuthorisationReader = (pspReference: string) => Promise<AdyenAuthorisation | null>;

/**
 * Adyen through its official library (`@adyen/api-library`, Checkout API): each attempt is one `/payments`
 * call for the stored payment method (`shopperInteraction: ContAuth`, `recurringProcessingModel:
 * Subscription`), with the attempt's key as Adyen's idempotency key and as the payment's reference (each
 * its SHA-256 when longer than Adyen takes). Adyen has no API to read a payment back; its documented answer
 * to a lost response is to send the same request with the same key, which returns the first result and
 * charges only if the first request never arrived (once). The lookup does exactly that, so for Adyen
 * "looked up" means "resolved at most once", never a second charge, and neither it nor a charge sent again
 * is sent once Adyen may have dropped the key (`clock` against the attempt's first send). New attempts ask
 * Adyen to capture at once (`captureAtOnceFrom`). A payment Adyen holds as Received or Pending
 * answers every replay the same way: its result is the AUTHORISATION that Adyen's webhook brought
 * (`authorisationOf`), which a lookup knowing its PSP reference reads without sending anything. Refusals
 * carry Adyen's refusal reason read as Recoup's decline name and Mastercard's merchant advice code.
 * `returnUrl` (Recoup's public URL) is what Adyen requires in every payment request.
 */
export function createAdyenGateway(
  credentials: AdyenCredentials,
  returnUrl: string,
  authorisationOf: AuthorisationReader,
  clock: () => Date = () => new Date(),
): GatewayAdapter {
  const payments = new CheckoutAPI(adyenClient(credentials)).PaymentsApi;

  /** When the attempt was first sent: from durable storage, else the try's own time, else now. */
  const firstSentOf = (req: ChargeRequest | LookupRequest) =>
    req.firstSentAt ?? req.sentAt ?? clock().getTime();

  /**
   * The one request of an attempt: built the same way each time, from what the attempt was first sent with,
   * so a replay is the same request. `value` is the amount in Adyen's minor units, which are not ISO's for
   * CLP, CVE, IDR and ISK.
   */
  function paymentOf(req: ChargeRequest | LookupRequest, value: number): PaymentRequest {
    const { merchantAccount, storedPaymentMethodId, shopperReference } = storedToken(req.token);
    return {
      amount: { value, currency: req.currency },
      merchantAccount,
      reference: keyWithin(req.idempotencyKey, referenceMax),
      paymentMethod: { type: checkout.CardDetails.TypeEnum.Scheme, storedPaymentMethodId },
      shopperReference,
      shopperInteraction: checkout.PaymentRequest.ShopperInteractionEnum.ContAuth,
      recurringProcessingModel: checkout.PaymentRequest.RecurringProcessingModelEnum.Subscription,
      // Captured with the authorisation, also on a merchant account set to capture later or by hand: an
      // authorised payment is what Recoup reports recovered.
      ...(firstSentOf(req) >= captureAtOnceFrom ? { captureDelayHours: 0 } : {}),
      // Adyen requires one; nobody is redirected (a payment that would need the shopper is a decline).
      returnUrl,
    };
  }

  /**
   * Sends the attempt's one request. A payment Adyen holds as Received or Pending is ambiguous, naming its
   * PSP reference (later lookups read it by that), unless `settle` (the lookup's) finds its result.
   */
  async function send(
    req: ChargeRequest | LookupRequest,
    settle?: (pspReference: string) => Promise<ChargeAnswer | null>,
  ): Promise<ChargeOutcome> {
    // An amount Adyen cannot charge exactly (123.45 CVE: Adyen takes whole escudos) is declined, nothing sent.
    const value = toGatewayUnits(req.amount, req.currency, 'adyen');
    if (value === null) return unchargeableAmount();
    let response: PaymentResponse;
    try {
      response = await payments.payments(paymentOf(req, value), {
        idempotencyKey: headerKeyWithin(req.idempotencyKey, idempotencyKeyMax),
      });
    } catch (error) {
      return refusal(error);
    }
    const outcome = outcomeOf(response);
    if (outcome) return outcome;
    const held = heldPayment(response);
    const settled = held && settle ? await settle(held) : null;
    if (settled) return settled;
    return {
      kind: 'ambiguous',
      reason: unanswered(response),
      ...(held ? { gatewayTransactionId: held } : {}),
    };
  }

  /**
   * The result of a payment Adyen held, from its AUTHORISATION webhook; null while none came. One that names
   * another reference or amount is not this attempt's payment, whatever it says: an error, never an approval.
   */
  async function settledBy(pspReference: string, req: LookupRequest): Promise<ChargeAnswer | null> {
    const authorisation = await authorisationOf(pspReference);
    if (!authorisation) return null;
    const reference = keyWithin(req.idempotencyKey, referenceMax);
    const value = toGatewayUnits(req.amount, req.currency, 'adyen');
    const sent = `${reference} for ${value} ${req.currency}`;
    const named = `${authorisation.merchantReference} for ${authorisation.value} ${authorisation.currency}`;
    if (named !== sent)
      throw new Error(
        `Adyen's AUTHORISATION of payment ${pspReference} names ${named}, not ${sent} of ${req.idempotencyKey}: it is not taken as the attempt's result`,
      );
    return answerOf(authorisation);
  }

  async function charge(req: ChargeRequest): Promise<ChargeOutcome> {
    // Sent again once Adyen may have dropped the key (its first answer lost to a store that was down for
    // days): the same request could be a second payment, and Adyen cannot be read. Never sent.
    if (req.firstSentAt !== undefined && clock().getTime() - req.firstSentAt >= keyKeptMs)
      throw keyMayBeGone(req, req.firstSentAt);
    return send(req);
  }

  /**
   * A held payment's result by its PSP reference, sending nothing: Adyen would answer a replay as it first
   * did. Pending (so tried again later, reading only) while no AUTHORISATION came.
   */
  async function readHeld(pspReference: string, req: LookupRequest): Promise<ChargeAnswer> {
    const settled = await settledBy(pspReference, req);
    if (settled) return settled;
    throw new PaymentPendingError(
      `Adyen holds payment ${pspReference} of ${req.idempotencyKey}; ${awaitingAuthorisation}`,
      pspReference,
    );
  }

  async function lookup(req: LookupRequest): Promise<LookupOutcome> {
    // A payment Adyen held and named is read before anything else, also once its key may be gone: its
    // webhook can come days late (Adyen resends it for 30 days, or the webhook is set up only later).
    if (req.gatewayTransactionId) return readHeld(req.gatewayTransactionId, req);
    // Sent also when a stop was asked (`readOnly`): without the payment's PSP reference Adyen cannot be read,
    // and none found is never known. The replay makes the payment only if the first request never reached
    // Adyen, and its answer is recorded (docs/gateways.md, "Lookup").
    // Once Adyen may have dropped the key, the same request could be a second payment: never sent.
    const firstSentAt = firstSentOf(req);
    if (clock().getTime() - firstSentAt >= keyKeptMs) throw keyMayBeGone(req, firstSentAt);
    const outcome = await send(req, (pspReference) => settledBy(pspReference, req));
    if (outcome.kind !== 'ambiguous') return outcome;
    const reason = `Adyen has no answer for ${req.idempotencyKey} yet: ${outcome.reason}`;
    // A payment held with no AUTHORISATION received yet: pending, so its PSP reference is kept and every
    // later lookup only reads it.
    if (outcome.gatewayTransactionId) throw new PaymentPendingError(reason, outcome.gatewayTransactionId);
    // No answer at all (Adyen busy with the first request, or unreachable): fail, so it is retried later.
    throw new Error(reason);
  }

  return { capabilities: { wallets: [], currencies: null }, charge, lookup };
}
