import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Next } from 'koa';
import type { AppContext } from '../context.js';
import { HttpError } from '../http-error.js';

const KiB = 1024;
const MiB = 1024 * KiB;

export const maxBodyBytes = 64 * KiB;
/**
 * Billing platforms send whole invoices (every line item), and gateways batch their webhooks' items, so
 * their intakes take more.
 */
export const maxConnectorBodyBytes = MiB;

/** The most a request to this path may send: a request's path, or a route's template (the OpenAPI document). */
export function bodyLimitOf(path: string): number {
  const platform = path.startsWith('/api/connectors/') || path.startsWith('/api/gateways/');
  return platform ? maxConnectorBodyBytes : maxBodyBytes;
}

/** A size as the documents name it: 64 KiB, 1 MiB. */
export const sizeText = (bytes: number): string =>
  bytes % MiB === 0 ? `${bytes / MiB} MiB` : `${bytes / KiB} KiB`;

/** The body's bytes, or null once they pass `limit`: reading stops there, and the rest is left unread. */
function readUpTo(req: IncomingMessage, limit: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (finish: () => void) => {
      req.off('data', onData).off('end', onEnd).off('error', onError);
      finish();
    };
    function onData(chunk: Buffer) {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
      else {
        req.pause();
        settle(() => resolve(null));
      }
    }
    const onEnd = () => settle(() => resolve(Buffer.concat(chunks)));
    const onError = (error: Error) => settle(() => reject(error));
    req.on('data', onData).on('end', onEnd).on('error', onError);
  });
}

/** How long a caller whose body was left unread has to read its answer before the connection is dropped. */
const hangUpAfterMs = 2_000;

/**
 * Closes a connection whose request body was left unread, once its answer is written: this side ends at once
 * (the caller reads the answer, then the end) and, still reading nothing, drops the connection after a grace.
 * Not `Connection: close`: Node then drops it the moment the answer is flushed, and a caller still sending
 * meets a reset before it has read the answer.
 */
function hangUp(socket: Socket): void {
  socket.end();
  setTimeout(() => socket.destroy(), hangUpAfterMs).unref();
}

/**
 * Reads the request body as raw bytes (kept for signature checks), never past its limit: a body over it is
 * read no further, and the connection is closed once the answer is written, so no caller makes any request
 * read an endless body, routed or not, keyed or not. It answers 413 only when a route asks for it
 * (`rawBodyOf`), after the key and the rate limit: a bad body never outranks a missing key or the rate limit.
 */
export async function readBody(ctx: AppContext, next: Next): Promise<void> {
  const limit = bodyLimitOf(ctx.path);
  // Whatever the method (a GET or a DELETE may send a body too), and read to the limit even when
  // Content-Length says it is over: a body nobody read, Node reads to its end.
  const body = await readUpTo(ctx.req, limit);
  if (body) ctx.state.rawBody = body;
  else {
    ctx.state.bodyOverLimit = limit;
    ctx.res.once('finish', () => hangUp(ctx.req.socket));
  }
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
