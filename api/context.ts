import type { ParameterizedContext } from 'koa';
import type { Logger } from '../runtime/logger.js';
import type { Account } from '../store/accounts.js';

/** Per-request state set by the middleware chain. */
export interface AppState {
  requestId: string;
  log: Logger;
  account?: Account;
  keyKind?: 'secret' | 'publishable';
  rawBody?: Buffer;
  /** Set instead of `rawBody` when the body was over this many bytes (413 once a route reads it). */
  bodyOverLimit?: number;
  /** The template of the route or hosted page that took the request (metrics label it by this). */
  route?: string;
}

export type AppContext = ParameterizedContext<AppState>;

/** The authenticated account; routes behind `auth` always have one. */
export function accountOf(ctx: AppContext): Account {
  if (!ctx.state.account) throw new Error('accountOf() used on a route without authentication');
  return ctx.state.account;
}
