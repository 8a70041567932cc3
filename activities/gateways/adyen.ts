// The library is CommonJS whose named exports Node's ESM loader cannot see: its values come off the default export.
import adyen, {
  type Client,
  type Config,
  type HttpURLConnectionClient as HttpClient,
  type Types,
} from '@adyen/api-library';
import { z } from 'zod';
import { normalizeDeclineCode } from '../../domain/declines.js';
import { toGatewayUnits } from '../../domain/money.js';
import { keyWithin } from './gateway-keys.js';
import {
  declined,
  unchargeableAmount,
  refusedToken,
  type ChargeAnswer,
  type ChargeOutcome,
  type ChargeRequest,
  type GatewayAdapter,
  type LookupOutcome,
  type LookupRequest,
} from './types.js';

const { CheckoutAPI, EnvironmentEnum, HttpClientException, HttpURLConnectionClient } = adyen;
const { checkout } = adyen.Types;
type PaymentRequest = Types.checkout.PaymentRequest;
type PaymentResponse = Types.checkout.PaymentResponse;
const { ResultCodeEnum } = checkout.PaymentResponse;

/** Adyen takes an `Idempotency-Key` of at most 64 characters and a payment `reference` of at most 80. */
const idempotencyKeyMax = 64;
const referenceMax = 80;
/**
 * How long Adyen is sure to keep an idempotency key: at least 31 days by its current documentation, 7 by
 * earlier versions of it (the shorter is taken). After that the same request may be a new payment.
 */
const keyKeptMs = 7 * 24 * 60 * 60 * 1000;

/**
 * An Adyen gateway's credentials: a Checkout API key, the environment and, for live, the account's
 * endpoint prefix (Adyen gives each live account its own host); optionally another HTTPS base URL (a
 * proxy, or an emulator in tests). The merchant account is in each token.
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
  })
  .strict()
  .refine((c) => c.environment === 'test' || c.liveEndpointUrlPrefix !== undefined, {
    message: 'a live Adyen account needs its liveEndpointUrlPrefix',
    path: ['liveEndpointUrlPrefix'],
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

/** `01: New account information available` → `01` (Mastercard's merchant advice code, as Adyen writes it). */
function adviceOf(response: PaymentResponse): string | null {
  const text = response.additionalData?.['merchantAdviceCode'];
  return text ? (/^\d{2}/.exec(text)?.[0] ?? null) : null;
}

/** Result codes that ask for the shopper, who is not there for a recurring charge. */
const shopperNeeded: ReadonlySet<string> = new Set([
  ResultCodeEnum.RedirectShopper,
  ResultCodeEnum.IdentifyShopper,
  ResultCodeEnum.ChallengeShopper,
  ResultCodeEnum.PresentToShopper,
]);

/** Our outcome of Adyen's answer to a payment; null when Adyen has no final answer for it (yet). */
function outcomeOf(response: PaymentResponse): ChargeAnswer | null {
  const id = response.pspReference ?? null;
  switch (response.resultCode) {
    case ResultCodeEnum.Authorised:
      return id ? { kind: 'approved', gatewayTransactionId: id } : null;
    case ResultCodeEnum.Refused:
      return declined(
        normalizeDeclineCode(response.refusalReason) || 'generic_decline',
        adviceOf(response),
        id,
      );
    case ResultCodeEnum.Error:
      return declined('processing_error', null, id);
    case ResultCodeEnum.Cancelled:
      return declined('generic_decline', null, id);
    default:
      return response.resultCode && shopperNeeded.has(response.resultCode)
        ? declined('authentication_required', null, id)
        : null;
  }
}

/** Why Adyen's answer is not final: a payment it holds whose result comes later, or no answer to read. */
function unanswered(response: PaymentResponse): string {
  const resultCode = response.resultCode ?? 'without a result';
  return response.pspReference
    ? `Adyen holds payment ${response.pspReference} as ${resultCode}; its final result comes only in Adyen's AUTHORISATION webhook`
    : `Adyen answered ${resultCode} without a PSP reference`;
}

/** A lookup too late to replay: Adyen may have dropped the key, and the same request could pay again. */
function keyMayBeGone(req: LookupRequest): Error {
  const reference = keyWithin(req.idempotencyKey, referenceMax);
  return new Error(
    `Adyen may no longer hold the idempotency key of ${req.idempotencyKey} (sent ${new Date(req.sentAt).toISOString()}): the same request could be a second payment, so it is not sent. Find the payment by its reference ${reference} in Adyen's Customer Area`,
  );
}

/** Adyen error codes of a stored payment method that can never be charged again as given. */
const goneCodes: ReadonlySet<string> = new Set([
  '800', // contract not found
  '803', // payment details not found (the stored payment method was disabled or never existed)
]);

