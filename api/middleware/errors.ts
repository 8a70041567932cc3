import type { Next } from 'koa';
import type { AppContext } from '../context.js';
import { HttpError } from '../http-error.js';

function exposedStatus(error: unknown): number | null {
  if (typeof error !== 'object' || error === null) return null;
  const { status, expose } = error as { status?: unknown; expose?: unknown };
  return typeof status === 'number' && status >= 400 && status < 500 && expose === true ? status : null;
}

/**
 * Renders every error as JSON: HttpErrors as they are (a 5xx's cause logged), framework 4xx by message,
 * anything else as a bare 500 (logged).
 */
export async function errorHandler(ctx: AppContext, next: Next): Promise<void> {
  try {
    await next();
    if (ctx.status === 404 && ctx.body === undefined) {
      ctx.status = 404;
      ctx.body = { error: 'Not found' };
    }
    if (ctx.status === 405 && ctx.body === undefined) {
      ctx.status = 405;
      ctx.body = { error: 'Method Not Allowed' };
    }
  } catch (error) {
    if (error instanceof HttpError) {
      if (error.status >= 500 && error.cause !== undefined)
        ctx.state.log.warn({ err: error.cause, status: error.status }, error.body.error);
      ctx.status = error.status;
      ctx.set(error.headers);
      ctx.body = error.body;
      return;
    }
    const status = exposedStatus(error);
    if (status !== null) {
      ctx.status = status;
      ctx.body = { error: (error as Error).message };
      return;
    }
    ctx.state.log.error({ err: error }, 'unhandled error');
    ctx.status = 500;
    ctx.body = { error: 'Internal error', requestId: ctx.state.requestId };
  }
}
