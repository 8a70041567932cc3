/**
 * A network error of the HTTP client (a reset or refused connection, a timeout): it carries a system code
 * (`ECONNRESET`, `ETIMEDOUT` …), and whether the gateway got the request is unknown.
 */
export function isNetworkError(error: unknown): error is Error & { code: string } {
  return error instanceof Error && 'code' in error && typeof error.code === 'string';
}
