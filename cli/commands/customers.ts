import { CustomerIdentity } from '../../domain/customer-identity.js';
import { exportCustomer } from '../../services/customer-export.js';
import { onePositional, parseCommand, validInput } from '../args.js';
import { commandGroup, type CliContext } from '../context.js';
import { existingAccount } from '../existing-account.js';
import { jsonFlag, print } from '../output.js';

const who = '[--email <email>] [--customer-id <id>] [--token <paymentMethodToken>]…';
const exportUsage = [`recoup customers export <clientId> ${who}`];
const eraseUsage = [`recoup customers erase <clientId> ${who} [--json]`];
export const customersUsage = [...exportUsage, ...eraseUsage];

const identityFlags = {
  email: { type: 'string' },
  'customer-id': { type: 'string' },
  token: { type: 'string', multiple: true },
} as const;

/** The customer the flags name, checked with the API's own schema. */
function identityOf(values: { email?: string; 'customer-id'?: string; token?: string[] }): CustomerIdentity {
  return validInput('customer', CustomerIdentity, {
    customerEmail: values.email,
    customerId: values['customer-id'],
    paymentMethodTokens: values.token,
  });
}

/**
 * Prints everything Recoup holds about one customer of an account as JSON, exactly as the merchant's
 * POST /api/customers/export answers: the operator's way to answer an access request the merchant forwarded.
 */
async function exportData(argv: string[], ctx: CliContext): Promise<void> {
  const { values, positionals } = parseCommand(argv, identityFlags);
  const clientId = onePositional(positionals, 'clientId', exportUsage.join(' '));
  const identity = identityOf(values);
  await existingAccount(ctx, clientId);
  ctx.out(JSON.stringify(await exportCustomer(ctx.stores, clientId, identity, ctx.clock()), null, 2));
}

/**
 * Erases one customer of an account, as the merchant's POST /api/customers/erase does: the operator's way
 * to carry out a data-protection request the merchant forwarded.
 */
async function erase(argv: string[], ctx: CliContext): Promise<void> {
  const { values, positionals } = parseCommand(argv, { ...jsonFlag, ...identityFlags });
  const clientId = onePositional(positionals, 'clientId', eraseUsage.join(' '));
  const request = identityOf(values);
  await existingAccount(ctx, clientId);
  // Loaded here: the other commands never need the Temporal SDK.
  const { eraseCustomer } = await import('../../services/customer-erasure.js');
  const outcome = await eraseCustomer(
    { stores: ctx.stores, temporal: await ctx.temporal(), clock: ctx.clock },
    clientId,
    request,
  );
  if (outcome.kind === 'in_flight')
    throw new Error(
      `the customer has work under way, nothing was changed: ${[
        ...outcome.transactionIds.map((id) => `recovery ${id}`),
        ...outcome.eventIds.map((id) => `delivery of event ${id}`),
      ].join(
        ', ',
      )}; stop the recoveries (recoup recoveries stop … --reason not_owed) or wait, then erase again`,
    );
  const { kind: _kind, erasedAt, ...counts } = outcome;
  print(ctx, values.json, { erased: true, erasedAt: erasedAt.toISOString(), ...counts }, () => [
    `Erased the customer at ${erasedAt.toISOString()}: ${counts.recoveries} recoveries and ${counts.pulses} pulses pseudonymised; ${counts.events} webhook events, ${counts.links} hosted links and ${counts.workflowHistories} workflow histories deleted.`,
  ]);
}

/** `recoup customers export|erase`: data-protection requests. */
export const customersCommand = commandGroup('customers', { export: exportData, erase });
