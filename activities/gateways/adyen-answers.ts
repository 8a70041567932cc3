// The library is CommonJS whose named exports Node's ESM loader cannot see: its values come off the default export.
import adyen, { type Types } from '@adyen/api-library';
import { normalizeDeclineCode } from '../../domain/declines.js';
import type { AdyenAuthorisation } from '../../store/adyen-authorisations.js';
import { isUnanswered } from './network-error.js';
import { declined, refusedRequest, refusedToken, type ChargeAnswer, type ChargeOutcome } from './types.js';

const { HttpClientException } = adyen;
type PaymentResponse = Types.checkout.PaymentResponse;
const { ResultCodeEnum } = adyen.Types.checkout.PaymentResponse;

/** `01: New account information available` → `01` (Mastercard's merchant advice code, as Adyen writes it). */
function adviceOf(response: PaymentResponse): string | null {
  const text = response.additionalData?.['merchantAdviceCode'];
  return text ? (/^\d{2}/.exec(text)?.[0] ?? null) : null;
}

/**
 * Adyen's refusal 46, "Transaction blocked by Adyen to prevent excessive retry fees": Adyen refuses further
 * retries of the card, as Braintree's `excessive_retry` rejection does, and is read the same way (not retried
 * on that card). Known by its `refusalReasonCode` in a payment's answer, by its text in a webhook's `reason`.
 * Read here, not as an alias in `normalizeDeclineCode`: a recovery's history may hold the reason as the
 * adapter read it before, and its workflow must replay it as it decided then.
 */
const excessiveRetry = { code: '46', reason: 'transaction_blocked_by_adyen_to_prevent_excessive_retry_fees' };

/**
 * Adyen's refusal reason (`Not enough balance`, with its `refusalReasonCode` when Adyen gives one) read as
 * Recoup's decline name, with the advice and the payment.
 */
function refused(
  reason: string | null | undefined,
  advice: string | null,
  id: string | null,
  reasonCode?: string,
): ChargeAnswer {
  const normal = normalizeDeclineCode(reason);
  const blocked = reasonCode === excessiveRetry.code || normal === excessiveRetry.reason;
  return declined(blocked ? 'excessive_retry' : normal || 'generic_decline', advice, id);
}

/** Result codes that ask for the shopper, who is not there for a recurring charge. */
const shopperNeeded: ReadonlySet<string> = new Set([
  ResultCodeEnum.RedirectShopper,
  ResultCodeEnum.IdentifyShopper,
  ResultCodeEnum.ChallengeShopper,
  ResultCodeEnum.PresentToShopper,
]);

/** Our outcome of Adyen's answer to a payment; null when Adyen has no final answer for it (yet). */
export function outcomeOf(response: PaymentResponse): ChargeAnswer | null {
  const id = response.pspReference ?? null;
  switch (response.resultCode) {
    case ResultCodeEnum.Authorised:
      return id ? { kind: 'approved', gatewayTransactionId: id } : null;
    case ResultCodeEnum.Refused:
      return refused(response.refusalReason, adviceOf(response), id, response.refusalReasonCode);
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

/** The PSP reference of a payment Adyen holds as Received or Pending: its result comes in a webhook. */
export function heldPayment(response: PaymentResponse): string | null {
  const held =
    response.resultCode === ResultCodeEnum.Received || response.resultCode === ResultCodeEnum.Pending;
  return held ? (response.pspReference ?? null) : null;
}

/**
 * The result Adyen's AUTHORISATION webhook gave a payment it held, read as a payment's answer is: approved,
 * or refused with its reason as the decline (Adyen sends no merchant advice code there).
 */
export function answerOf(authorisation: AdyenAuthorisation): ChargeAnswer {
  const id = authorisation.pspReference;
  return authorisation.success
    ? { kind: 'approved', gatewayTransactionId: id }
    : refused(authorisation.reason, null, id);
}

/** Why a payment Adyen holds has no result yet. */
export const awaitingAuthorisation =
  "its final result comes only in Adyen's AUTHORISATION webhook, which has not reached Recoup yet";

/** Why Adyen's answer is not final: a payment it holds whose result has not come yet, or no answer to read. */
export function unanswered(response: PaymentResponse): string {
  const resultCode = response.resultCode ?? 'without a result';
  return response.pspReference
    ? `Adyen holds payment ${response.pspReference} as ${resultCode}; ${awaitingAuthorisation}`
    : `Adyen answered ${resultCode} without a PSP reference`;
}

/** Adyen error codes of a stored payment method that can never be charged again as given. */
const goneCodes: ReadonlySet<string> = new Set([
  '800', // contract not found
  '803', // payment details not found (the stored payment method was disabled or never existed)
]);

/** The library's own error (not an Error): the status it gives, and the message it keeps. */
interface ApiException {
  name: 'ApiException';
  statusCode?: unknown;
  message?: unknown;
}
const isApiException = (error: unknown): error is ApiException =>
  error instanceof Object && 'name' in error && error.name === 'ApiException';

/**
 * The HTTP status of the library's error: an HttpClientException's (Adyen's answer), or an ApiException's
 * (500 for a connection that failed or timed out before an answer, 401 for a missing key).
 */
function statusOf(error: unknown): number | undefined {
  if (error instanceof HttpClientException) return error.statusCode;
  return isApiException(error) && typeof error.statusCode === 'number' ? error.statusCode : undefined;
}

/**
 * Node's messages of a connection never made (`connect ECONNREFUSED <address>`, `getaddrinfo ENOTFOUND
 * <host>`, `… EAI_AGAIN …`): the library's HTTP client wraps a socket error as an ApiException(500) that keeps
 * only its message, and each request opens its own connection, so these name a request that never left.
 */
const neverConnected = /^(connect ECONNREFUSED|getaddrinfo (ENOTFOUND|EAI_AGAIN)) /;

/** The library's error for a request that never reached Adyen (its host refused or not found); else null. */
function unreached(error: unknown): Error | null {
  const message = isApiException(error) && typeof error.message === 'string' ? error.message : '';
  return neverConnected.test(message)
    ? new Error(`Adyen was not reached, nothing was sent: ${message}`, { cause: error })
    : null;
}

/**
 * What a failed request means: a stored payment method Adyen no longer has is a decline; a request Adyen is
 * still processing under this key (704), a lost answer or a 5xx is ambiguous; a request Adyen refuses as
 * invalid (422 of its `validation` type: a currency or an amount it does not take, a field it rejects) is
 * refused the same way every time, so it is declined `request_refused`. Anything else (a connection never
 * made, wrong key, permissions, a merchant account the key may not use, Adyen's configuration) is thrown:
 * nothing was charged, and the activity tries again while the operator looks.
 */
export function refusal(error: unknown): ChargeOutcome {
  const notSent = unreached(error);
  if (notSent) throw notSent;
  const adyenError = error instanceof HttpClientException ? error : null;
  if (adyenError?.errorCode && goneCodes.has(adyenError.errorCode)) return refusedToken();
  if (adyenError?.errorCode === '704' || isUnanswered(error, statusOf(error)))
    return { kind: 'ambiguous', reason: `Adyen: ${String((error as { message?: unknown }).message)}` };
  if (adyenError?.statusCode === 422 && adyenError.apiError?.errorType === 'validation')
    return refusedRequest();
  throw error;
}
