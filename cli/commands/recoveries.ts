import type { StopReason } from '../../domain/recovery.js';
import { onePositional, parseCommand } from '../args.js';
import { commandGroup, type CliContext } from '../context.js';
import { existingAccount } from '../existing-account.js';
import { NotFoundError, UsageError } from '../errors.js';
import { jsonFlag, print } from '../output.js';

export const recoveriesUsage = [
  'recoup recoveries stop <clientId> (--transaction-id <id> | --idempotency-key <key>)',
  '                       --reason paid_elsewhere|not_owed [--json]',
];

const reasons: readonly StopReason[] = ['paid_elsewhere', 'not_owed'];

/**
 * Stops a recovery before any further attempt, as the merchant's POST /api/recovery/stop does: the
 * operator's way for a payment made elsewhere or no longer owed (terminating the workflow in the Temporal
 * UI would leave its record queued and the customer past due).
 */
async function stop(argv: string[], ctx: CliContext): Promise<void> {
  const { values, positionals } = parseCommand(argv, {
    ...jsonFlag,
    'transaction-id': { type: 'string' },
    'idempotency-key': { type: 'string' },
    reason: { type: 'string' },
  });
  const clientId = onePositional(positionals, 'clientId', recoveriesUsage.join(' '));
  const transactionId = values['transaction-id'];
  const idempotencyKey = values['idempotency-key'];
  if ((transactionId === undefined) === (idempotencyKey === undefined))
    throw new UsageError('give exactly one of --transaction-id and --idempotency-key');
  const reason = reasons.find((r) => r === values.reason);
  if (!reason) throw new UsageError(`--reason must be one of ${reasons.join(', ')}`);
  await existingAccount(ctx, clientId);
  // Loaded here: the other commands never need the Temporal SDK.
  const { stopRecovery } = await import('../../services/recovery-stop.js');
  const ref = transactionId !== undefined ? { transactionId } : { idempotencyKey: idempotencyKey ?? '' };
  const outcome = await stopRecovery(
    { stores: ctx.stores, temporal: await ctx.temporal() },
    clientId,
    ref,
    reason,
  );
  if (outcome.kind === 'not_found')
    throw new NotFoundError(`no recovery ${JSON.stringify(ref)} of ${clientId}`);
  const { doc } = outcome;
  if (outcome.kind === 'ended')
    throw new Error(`the recovery ${doc.publicId} has ended (${doc.state}); its outcome stands`);
  print(ctx, values.json, { transactionId: doc.publicId, outcome: outcome.kind, state: doc.state }, () => [
    outcome.kind === 'stopped'
      ? `Stopped the recovery ${doc.publicId}: ${doc.state}.`
      : `The recovery ${doc.publicId} is ${doc.state}: it stops right after the attempt under way.`,
  ]);
}

/** `recoup recoveries stop`: what an operator does to a recovery besides watching it in the Temporal UI. */
export const recoveriesCommand = commandGroup('recoveries', { stop });
