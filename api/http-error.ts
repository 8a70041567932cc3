/**
 * An error whose status and JSON body are safe to send to the client as they are. `cause`, never sent, is
 * what the operator's log shows for a 5xx (the failure behind "the engine is unavailable").
 */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: { error: string } & Record<string, unknown>,
    readonly headers: Record<string, string> = {},
    cause?: unknown,
  ) {
    super(body.error, cause === undefined ? undefined : { cause });
    this.name = 'HttpError';
  }
}

export const badRequest = (details: Record<string, string[]>, error = 'Validation failed') =>
  new HttpError(400, { error, details });
export const unauthorized = () => new HttpError(401, { error: 'Missing or invalid API key' });
export const forbidden = (body: { error: string } & Record<string, unknown>) => new HttpError(403, body);
export const notFound = (error = 'Not found') => new HttpError(404, { error });
export const conflict = (body: { error: string } & Record<string, unknown>) => new HttpError(409, body);
export const tooManyRequests = (retryAfterSeconds: number) =>
  new HttpError(
    429,
    { error: 'Rate limit exceeded', retryAfter: String(retryAfterSeconds) },
    { 'Retry-After': String(retryAfterSeconds) },
  );
