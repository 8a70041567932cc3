import type { Account } from '../store/accounts.js';
import { finishClosing } from './account-view.js';
import type { CliContext } from './context.js';
import { NotFoundError } from './errors.js';

/** The not-found error (exit code 1) for a client id no account has. */
export function noAccount(clientId: string): NotFoundError {
  return new NotFoundError(`no account with clientId ${clientId}`);
}

/** The account with this client id, or a not-found error (exit code 1) naming it. */
export async function existingAccount(ctx: CliContext, clientId: string): Promise<Account> {
  const account = await ctx.stores.accounts.find(clientId);
  if (!account) throw noAccount(clientId);
  return account;
}

/**
 * Refuses (exit code 1) to change an account being closed: `recoup accounts close` revoked its keys and
 * turned its connectors off, and a new key, connector or delivery would open it again half way; the closure
 * itself is what has to be finished.
 */
export function refuseIfClosing(account: Account): void {
  if (!account.closingAt) return;
  throw new Error(
    `${account.id} is being closed (since ${account.closingAt.toISOString()}) and takes no changes; finish closing it: ${finishClosing(account.id)}`,
  );
}

/** The account with this client id, to be changed: a not-found error, or a refusal while it is being closed. */
export async function accountToChange(ctx: CliContext, clientId: string): Promise<Account> {
  const account = await existingAccount(ctx, clientId);
  refuseIfClosing(account);
  return account;
}
