import type braintree from 'braintree';
import { isKnownDeclineCode, normalizeDeclineCode } from '../../domain/declines.js';
import { isUnanswered } from './network-error.js';
import { declined, refusedRequest, refusedToken, unchargeableAmount, type ChargeAnswer } from './types.js';

/** Statuses of a sale that went through (submitted for settlement at once, or further along). */
export const chargedStatuses: ReadonlySet<string> = new Set([
  'authorized',
  'submitted_for_settlement',
  'settlement_pending',
  'settling',
  'settled',
  'settlement_confirmed',
]);

/**
 * What Braintree's own checks (gateway rejections) mean for a recovery. Those that refuse the card every
 * time stop its retries: too many retries of the card (`excessive_retry`), a payment method Braintree
 * blocks. Others (`token_issuance`, and the merchant's setup — an application not yet approved, settings
 * that refuse such a sale — which the merchant can fix) are a `processing_error`, retried later.
 */
const rejectionCodes: Record<string, string> = {
  fraud: 'fraudulent',
  risk_threshold: 'fraudulent',
  cvv: 'incorrect_cvc',
  avs: 'incorrect_zip',
  avs_and_cvv: 'incorrect_cvc',
  three_d_secure: 'authentication_required',
  excessive_retry: 'excessive_retry',
  payment_method_blocked: 'card_no_longer_chargeable',
};

/** The gateway rejection of a payment method Braintree blocks: refused before any charge (`tokenRefused`). */
const blockedMethod = 'payment_method_blocked';

/**
 * A transaction as Braintree sends it: `merchantAdviceCode` (Mastercard's advice) is newer than the SDK's
 * types, and so are gateway rejection reasons such as `excessive_retry` and `payment_method_blocked`.
 */
export type Transaction = Omit<braintree.Transaction, 'gatewayRejectionReason'> & {
  gatewayRejectionReason?: string | null;
  merchantAdviceCode?: string | null;
};

/**
 * Recoup's decline name for a Braintree transaction that did not go through. A processor decline keeps its
 * response code, read as Recoup's name; one Recoup does not name is `hard_decline`, never retried, when
 * the processor calls it hard (`processorResponseType`), and is kept (and treated conservatively) when soft.
 */
export function declineCodeOf(transaction: Transaction): string {
  const { status } = transaction;
  if (status === 'gateway_rejected')
    return rejectionCodes[transaction.gatewayRejectionReason ?? ''] ?? 'processing_error';
  // `failed`: the processor could not be reached or answered with an error; nothing was charged.
  if (status === 'failed') return 'processing_error';
  const code = normalizeDeclineCode(transaction.processorResponseCode) || 'card_declined';
  return transaction.processorResponseType === 'hard_declined' && !isKnownDeclineCode(code)
    ? 'hard_decline'
    : code;
}

/**
 * Our outcome of a transaction Braintree holds: 'duplicate' for a sale Braintree's duplicate checking
 * rejected (an earlier try with the same order id went through), 'pending' while it is still authorizing.
 */
export function outcomeOf(transaction: Transaction): ChargeAnswer | 'duplicate' | 'pending' {
  const { id, status } = transaction;
  if (chargedStatuses.has(status)) return { kind: 'approved', gatewayTransactionId: id };
  if (status === 'authorizing') return 'pending';
  if (status === 'gateway_rejected' && transaction.gatewayRejectionReason === 'duplicate') return 'duplicate';
  // Mastercard's advice comes with the processor's declines only.
  const fromProcessor = status !== 'gateway_rejected' && status !== 'failed';
  const advice = fromProcessor ? (transaction.merchantAdviceCode ?? null) : null;
  const code = declineCodeOf(transaction);
  // No issuer said anything about a card Braintree itself blocks: it is not remembered as blocked.
  if (status === 'gateway_rejected' && transaction.gatewayRejectionReason === blockedMethod)
    return { kind: 'declined', code, advice: null, gatewayTransactionId: id, tokenRefused: true };
  return declined(code, advice, id);
}

/** The HTTP status each of the SDK's error types stands for (it keeps the type, not the status). */
const errorStatuses: Record<string, number> = {
  serverError: 500,
  serviceUnavailableError: 503,
  gatewayTimeoutError: 504,
};

/**
 * SDK error types with no answer to read: a timeout, and `unexpectedError`, which is what the SDK makes of a
 * lost connection (dropping its code, so whether the request left cannot be told) or an unexpected status.
 */
const lostErrors: ReadonlySet<string> = new Set(['requestTimeoutError', 'unexpectedError']);

/** Whether an error of the SDK leaves a sale's fate unknown: the request may have reached Braintree. */
export function isUnansweredSale(error: unknown): boolean {
  const type = error instanceof Object && 'type' in error ? error.type : undefined;
  if (typeof type !== 'string') return isUnanswered(error);
  return lostErrors.has(type) || isUnanswered(error, errorStatuses[type]);
}

/** Braintree's refusal to charge a subscription that is not past due (collected or cancelled meanwhile). */
const subscriptionNotPastDueError = '91531';
/** The answer for a subscription that owes nothing any more: declined, nothing charged. */
export const notPastDue = declined('subscription_not_past_due', null, null);

/** Validation errors that mean the vaulted payment method can never be charged (again) as given. */
const unchargeableTokenErrors: ReadonlySet<string> = new Set([
  '91516', // the payment method does not belong to the customer
  '91518', // the payment method token is invalid (deleted, or never existed)
  '91517', // the card type is not accepted by the merchant account
  '91510', // the customer id is invalid (the customer was deleted)
  '91577', // the merchant account does not take this kind of payment method
]);

/** Validation errors of the amount (negative, badly written, too large, zero): never charged as asked. */
const amountErrors: ReadonlySet<string> = new Set(['81501', '81503', '81528', '81531']);

/**
 * Validation errors of the merchant's setup, the operator's to fix: a merchant account Braintree does not
 * know or has suspended, PayPal not enabled on it. Thrown, so the activity retries and the Temporal UI shows
 * why.
 */
const setupErrors: ReadonlySet<string> = new Set(['91513', '91514', '91576']);

/**
 * What Braintree's validation errors for a sale mean (nothing was created): a payment method it cannot
 * charge is refused, a subscription no longer past due owes nothing, an amount it does not take is
 * `invalid_amount`; any other error of the request is refused the same way every time, `request_refused`.
 * The merchant's setup throws.
 */
export function validationAnswer(errors: Array<{ code: string; message: string }>): ChargeAnswer {
  const codes = new Set(errors.map((e) => e.code));
  const has = (set: ReadonlySet<string>) => [...codes].some((code) => set.has(code));
  if (has(unchargeableTokenErrors)) return refusedToken();
  if (codes.has(subscriptionNotPastDueError)) return notPastDue;
  if (codes.size === 0 || has(setupErrors))
    throw new Error(`Braintree refused the sale: ${errors.map((e) => `${e.code} ${e.message}`).join('; ')}`);
  return has(amountErrors) ? unchargeableAmount() : refusedRequest();
}
