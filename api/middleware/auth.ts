import type { Next } from 'koa';
import type { AccountStore } from '../../store/accounts.js';
import type { AppContext } from '../context.js';
import { unauthorized } from '../http-error.js';

/** Which keys a route accepts: the secret key only, or also the publishable key. */
export type AuthMode = 'secret' | 'secret-or-publishable';

/** Authenticates X-API-KEY (the only header that does) and attaches the account. */
export function authenticate(accounts: AccountStore, mode: AuthMode) {
  return async (ctx: AppContext, next: Next) => {
    const key = ctx.get('X-API-KEY');
    if (!key) throw unauthorized();
    const found = await accounts.authenticate(key);
    if (!found || (found.kind === 'publishable' && mode === 'secret')) throw unauthorized();
    ctx.state.account = found.account;
    ctx.state.keyKind = found.kind;
    await next();
  };
}
