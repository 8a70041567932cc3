import { formatMoney } from '../../domain/money.js';
import { recoveryStates, recoveryStatuses, type StopReason } from '../../domain/recovery.js';
import { CustomerEmail } from '../../domain/recovery-request.js';
import { listRecoveries } from '../../services/recovery-list.js';
import { findRecovery, statusRecord, type RecoveryRef } from '../../services/status-record.js';
import { choiceFlag, integerFlag, onePositional, parseCommand, validInput } from '../args.js';
import { commandGroup, type Run } from '../context.js';
import { existingAccount } from '../existing-account.js';
import { NotFoundError, UsageError } from '../errors.js';
import { pairs, shellLine, table } from '../format.js';
import { jsonFlag, print } from '../output.js';

const listUsage = [
  'recoup recoveries list <clientId> [--status succeeded|failed|blocked|unknown] [--state <state>]',
  '                       [--customer-email <email>] [--limit <1-100>] [--before <transactionId>] [--json]',
];
const stopUsage = [
  'recoup recoveries stop <clientId> (--transaction-id <id> | --idempotency-key <key>)',
  '                       --reason paid_elsewhere|not_owed [--json]',
];
const showUsage = [
  'recoup recoveries show <clientId> (--transaction-id <id> | --idempotency-key <key>) [--json]',
];
export const recoveriesUsage = [...listUsage, ...showUsage, ...stopUsage];

const refFlags = {
  'transaction-id': { type: 'string' },
  'idempotency-key': { type: 'string' },
} as const;

/** The recovery the flags name: exactly one of --transaction-id and --idempotency-key. */
function refOf(values: { 'transaction-id'?: string; 'idempotency-key'?: string }): RecoveryRef {
  const transactionId = values['transaction-id'];
  const idempotencyKey = values['idempotency-key'];
  if ((transactionId === undefined) === (idempotencyKey === undefined))
    throw new UsageError('give exactly one of --transaction-id and --idempotency-key');
  return transactionId !== undefined ? { transactionId } : { idempotencyKey: idempotencyKey ?? '' };
}

const reasons: readonly StopReason[] = ['paid_elsewhere', 'not_owed'];

/**
 * Stops a recovery before any further attempt, as the merchant's POST /api/recovery/stop does: the
 * operator's way for a payment made elsewhere or no longer owed (terminating the workflow in the Temporal
 * UI would leave its record queued and the customer past due).
 */
function stop(argv: string[]): Run {
  const { values, positionals } = parseCommand(argv, {
    ...jsonFlag,
    ...refFlags,
    reason: { type: 'string' },
  });
  const clientId = onePositional(positionals, 'clientId', stopUsage.join(' '));
  const ref = refOf(values);
  // Required: a missing --reason is refused like a wrong one.
  const reason = choiceFlag('--reason', values.reason ?? '', reasons);
  return async (ctx) => {
    await existingAccount(ctx, clientId);
    // Loaded here: the other commands never need the Temporal SDK.
    const { stopRecovery } = await import('../../services/recovery-stop.js');
    const outcome = await stopRecovery(
      { stores: ctx.stores, temporal: await ctx.temporal(), queues: ctx.queues },
      clientId,
      ref,
      reason,
    );
    if (outcome.kind === 'not_found')
      throw new NotFoundError(`no recovery ${JSON.stringify(ref)} of ${clientId}`);
    const { doc } = outcome;
    // Only a payment Recoup collected: one paid elsewhere is stopped, as often as it is asked.
    if (outcome.kind === 'ended')
      throw new Error(
        `the recovery ${doc.publicId} has ended (${doc.state}); its outcome stands: Recoup collected the payment`,
      );
    print(ctx, values.json, { transactionId: doc.publicId, outcome: outcome.kind, state: doc.state }, () => [
      outcome.kind === 'stopped'
        ? `Stopped the recovery ${doc.publicId}: ${doc.state}.`
        : `The recovery ${doc.publicId} is ${doc.state}: it stops right after the attempt under way.`,
    ]);
  };
}

/**
 * One recovery's status record with every charge, as the merchant's status lookup answers, and the workflow
 * to open in the Temporal UI: the operator's view when a merchant asks about one payment.
 */
