import { createHmac, timingSafeEqual } from 'node:crypto';

/** The headers every webhook POST carries besides `Content-Type: application/json`. */
export const webhookHeaders = {
  signature: 'X-Service-Signature',
  eventId: 'X-Service-Event-Id',
  attempt: 'X-Service-Delivery-Attempt',
} as const;

const hexSha256 = /^[0-9a-f]{64}$/;

/**
 * The `X-Service-Signature` value for a body: lower-case hex HMAC-SHA256 of the exact body bytes, keyed
 * with the account's `whsec_` signing secret (the whole string, prefix included).
 */
export function signWebhook(rawBody: Buffer | string, secret: string): string {
  return createHmac('sha256', secret).update(rawBody).digest('hex');
}

/**
 * For receivers: true when `signatureHeader` is the signature of `rawBody` under `secret`. Hash the bytes
 * exactly as received (never a re-serialised copy). Compares in constant time; false on any malformed
 * input (missing header, wrong length, not lower-case hex, empty secret).
 */
export function verifyWebhookSignature(
  rawBody: Buffer | string,
  signatureHeader: string | undefined,
  secret: string,
): boolean {
  if (typeof signatureHeader !== 'string' || !hexSha256.test(signatureHeader)) return false;
  if (typeof secret !== 'string' || secret.length === 0) return false;
  if (typeof rawBody !== 'string' && !Buffer.isBuffer(rawBody)) return false;
  const expected = Buffer.from(signWebhook(rawBody, secret), 'hex');
  return timingSafeEqual(expected, Buffer.from(signatureHeader, 'hex'));
}
