/**
 * Codes of transport failures after which the request may have reached the gateway: the connection was
 * reset or closed under it, the network went away, or an answer did not come in time. Node's (`ECONNRESET`
 * is also its "socket hang up"), axios's (`ECONNABORTED`, its timeout; `ERR_BAD_RESPONSE`, an answer cut
 * off), got's and undici's.
 */
const unansweredCodes: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'ETIMEDOUT',
  'ESOCKETTIMEDOUT',
  'ECONNABORTED',
  'EPIPE',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'ENETDOWN',
  'ERR_BAD_RESPONSE',
  'ERR_STREAM_PREMATURE_CLOSE',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_ABORTED',
]);

/** How deep a chain of wrapped errors (`cause`) is followed: SDKs wrap the socket's error once or twice. */
const causeDepth = 4;

/**
 * A network error after which whether the gateway got the request is unknown: a reset or closed connection,
 * a timeout, an answer cut off, by its code on the error or on one it wraps (`cause`: fetch's `TypeError`,
 * axios), or a timeout of ours (`AbortSignal.timeout`). Not a connection that was never made (refused, a host
 * that does not resolve: `ECONNREFUSED`, `ENOTFOUND`, `EAI_AGAIN`, undici's connect timeout), which sent
 * nothing, nor an error of the request itself (Node's `ERR_INVALID_CHAR` for a header it cannot carry): those
 * are thrown, and the activity tries again with the same key.
 */
export function isNetworkError(error: unknown): boolean {
  let current = error;
  for (let depth = 0; depth < causeDepth && current instanceof Error; depth += 1) {
    if (current.name === 'TimeoutError') return true;
    const code: unknown = 'code' in current ? current.code : undefined;
    if (typeof code === 'string' && unansweredCodes.has(code)) return true;
    current = current.cause;
  }
  return false;
}

/**
 * Whether a gateway request that failed leaves the charge's fate unknown (ambiguous, looked up later): the
 * gateway failed itself (`status`, the HTTP status its SDK reports, is 500 or more) or the connection broke
 * once the request may have reached it (`isNetworkError`). Anything else is the gateway's answer, or a
 * request that never left.
 */
export function isUnanswered(error: unknown, status?: number | null): boolean {
  return (typeof status === 'number' && status >= 500) || isNetworkError(error);
}
