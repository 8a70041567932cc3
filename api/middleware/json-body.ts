import type { Next } from 'koa';
import type { AppContext } from '../context.js';
import { HttpError } from '../http-error.js';

export const maxBodyBytes = 64 * 1024;
/**
 * Billing platforms send whole invoices (every line item), and gateways batch their webhooks' items, so
 * their intakes take more.
 */
export const maxConnectorBodyBytes = 1024 * 1024;

/**
 * Reads the request body as raw bytes (kept for signature checks). A body over the limit is not kept (what
 * is left of it is read and dropped) and answers 413 only when a route asks for it (`rawBodyOf`), after
 * the key and the rate limit: a bad body never outranks a missing key or the rate limit.
 */
export async function readBody(ctx: AppContext, next: Next): Promise<void> {
  if (!['POST', 'PUT', 'PATCH'].includes(ctx.method)) {
    await next();
    return;
  }
  const platform = ctx.path.startsWith('/api/connectors/') || ctx.path.startsWith('/api/gateways/');
  const limit = platform ? maxConnectorBodyBytes : maxBodyBytes;
  if (Number(ctx.get('Content-Length') || 0) > limit) {
    ctx.state.bodyOverLimit = limit; // not read at all: Node drops it once the answer is sent
    await next();
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= limit) chunks.push(chunk);
  }
  if (size > limit) ctx.state.bodyOverLimit = limit;
  else ctx.state.rawBody = Buffer.concat(chunks);
  await next();
}

/** The raw body `readBody` kept (empty when none came), or 413 when it was over the limit. */
export function rawBodyOf(ctx: AppContext): Buffer {
  const limit = ctx.state.bodyOverLimit;
  if (limit !== undefined)
    throw new HttpError(413, { error: `Request body too large (limit ${limit / 1024} KiB)` });
  return ctx.state.rawBody ?? Buffer.alloc(0);
}

/** The body read by `readBody` as JSON, undefined when empty; a body that is not JSON → 415, malformed → 400. */
export function parseJsonBody(ctx: AppContext): unknown {
  const raw = rawBodyOf(ctx);
  if (raw.length === 0) return undefined;
  if (!ctx.is('application/json', '+json')) {
    throw new HttpError(415, { error: 'Content-Type must be application/json' });
  }
  try {
    return JSON.parse(raw.toString('utf8')) as unknown;
  } catch {
    throw new HttpError(400, { error: 'Malformed JSON body', details: { _: ['Body is not valid JSON'] } });
  }
}
