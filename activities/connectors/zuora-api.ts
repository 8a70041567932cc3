import { z } from 'zod';
import type { ZuoraConfig } from './zuora.js';

// Zuora's v1 errors: `{ success: false, reasons: [{ code, message }] }`, sometimes with HTTP 200
// (developer.zuora.com "Error codes", "Error handling"); CRUD calls use `{ Success, Errors: [{ Code, Message }] }`.
const ApiBody = z
  .object({
    success: z.boolean().optional(),
    Success: z.boolean().optional(),
    reasons: z.array(z.object({ code: z.unknown(), message: z.string() })).optional(),
    Errors: z.array(z.object({ Code: z.unknown(), Message: z.string() })).optional(),
  })
  .loose();
const Token = z.object({ access_token: z.string().min(1), expires_in: z.number().optional() });

/** A Zuora answer that is a failure, with its HTTP status (401: the bearer token was refused). */
class ZuoraError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** One Zuora REST call: the body, or null on 404; any other failure throws (the activity retries). */
async function call(base: string, path: string, init: RequestInit): Promise<unknown> {
  const res = await fetch(`${base.replace(/\/$/, '')}${path}`, {
    ...init,
    signal: AbortSignal.timeout(20_000),
  });
  const raw = await res.text();
  let body: unknown = null;
  try {
    body = raw ? JSON.parse(raw) : null;
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
  }
  if (res.status === 404) return null;
  const parsed = ApiBody.safeParse(body);
  const failed = parsed.success && (parsed.data.success === false || parsed.data.Success === false);
  if (res.ok && !failed) return body;
  const reasons = parsed.success
    ? [
        ...(parsed.data.reasons ?? []).map((r) => `${String(r.code)} ${r.message}`),
        ...(parsed.data.Errors ?? []).map((r) => `${String(r.Code)} ${r.Message}`),
      ]
    : [];
  throw new ZuoraError(
    res.status,
    `Zuora answered ${res.status} to ${init.method ?? 'GET'} ${path}: ${reasons.join('; ')}`,
  );
}

// Zuora asks clients to reuse a token until it expires rather than mint many ("Create an OAuth token").
const tokens = new Map<string, { token: string; until: number }>();

const tokenKey = (config: ZuoraConfig) => `${config.apiBase}|${config.clientId}`;

/** A bearer token of the connector's OAuth client (POST /oauth/token, client credentials). */
async function bearer(config: ZuoraConfig): Promise<string> {
  const key = tokenKey(config);
  const cached = tokens.get(key);
  if (cached && cached.until > Date.now()) return cached.token;
  const body = await call(config.apiBase, '/oauth/token', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      client_id: config.clientId,
      client_secret: config.clientSecret,
      grant_type: 'client_credentials',
    }),
  });
  const { access_token: token, expires_in: ttl = 3600 } = Token.parse(body);
  // A minute's margin, so a token never expires between this check and Zuora's.
  tokens.set(key, { token, until: Date.now() + Math.max(ttl - 60, 0) * 1000 });
  return token;
}

/** The call with a bearer token of the connector's OAuth client. */
async function callAuthorized(config: ZuoraConfig, path: string, init: RequestInit): Promise<unknown> {
  const auth = { authorization: `Bearer ${await bearer(config)}`, accept: 'application/json' };
  return call(config.apiBase, path, { ...init, headers: { ...auth, ...init.headers } });
}

/**
 * One call of the Zuora REST API as the connector's OAuth client. A cached token Zuora refuses (401: revoked,
 * the client's secret rotated, or expired early) is dropped and the call made once more with a new one; a
 * 401 changes nothing at Zuora, so a POST sent again (with its idempotency key) is not made twice.
 */
export async function api(config: ZuoraConfig, path: string, init: RequestInit = {}): Promise<unknown> {
  try {
    return await callAuthorized(config, path, init);
  } catch (error) {
    if (!(error instanceof ZuoraError) || error.status !== 401) throw error;
    tokens.delete(tokenKey(config));
    return callAuthorized(config, path, init);
  }
}
