import type { AppContext } from '../context.js';
import { rawBodyOf } from '../middleware/json-body.js';
import { verifyFormToken } from './form-token.js';

/**
 * The fields of a form this server rendered for this link, or null when the request cannot be trusted:
 * not URL-encoded, sent cross-site (Sec-Fetch-Site), or without a valid form token (CSRF). Parsed from the
 * raw body `readBody` kept; the JSON body parser never runs on page routes.
 */
export function trustedForm(ctx: AppContext, linkSecret: string, now: Date): URLSearchParams | null {
  if (!ctx.is('application/x-www-form-urlencoded')) return null;
  if (ctx.get('Sec-Fetch-Site') === 'cross-site') return null;
  const fields = new URLSearchParams(rawBodyOf(ctx).toString('utf8'));
  return verifyFormToken(linkSecret, fields.get('_form') ?? '', now) ? fields : null;
}
