import { ResendFilter } from '../../domain/resend-filter.js';
import { deliveryStatuses } from '../../domain/webhooks.js';
import { resendBatch, type ResendBatch } from '../../services/event-resend.js';
import { createEventPublisher, EventNotFoundError } from '../../services/events.js';
import { sendTestEvent, testEventWaitMs } from '../../services/webhook-test.js';
import type { EventRecord } from '../../store/events.js';
import { choiceFlag, integerFlag, onePositional, parseCommand, validInput } from '../args.js';
import { commandGroup, type CliContext } from '../context.js';
import { existingAccount } from '../existing-account.js';
import { jsonFlag, print } from '../output.js';
import { NotFoundError, UsageError } from '../errors.js';
import { eventJson, eventLines, eventTable } from '../webhook-view.js';

const listUsage = [
  'recoup webhooks list [--account <clientId>] [--status pending|delivered|failed|suppressed|undeliverable]',
  '                     [--limit <n>] [--json]',
];
const showUsage = 'recoup webhooks show <eventId> [--json]';
const resendUsage = 'recoup webhooks resend <eventId> [--json]';
const testUsage = 'recoup webhooks test <clientId> [--json]';
const resendAllUsage = [
  'recoup webhooks resend-all <clientId> [--status failed|delivered|suppressed|undeliverable] [--type <event>]',
  '                           [--from <ISO date-time>] [--to <ISO date-time>] [--json]',
];
export const webhooksUsage = [...listUsage, showUsage, resendUsage, testUsage, ...resendAllUsage];

const json = jsonFlag;

async function existing(ctx: CliContext, eventId: string): Promise<EventRecord> {
  const record = await ctx.stores.events.get(eventId);
  if (!record) throw new NotFoundError(`no event with eventId ${eventId}`);
  return record;
}

async function publisherOf(ctx: CliContext) {
  return createEventPublisher({
    stores: ctx.stores,
    temporal: await ctx.temporal(),
    queues: ctx.queues,
    clock: ctx.clock,
  });
}

async function list(argv: string[], ctx: CliContext): Promise<void> {
  const { values, positionals } = parseCommand(argv, {
    ...json,
    account: { type: 'string' },
    status: { type: 'string' },
    limit: { type: 'string', default: '50' },
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const records = await ctx.stores.events.list({
    accountId: values.account,
    status: choiceFlag('--status', values.status, deliveryStatuses),
    limit: integerFlag('--limit', values.limit, 1, 1000),
  });
  print(ctx, values.json, records.map(eventJson), () =>
    records.length === 0 ? ['No events.'] : eventTable(records),
  );
}

async function show(argv: string[], ctx: CliContext): Promise<void> {
  const { values, positionals } = parseCommand(argv, json);
  const record = await existing(ctx, onePositional(positionals, 'eventId', showUsage));
  print(ctx, values.json, eventJson(record), () => eventLines(record));
}

async function resend(argv: string[], ctx: CliContext): Promise<void> {
  const { values, positionals } = parseCommand(argv, json);
  const eventId = onePositional(positionals, 'eventId', resendUsage);
  await existing(ctx, eventId);
  const events = await publisherOf(ctx);
  const sent = await events.resend(eventId).catch((error: unknown) => {
    throw error instanceof EventNotFoundError ? new NotFoundError(error.message) : error;
  });
  print(ctx, values.json, sent, () => [
    `Resending event ${eventId} as delivery ${sent.deliveryId} (workflow ${sent.workflowId}).`,
    `Follow it with: recoup webhooks show ${eventId}`,
  ]);
}

/** Batches of a bulk resend: the API's largest. */
const resendBatchSize = 100;

/**
 * Sends the account's selected events again (by default every failed one), oldest first, batch after batch
 * as a merchant's POST /api/events/resend does, until none is left: after an endpoint's long outage.
 */
async function resendAll(argv: string[], ctx: CliContext): Promise<void> {
  const { values, positionals } = parseCommand(argv, {
    ...json,
    status: { type: 'string' },
    type: { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
  });
  const clientId = onePositional(positionals, 'clientId', resendAllUsage.join(' '));
  const filter = validInput('selection', ResendFilter, {
    status: values.status,
    type: values.type,
    from: values.from,
    to: values.to,
  });
  await existingAccount(ctx, clientId);
  const deps = { stores: ctx.stores, events: await publisherOf(ctx) };
  const done: Omit<ResendBatch, 'last' | 'hasMore'> = { resent: [], skipped: [] };
  let after: EventRecord | null = null;
  for (;;) {
    const batch = await resendBatch(deps, clientId, {
      ...filter,
      after: after ?? undefined,
      limit: resendBatchSize,
    });
    done.resent.push(...batch.resent);
    done.skipped.push(...batch.skipped);
    if (!batch.hasMore || !batch.last) break;
    after = await existing(ctx, batch.last);
  }
  print(ctx, values.json, done, () => [
    `Resent ${done.resent.length} ${filter.status} event(s) of ${clientId}, each as a new delivery.`,
    ...done.skipped.map((s) => `Skipped ${s.eventId}: ${s.reason}`),
    ...(done.resent.length > 0
      ? [`Follow them with: recoup webhooks list --account ${clientId} --status pending`]
      : []),
  ]);
}

/**
 * Sends the account a signed webhook.test event and prints it with its first attempt; exits 1 unless the
 * endpoint acknowledged it: how an operator checks a merchant's endpoint, e.g. right after onboarding.
 */
async function test(argv: string[], ctx: CliContext): Promise<void> {
  const { values, positionals } = parseCommand(argv, json);
  const clientId = onePositional(positionals, 'clientId', testUsage);
  await existingAccount(ctx, clientId);
  const { record, attempted } = await sendTestEvent(
    { stores: ctx.stores, events: await publisherOf(ctx), clock: ctx.clock },
    clientId,
  );
  print(ctx, values.json, eventJson(record), () => eventLines(record));
  const follow = `follow it with: recoup webhooks show ${record._id}`;
  if (record.deliveryStatus === 'undeliverable')
    throw new Error('the account has no https:// webhook URL; nothing was sent');
  if (!attempted)
    throw new Error(
      `no worker attempted the test event within ${testEventWaitMs / 1000} s (are workers running?); ${follow}`,
    );
  if (record.deliveryStatus !== 'delivered')
    throw new Error(
      `the endpoint did not acknowledge the test event; it is retried on the schedule; ${follow}`,
    );
}

/**
 * `recoup webhooks list|show|resend|test|resend-all`: the audit log of events and their deliveries, manual
 * resend of one event or of many, and a test event.
 */
export const webhooksCommand = commandGroup('webhooks', {
  list,
  show,
  resend,
  test,
  'resend-all': resendAll,
});
