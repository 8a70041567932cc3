import { CustomerIdentity } from '../../domain/customer-identity.js';
import { exportCustomer } from '../../services/customer-export.js';
import { FootprintTooWideError, maxFootprintRounds } from '../../services/customer-footprint.js';
import { onePositional, parseCommand, validInput } from '../args.js';
import { commandGroup, type Run } from '../context.js';
import { UsageError } from '../errors.js';
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

/** The flag of each field of the API's customer identity. */
const identityFlagOf = {
  customerEmail: '--email',
  customerId: '--customer-id',
  paymentMethodTokens: '--token',
};

/** The customer the flags name, checked with the API's own schema; errors name the flags. */
function identityOf(values: { email?: string; 'customer-id'?: string; token?: string[] }): CustomerIdentity {
  // The schema's own message for no identity names the API's fields; blank values name no one either.
  if (![values.email, values['customer-id'], ...(values.token ?? [])].some((v) => v?.trim()))
    throw new UsageError('name the customer by --email, --customer-id or --token');
  return validInput(
    'customer',
    CustomerIdentity,
    { customerEmail: values.email, customerId: values['customer-id'], paymentMethodTokens: values.token },
    identityFlagOf,
  );
}

/** Runs an export or erasure; a footprint too wide to settle is refused (exit 1) in the operator's words. */
async function refusingWideFootprints<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof FootprintTooWideError)) throw error;
    throw new Error(
      `the customer's identifiers tie together records of more than one customer (cards and email addresses shared with others still led to new records after ${maxFootprintRounds} lookups), so Recoup refuses to guess which are theirs; nothing was read out or changed: look at the account's recoveries of those cards and addresses (recoup recoveries list) to tell the customers apart`,
      { cause: error },
    );
  }
}

/**
 * Prints everything Recoup holds about one customer of an account as JSON, exactly as the merchant's
 * POST /api/customers/export answers: the operator's way to answer an access request the merchant forwarded.
 */
function exportData(argv: string[]): Run {
  const { values, positionals } = parseCommand(argv, identityFlags);
  const clientId = onePositional(positionals, 'clientId', exportUsage.join(' '));
  const identity = identityOf(values);
  return async (ctx) => {
    await existingAccount(ctx, clientId);
    const exported = await refusingWideFootprints(() =>
      exportCustomer(ctx.stores, clientId, identity, ctx.clock()),
    );
    ctx.out(JSON.stringify(exported, null, 2));
  };
}

/**
 * Erases one customer of an account, as the merchant's POST /api/customers/erase does: the operator's way
 * to carry out a data-protection request the merchant forwarded.
 */
function erase(argv: string[]): Run {
  const { values, positionals } = parseCommand(argv, { ...jsonFlag, ...identityFlags });
  const clientId = onePositional(positionals, 'clientId', eraseUsage.join(' '));
  const request = identityOf(values);
  return async (ctx) => {
    await existingAccount(ctx, clientId);
    // Loaded here: the other commands never need the Temporal SDK.
    const { eraseCustomer } = await import('../../services/customer-erasure.js');
    const temporal = await ctx.temporal();
    const outcome = await refusingWideFootprints(() =>
      eraseCustomer({ stores: ctx.stores, temporal, clock: ctx.clock }, clientId, request),
    );
    if (outcome.kind === 'in_flight')
      throw new Error(
        `the customer has work under way, ${outcome.partly ? 'admitted while the erasure ran (what it found before is erased)' : 'nothing was changed'}: ${[
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
  };
}

/** `recoup customers export|erase`: data-protection requests. */
export const customersCommand = commandGroup('customers', { export: exportData, erase });
