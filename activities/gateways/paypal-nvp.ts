import { normalizeDeclineCode } from '../../domain/declines.js';
import { keyWithin } from './gateway-keys.js';
import { isUnanswered } from './network-error.js';
import { declined, type ChargeAnswer } from './types.js';

/** A PayPal account's NVP API signature credentials and the NVP endpoint. */
export interface NvpCredentials {
  user: string;
  password: string;
  signature: string;
  url: string;
}

/**
 * A definite answer, or why PayPal has given none yet (a lost answer, a pending payment, its own error), with
 * PayPal's id of the attempt's payment when its answer named one: the lookup reads that payment by its id.
 */
export type PayPalAnswer = ChargeAnswer | { unanswered: string; paymentId?: string };

/**
 * What an answer is read for: a charge; the same request sent again by the lookup of a charge whose answer
 * was lost; or a payment read by its id (`GetTransactionDetails`), whose errors say nothing of the payment.
 */
type Reading = 'charge' | 'lookup' | 'read';

/** The NVP endpoint of an environment, or `/nvp` under another HTTPS base. */
export function nvpUrl(environment: 'sandbox' | 'live', apiBase: string | undefined): string {
  if (apiBase) return `${apiBase.replace(/\/$/, '')}/nvp`;
  return environment === 'live' ? 'https://api-3t.paypal.com/nvp' : 'https://api-3t.sandbox.paypal.com/nvp';
}

/**
 * Statuses of a payment that was taken: completed, or refunded or reversed (a chargeback) since — the
 * attempt collected it; what became of it later is the merchant's to see.
 */
const paid: ReadonlySet<string> = new Set([
  'Completed',
  'Processed',
  'Completed-Funds-Held',
  'Refunded',
  'Partially-Refunded',
  'Reversed',
  'Canceled-Reversal',
]);
const waiting: ReadonlySet<string> = new Set(['Pending', 'In-Progress']);
/** Statuses of a payment that took nothing. Any other is not known to be an outcome: read again later. */
const refused: ReadonlySet<string> = new Set(['Denied', 'Failed', 'Expired', 'Voided']);
/** Errors that are the caller's setup, not the payer's: thrown, so the Temporal UI shows them. */
const setupErrors: ReadonlySet<string> = new Set(['10002', '10006', '11452']);
/** PayPal's own failure: nothing is known about the payment. */
const internalErrors: ReadonlySet<string> = new Set(['10001', '11453']);
/**
 * "Payment has already been made for this InvoiceID": `INVNUM` is the attempt's own key, so this attempt's
 * payment exists (its `MSGSUBID` forgotten). Not a decline: its outcome cannot be read here, and it is never
 * paid again under another key.
 */
const alreadyPaid = '10412';
/**
 * "Duplicate request": this `MSGSUBID` was answered before, and PayPal sends the original result's fields
 * with the error (its `TRANSACTIONID`, `PAYMENTSTATUS` …), never making a second payment.
 */
const duplicateRequest = '11607';

/**
 * One reference transaction of the NVP API (`DoReferenceTransaction`, a Sale of the amount against an
 * earlier payment or billing agreement of the payer's), which PayPal's REST APIs and SDKs do not offer.
 * `MSGSUBID` is PayPal's idempotency key for it: the same request again answers with the earlier result
 * (error 11607 with its fields) instead of paying twice, or pays once if the first never arrived. `amount`
 * is written as PayPal takes it ("49.00" USD, "5000" HUF). A lookup sends the same request: an error code
 * Recoup does not know as a decline is then no answer, never a decline that would let the attempt be paid
 * again under another key.
 */
export async function chargeReference(
  nvp: NvpCredentials,
  req: { reference: string; amount: string; currency: string; idempotencyKey: string },
  reading: 'charge' | 'lookup',
): Promise<PayPalAnswer> {
  const answer = await post(nvp, {
    METHOD: 'DoReferenceTransaction',
    REFERENCEID: req.reference,
    PAYMENTACTION: 'Sale',
    AMT: req.amount,
    CURRENCYCODE: req.currency,
    INVNUM: keyWithin(req.idempotencyKey, 127),
    MSGSUBID: keyWithin(req.idempotencyKey, 38),
  });
  return answer instanceof URLSearchParams ? answerOf(answer, reading) : answer;
}

