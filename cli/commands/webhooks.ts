import { deliveryStatuses } from '../../domain/webhooks.js';
import { createEventPublisher, EventNotFoundError } from '../../services/events.js';
import type { EventRecord } from '../../store/events.js';
import { choiceFlag, integerFlag, onePositional, parseCommand } from '../args.js';
import { commandGroup, type CliContext } from '../context.js';
import { jsonFlag, print } from '../output.js';
import { NotFoundError, UsageError } from '../errors.js';
import { eventJson, eventLines, eventTable } from '../webhook-view.js';

export const webhooksUsage = [
  'recoup webhooks list [--account <clientId>] [--status pending|delivered|failed|suppressed|undeliverable]',
  '                     [--limit <n>] [--json]',
  'recoup webhooks show <eventId> [--json]',
  'recoup webhooks resend <eventId> [--json]',
];

const json = jsonFlag;

async function existing(ctx: CliContext, eventId: string): Promise<EventRecord> {
  const record = await ctx.stores.events.get(eventId);
  if (!record) throw new NotFoundError(`no event with eventId ${eventId}`);
  return record;
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
  const record = await existing(ctx, onePositional(positionals, 'eventId', webhooksUsage[2]!));
  print(ctx, values.json, eventJson(record), () => eventLines(record));
}

async function resend(argv: string[], ctx: CliContext): Promise<void> {
  const { values, positionals } = parseCommand(argv, json);
  const eventId = onePositional(positionals, 'eventId', webhooksUsage[3]!);
  await existing(ctx, eventId);
  const events = createEventPublisher({
    stores: ctx.stores,
    temporal: await ctx.temporal(),
    queues: ctx.queues,
    clock: ctx.clock,
  });
  const sent = await events.resend(eventId).catch((error: unknown) => {
    throw error instanceof EventNotFoundError ? new NotFoundError(error.message) : error;
  });
  print(ctx, values.json, sent, () => [
    `Resending event ${eventId} as delivery ${sent.deliveryId} (workflow ${sent.workflowId}).`,
    `Follow it with: recoup webhooks show ${eventId}`,
  ]);
}

/** `recoup webhooks list|show|resend`: the audit log of events and their deliveries, and manual resend. */
export const webhooksCommand = commandGroup('webhooks', {
  list,
  show,
  resend,
});