/**
 * What a failed request means: a stored payment method Adyen no longer has is a decline; a request Adyen is
 * still processing under this key (704), a lost answer or a 5xx is ambiguous. Anything else (wrong key,
 * permissions, a merchant account the key may not use, an invalid request) is thrown: nothing was charged,
 * and the activity tries again while the operator looks.
 */
function refusal(error: unknown): ChargeOutcome {
  if (error instanceof HttpClientException) {
    if (error.errorCode && goneCodes.has(error.errorCode)) return refusedToken();
    if (error.errorCode === '704' || error.statusCode >= 500)
      return { kind: 'ambiguous', reason: `Adyen: ${error.message}` };
    throw error;
  }
  // The library's ApiException: the connection failed or timed out before an answer.
  if (error instanceof Object && 'name' in error && error.name === 'ApiException')
    return { kind: 'ambiguous', reason: `Adyen: ${String((error as { message?: unknown }).message)}` };
  throw error;
}

/**
 * Adyen through its official library (`@adyen/api-library`, Checkout API): each attempt is one `/payments`
 * call for the stored payment method (`shopperInteraction: ContAuth`, `recurringProcessingModel:
 * Subscription`), with the attempt's key as Adyen's idempotency key and as the payment's reference (each
 * its SHA-256 when longer than Adyen takes). Adyen has no API to read a payment back; its documented answer
 * to a lost response is to send the same request with the same key, which returns the first result and
 * charges only if the first request never arrived (once). The lookup does exactly that, so for Adyen
 * "looked up" means "resolved at most once", never a second charge, and it is never sent once Adyen may
 * have dropped the key (`clock` against the charge's `sentAt`). Refusals carry Adyen's refusal reason read
 * as Recoup's decline name and Mastercard's merchant advice code. `returnUrl` (Recoup's public URL) is what
 * Adyen requires in every payment request.
 */
export function createAdyenGateway(
  credentials: AdyenCredentials,
  returnUrl: string,
  clock: () => Date = () => new Date(),
): GatewayAdapter {
  const payments = new CheckoutAPI(adyenClient(credentials)).PaymentsApi;

  /**
   * The one request of an attempt: built the same way each time, so a replay is the same request. `value`
   * is the amount in Adyen's minor units, which are not ISO's for CLP, CVE, IDR and ISK.
   */
  function paymentOf(
    req: { token: string; currency: string; idempotencyKey: string },
    value: number,
  ): PaymentRequest {
    const { merchantAccount, storedPaymentMethodId, shopperReference } = storedToken(req.token);
    return {
      amount: { value, currency: req.currency },
      merchantAccount,
      reference: keyWithin(req.idempotencyKey, referenceMax),
      paymentMethod: { type: checkout.CardDetails.TypeEnum.Scheme, storedPaymentMethodId },
      shopperReference,
      shopperInteraction: checkout.PaymentRequest.ShopperInteractionEnum.ContAuth,
      recurringProcessingModel: checkout.PaymentRequest.RecurringProcessingModelEnum.Subscription,
      // Adyen requires one; nobody is redirected (a payment that would need the shopper is a decline).
      returnUrl,
    };
  }

  async function send(req: ChargeRequest | LookupRequest): Promise<ChargeOutcome> {
    // An amount Adyen cannot charge exactly (123.45 CVE: Adyen takes whole escudos) is declined, nothing sent.
    const value = toGatewayUnits(req.amount, req.currency, 'adyen');
    if (value === null) return unchargeableAmount();
    let response: PaymentResponse;
    try {
      response = await payments.payments(paymentOf(req, value), {
        idempotencyKey: keyWithin(req.idempotencyKey, idempotencyKeyMax),
      });
    } catch (error) {
      return refusal(error);
    }
    return outcomeOf(response) ?? { kind: 'ambiguous', reason: unanswered(response) };
  }

  async function lookup(req: LookupRequest): Promise<LookupOutcome> {
    // A payment Adyen holds as Received or Pending answers every replay the same way, so its lookup fails on
    // and on; once Adyen may have dropped the key, the same request could be a second payment: never sent.
    if (clock().getTime() - req.sentAt >= keyKeptMs) throw keyMayBeGone(req);
    const outcome = await send(req);
    // No final answer (Adyen busy with the first request, unreachable, or holding the payment as Received or
    // Pending): fail, so the lookup is retried later.
    if (outcome.kind === 'ambiguous')
      throw new Error(`Adyen has no answer for ${req.idempotencyKey} yet: ${outcome.reason}`);
    return outcome;
  }

  return { capabilities: { wallets: [], currencies: null }, charge: send, lookup };
}
