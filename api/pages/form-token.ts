import { createHmac } from 'node:crypto';
import { randomToken, safeEqual } from '../../runtime/crypto.js';

/** A rendered form stays submittable this long (the link's own expiry still applies). */
const formMaxAgeMs = 12 * 3_600_000;
const clockSkewMs = 60_000;

function mac(secret: string, issued: string, nonce: string): string {
  return createHmac('sha256', secret).update(`hosted-form|${issued}|${nonce}`).digest('base64url');
}

/**
 * CSRF token of one rendered form: `<issued>.<nonce>.<HMAC>`, keyed with the link's own server-side secret,
 * so it is bound to that link, cannot be forged without the server, and works on every API process.
 */
export function issueFormToken(linkSecret: string, now: Date): string {
  const issued = now.getTime().toString(36);
  const nonce = randomToken(12);
  return `${issued}.${nonce}.${mac(linkSecret, issued, nonce)}`;
}

/** True when `token` was issued for this link by `issueFormToken` within the last 12 hours. */
export function verifyFormToken(linkSecret: string, token: string, now: Date): boolean {
  const [issued, nonce, signature, ...rest] = token.split('.');
  if (!issued || !nonce || !signature || rest.length > 0) return false;
  if (!safeEqual(signature, mac(linkSecret, issued, nonce))) return false;
  const age = now.getTime() - parseInt(issued, 36);
  return age >= -clockSkewMs && age <= formMaxAgeMs;
}
