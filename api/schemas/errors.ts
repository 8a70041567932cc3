import { z } from 'zod';

/** Every error body: a string `error`, and more fields where a route says so. */
export const ErrorBody = z.object({ error: z.string() }).meta({ id: 'Error' });

/** 400: which fields were refused, and why. */
export const ValidationError = z
  .object({ error: z.string(), details: z.record(z.string(), z.array(z.string())) })
  .meta({ id: 'ValidationError' });

/** 429: when to ask again (also in the Retry-After header). */
export const RateLimitBody = z.object({ error: z.string(), retryAfter: z.string().describe('Seconds') });

/** 500: an unexpected failure; the request id finds it in the logs (no detail is sent). */
export const InternalErrorBody = z
  .object({ error: z.literal('Internal error'), requestId: z.string() })
  .meta({ id: 'InternalError' });
