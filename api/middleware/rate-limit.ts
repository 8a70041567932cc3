import type { Next } from 'koa';
import type { RateLimiter } from '../../store/rate-limits.js';
import { accountOf, type AppContext } from '../context.js';
import { tooManyRequests } from '../http-error.js';

/** Which per-key limit a route counts against. */
export type RateLimitKind = 'execute' | 'paywall' | 'webhookTest' | 'eventResend';

/** Per-minute limits that are the same for every account (execute's is the account's setting). */
const fixedPerMinute = { paywall: 120, webhookTest: 10, eventResend: 10 };

/** Counts every authenticated call of the route against its per-key, per-minute limit. */
export function rateLimit(limiter: RateLimiter, kind: RateLimitKind, clock: () => Date) {
  return async (ctx: AppContext, next: Next) => {
    const account = accountOf(ctx);
    const limit = kind === 'execute' ? account.settings.rateLimitPerMinute : fixedPerMinute[kind];
    const decision = await limiter.take(`${kind}:${account.id}:${ctx.state.keyKind}`, limit, clock());
    if (!decision.allowed) throw tooManyRequests(decision.retryAfterSeconds);
    await next();
  };
}
