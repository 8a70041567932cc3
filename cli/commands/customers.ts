import { ErasureRequest } from '../../domain/erasure.js';
import { onePositional, parseCommand, validInput } from '../args.js';
import { commandGroup, type CliContext } from '../context.js';
import { existingAccount } from '../existing-account.js';
import { jsonFlag, print } from '../output.js';

const eraseUsage = [
  'recoup customers erase <clientId> [--email <email>] [--customer-id <id>] [--token <paymentMethodToken>]…',
  '                       [--json]',
];
export const customersUsage = eraseUsage;

/**
 * Erases one customer of an account, as the merchant's POST /api/customers/erase does: the operator's way
 * to carry out a data-protection request the merchant forwarded.
 */
async function erase(argv: string[], ctx: CliContext): Promise<void> {
  const { values, positionals } = parseCommand(argv, {
    ...jsonFlag,
    email: { type: 'string' },
    'customer-id': { type: 'string' },
    token: { type: 'string', multiple: true },
  });
  const clientId = onePositional(positionals, 'clientId', eraseUsage.join(' '));
  const request = validInput('customer', ErasureRequest, {
    customerEmail: values.email,
    customerId: values['customer-id'],
    paymentMethodTokens: values.token,
  });
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

/** `recoup customers erase`: data-protection requests. */
export const customersCommand = commandGroup('customers', { erase });