/** The reference transaction `transactionId` as PayPal reports it now (`GetTransactionDetails`). */
export async function referencePayment(nvp: NvpCredentials, transactionId: string): Promise<PayPalAnswer> {
  const answer = await post(nvp, { METHOD: 'GetTransactionDetails', TRANSACTIONID: transactionId });
  return answer instanceof URLSearchParams ? answerOf(answer, 'read') : answer;
}

/** One NVP request's answer, or why none arrived; errors that are not PayPal's answer throw. */
async function post(
  nvp: NvpCredentials,
  fields: Record<string, string>,
): Promise<URLSearchParams | { unanswered: string }> {
  const credentials = { USER: nvp.user, PWD: nvp.password, SIGNATURE: nvp.signature, VERSION: '204.0' };
  const body = new URLSearchParams({ ...credentials, ...fields });
  try {
    const response = await fetch(nvp.url, { method: 'POST', body, signal: AbortSignal.timeout(20_000) });
    if (response.status >= 500) return { unanswered: `PayPal NVP answered ${response.status}` };
    if (!response.ok) throw new Error(`PayPal NVP answered ${response.status}`);
    return new URLSearchParams(await response.text());
  } catch (error) {
    // The connection broke once the request may have reached PayPal, or the answer timed out: no answer.
    // One never made (refused, unknown host) throws, and is sent again under the same MSGSUBID.
    if (isUnanswered(error)) return { unanswered: `PayPal NVP: ${(error as Error).message}` };
    throw error;
  }
}

/** Our reading of a `DoReferenceTransaction` or `GetTransactionDetails` answer. */
function answerOf(fields: URLSearchParams, reading: Reading): PayPalAnswer {
  const id = fields.get('TRANSACTIONID') || null;
  const status = fields.get('PAYMENTSTATUS');
  // A payment's own fields come with a success and with error 11607 (the original result): they say it all.
  if (status) return paymentAnswer(id, status, fields.get('PENDINGREASON') ?? '');
  const paymentId = id ? { paymentId: id } : {};
  if ((fields.get('ACK') ?? '').startsWith('Success'))
    return { unanswered: `PayPal NVP answered without a payment status (${id ?? 'no transaction'})` };
  const code = fields.get('L_ERRORCODE0') ?? '';
  const message = `${code} ${fields.get('L_LONGMESSAGE0') ?? fields.get('L_SHORTMESSAGE0') ?? ''}`;
  if (setupErrors.has(code)) throw new Error(`PayPal NVP refused the request: ${message}`);
  if (internalErrors.has(code)) return { unanswered: `PayPal NVP: ${message}`, ...paymentId };
  if (code === alreadyPaid)
    return {
      unanswered: `PayPal already has a payment under this attempt (duplicate invoice id, NVP ${message})`,
    };
  if (code === duplicateRequest)
    return { unanswered: `PayPal answered this attempt before (NVP ${message})`, ...paymentId };
  const name = normalizeDeclineCode(code);
  // Sent again by a lookup, only a code known as a decline says that nothing was paid.
  if (reading === 'read' || (reading === 'lookup' && name === code.toLowerCase()))
    return { unanswered: `PayPal NVP answered the lookup with an error: ${message}`, ...paymentId };
  return declined(name || 'generic_decline', null, id);
}

/** Our reading of a payment PayPal names with its status. */
export function paymentAnswer(id: string | null, status: string, pendingReason: string): PayPalAnswer {
  if (paid.has(status) && id) return { kind: 'approved', gatewayTransactionId: id };
  if (refused.has(status)) return declined('generic_decline', null, id);
  const paymentId = id ? { paymentId: id } : {};
  if (waiting.has(status))
    return { unanswered: `PayPal payment ${id ?? ''} is pending (${pendingReason})`, ...paymentId };
  return { unanswered: `PayPal payment ${id ?? ''} is ${status}`, ...paymentId };
}
