import { normalizeDeclineCode } from '../../domain/declines.js';
import { keyWithin } from './gateway-keys.js';
import { declined, type ChargeAnswer } from './types.js';

/** A PayPal account's NVP API signature credentials and the NVP endpoint. */
export interface NvpCredentials {
  user: string;
  password: string;
  signature: string;
  url: string;
}

/** A definite answer, or why PayPal has given none yet (a lost answer, a pending payment, its own error). */
export type PayPalAnswer = ChargeAnswer | { unanswered: string };

/** The NVP endpoint of an environment, or `/nvp` under another HTTPS base. */
export function nvpUrl(environment: 'sandbox' | 'live', apiBase: string | undefined): string {
  if (apiBase) return `${apiBase.replace(/\/$/, '')}/nvp`;
  return environment === 'live' ? 'https://api-3t.paypal.com/nvp' : 'https://api-3t.sandbox.paypal.com/nvp';
}

/** Payment statuses of a reference transaction PayPal has taken. */
const paid: ReadonlySet<string> = new Set(['Completed', 'Processed', 'Completed-Funds-Held']);
const waiting: ReadonlySet<string> = new Set(['Pending', 'In-Progress']);
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
 * One reference transaction of the NVP API (`DoReferenceTransaction`, a Sale of the amount against an
 * earlier payment or billing agreement of the payer's), which PayPal's REST APIs and SDKs do not offer.
 * `MSGSUBID` is PayPal's idempotency key for it: the same request again answers with the earlier result
 * instead of paying twice, or pays once if the first never arrived. `amount` is written as PayPal takes it
 * ("49.00" USD, "5000" HUF).
 */
export async function chargeReference(
  nvp: NvpCredentials,
  req: { reference: string; amount: string; currency: string; idempotencyKey: string },
): Promise<PayPalAnswer> {
  const body = new URLSearchParams({
    USER: nvp.user,
    PWD: nvp.password,
    SIGNATURE: nvp.signature,
    METHOD: 'DoReferenceTransaction',
    VERSION: '204.0',
    REFERENCEID: req.reference,
    PAYMENTACTION: 'Sale',
    AMT: req.amount,
    CURRENCYCODE: req.currency,
    INVNUM: keyWithin(req.idempotencyKey, 127),
    MSGSUBID: keyWithin(req.idempotencyKey, 38),
  });
  let fields: URLSearchParams;
  try {
    const response = await fetch(nvp.url, { method: 'POST', body, signal: AbortSignal.timeout(20_000) });
    if (response.status >= 500) return { unanswered: `PayPal NVP answered ${response.status}` };
    if (!response.ok) throw new Error(`PayPal NVP answered ${response.status}`);
    fields = new URLSearchParams(await response.text());
  } catch (error) {
    // fetch fails with a TypeError (its cause the socket's error) or a timeout: no answer arrived.
    if (error instanceof TypeError || (error instanceof DOMException && error.name === 'TimeoutError'))
      return { unanswered: `PayPal NVP: ${error.message}` };
    throw error;
  }
  return answerOf(fields);
}

/** Our reading of a `DoReferenceTransaction` answer. */
function answerOf(fields: URLSearchParams): PayPalAnswer {
  const ack = fields.get('ACK') ?? '';
  const id = fields.get('TRANSACTIONID') || null;
  if (ack.startsWith('Success')) {
    const status = fields.get('PAYMENTSTATUS') ?? '';
    if (paid.has(status) && id) return { kind: 'approved', gatewayTransactionId: id };
    if (waiting.has(status))
      return { unanswered: `PayPal payment ${id ?? ''} is pending (${fields.get('PENDINGREASON') ?? ''})` };
    return declined('generic_decline', null, id);
  }
  const code = fields.get('L_ERRORCODE0') ?? '';
  const message = `${code} ${fields.get('L_LONGMESSAGE0') ?? fields.get('L_SHORTMESSAGE0') ?? ''}`;
  if (setupErrors.has(code)) throw new Error(`PayPal NVP refused the request: ${message}`);
  if (internalErrors.has(code)) return { unanswered: `PayPal NVP: ${message}` };
  if (code === alreadyPaid)
    return {
      unanswered: `PayPal already has a payment under this attempt (duplicate invoice id, NVP ${message})`,
    };
  return declined(normalizeDeclineCode(code) || 'generic_decline', null, id);
}
