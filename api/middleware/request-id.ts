import { randomUUID } from 'node:crypto';
import type { Next } from 'koa';
import type { Logger } from '../../runtime/logger.js';
import type { AppContext } from '../context.js';

const acceptable = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * Gives every request an id (the caller's X-Request-Id when sane), echoes it, and logs the request.
 *
 * The log names the route template (`/update-card/:token`), never the raw path: a hosted page's path holds
 * its link's token, which opens the page for anyone who reads it. A request no route took logs no path at
 * all (`unmatched`, as metrics label it): a mistyped link (`/update_card/<token>`) still carries a live token.
 */
export function requestId(log: Logger) {
  return async (ctx: AppContext, next: Next) => {
    const incoming = ctx.get('X-Request-Id');
    const id = acceptable.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = id;
    ctx.state.log = log.child({ requestId: id });
    ctx.set('X-Request-Id', id);
    const started = performance.now();
    try {
      await next();
    } finally {
      ctx.state.log.info(
        {
          method: ctx.method,
          route: ctx.state.route ?? 'unmatched',
          status: ctx.status,
          ms: Math.round(performance.now() - started),
        },
        'request',
      );
    }
  };
}
