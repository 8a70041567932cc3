import type { Account } from '../store/accounts.js';
import type { CliContext } from './context.js';
import { NotFoundError } from './errors.js';

/** The account with this client id, or a not-found error (exit code 1) naming it. */
export async function existingAccount(ctx: CliContext, clientId: string): Promise<Account> {
  const account = await ctx.stores.accounts.find(clientId);
  if (!account) throw new NotFoundError(`no account with clientId ${clientId}`);
  return account;
}