function show(argv: string[]): Run {
  const { values, positionals } = parseCommand(argv, { ...jsonFlag, ...refFlags });
  const clientId = onePositional(positionals, 'clientId', showUsage.join(' '));
  const ref = refOf(values);
  return async (ctx) => {
    await existingAccount(ctx, clientId);
    const doc = await findRecovery(ctx.stores, clientId, ref);
    if (!doc) throw new NotFoundError(`no recovery ${JSON.stringify(ref)} of ${clientId}`);
    const record = statusRecord(doc);
    const { attempts, ...fields } = record;
    print(ctx, values.json, record, () => [
      ...pairs([
        // The amount as `list` prints it ($49.99), not in minor units.
        ...Object.entries(fields).map(([k, v]): [string, string] => [
          k,
          k === 'amount' ? formatMoney(doc) : String(v),
        ]),
        ['createdAt', doc.createdAt.toISOString()],
        ['idempotencyKey', doc.idempotencyKey ?? '-'],
        ['workflowId', doc.workflowId],
      ]),
      '',
      ...(attempts.length === 0
        ? ['No charges.']
        : table(
            ['#', 'AT', 'GATEWAY', 'ROLE', 'OUTCOME', 'DECLINE CODE', 'GATEWAY TRANSACTION ID'],
            attempts.map((a) => [
              String(a.attempt),
              a.at,
              a.gateway,
              a.role,
              a.outcome,
              a.declineCode ?? '-',
              a.gatewayTransactionId ?? '-',
            ]),
          )),
    ]);
  };
}

/** The account's recoveries, newest first, as the merchant's GET /api/recoveries shows them. */
function list(argv: string[]): Run {
  const { values, positionals } = parseCommand(argv, {
    ...jsonFlag,
    status: { type: 'string' },
    state: { type: 'string' },
    limit: { type: 'string', default: '20' },
    before: { type: 'string' },
    'customer-email': { type: 'string' },
  });
  const clientId = onePositional(positionals, 'clientId', listUsage.join(' '));
  const email = values['customer-email'];
  const customerEmail =
    email === undefined ? undefined : validInput('--customer-email', CustomerEmail, email);
  const status = choiceFlag('--status', values.status, recoveryStatuses);
  const state = choiceFlag('--state', values.state, recoveryStates);
  const limit = integerFlag('--limit', values.limit, 1, 100);
  return async (ctx) => {
    await existingAccount(ctx, clientId);
    const page = await listRecoveries(ctx.stores, clientId, {
      ...(status ? { status } : {}),
      ...(state ? { state } : {}),
      ...(values.before ? { before: values.before } : {}),
      ...(customerEmail ? { customerEmail } : {}),
      limit,
    });
    if ('unknownCursor' in page) throw new NotFoundError(`no recovery ${page.unknownCursor} of ${clientId}`);
    const result = { data: page.docs.map(statusRecord), hasMore: page.hasMore };
    print(ctx, values.json, result, () => [
      ...(page.docs.length === 0
        ? ['No recoveries match.']
        : table(
            ['TRANSACTION ID', 'CREATED', 'STATE', 'AMOUNT', 'ATTEMPTS', 'NEXT ATTEMPT', 'LAST DECLINE'],
            page.docs.map((doc) => [
              doc.publicId,
              doc.createdAt.toISOString(),
              doc.state,
              formatMoney(doc),
              String(statusRecord(doc).attemptCount),
              doc.state === 'queued' ? (doc.nextAttemptAt?.toISOString() ?? '-') : '-',
              doc.lastDeclineCode ?? '-',
            ]),
          )),
      ...(page.hasMore
        ? [
            `More: ${shellLine([
              'recoup',
              'recoveries',
              'list',
              clientId,
              ...(status ? ['--status', status] : []),
              ...(state ? ['--state', state] : []),
              ...(customerEmail ? ['--customer-email', customerEmail] : []),
              ...(values.limit !== '20' ? ['--limit', String(limit)] : []),
              '--before',
              page.docs.at(-1)?.publicId ?? '',
            ])}`,
          ]
        : []),
    ]);
  };
}

/** `recoup recoveries list|show|stop`: what an operator does to recoveries besides watching them in the Temporal UI. */
export const recoveriesCommand = commandGroup('recoveries', { list, show, stop });
