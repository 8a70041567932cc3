import { createHash, timingSafeEqual } from 'node:crypto';
import type { VerifiedEvent } from './types.js';

/** Constant-time equality of a given secret with the expected one; a length mismatch fails at once. */
function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

/** A basic-auth pair against the configured one: both parts compared, so timing tells nothing of which failed. */
export function samePair(
  given: { username: string; password: string },
  expected: { username: string; password: string },
): boolean {
  const userMatches = sameSecret(given.username, expected.username);
  const passwordMatches = sameSecret(given.password, expected.password);
  return userMatches && passwordMatches;
}

/**
 * RFC 7617 credentials in an `Authorization` header against the configured pair (Zuora's callouts with
 * "Enable Preemptive Authentication" on, Adyen's webhooks with a user name and password set).
 */
export function basicAuthMatches(
  header: string | undefined,
  expected: { username: string; password: string },
): boolean {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  const decoded = match ? Buffer.from(match[1]!, 'base64').toString('utf8') : '';
  const colon = decoded.indexOf(':');
  const user = colon < 0 ? '' : decoded.slice(0, colon);
  const pass = colon < 0 ? '' : decoded.slice(colon + 1);
  return samePair({ username: user, password: pass }, expected) && colon >= 0;
}

/** The body as JSON, or undefined when it is not JSON (an authenticated platform may still send that). */
export function jsonOf(rawBody: Buffer): unknown {
  try {
    return JSON.parse(rawBody.toString('utf8')) as unknown;
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    return undefined;
  }
}

/** An id for a body that carries none: the hash of its bytes, which a platform's resend repeats. */
export function bodyDigestId(rawBody: Buffer): string {
  return `body-sha256:${createHash('sha256').update(rawBody).digest('hex')}`;
}

/** The type of an authenticated body that is no event of its platform (see `notAnEventIn`). */
export const notAnEvent = 'not_an_event';

/**
 * An authenticated body that is no event of its platform (not JSON, not in the platform's shape): the
 * merchant's own platform sent it, so it is answered 200 and ignored, since an error would only bring the
 * same bytes back until the platform gave up. Their hash stands in for the event id, so resends are duplicates.
 */
export function notAnEventIn(rawBody: Buffer): VerifiedEvent {
  return { id: bodyDigestId(rawBody), type: notAnEvent, payload: null };
}
