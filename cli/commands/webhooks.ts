import { deliveryStatuses } from '../../domain/webhooks.js';
import { EventNotFoundError } from '../../services/events.js';
import { sendTestEvent, testEventWaitMs } from '../../services/webhook-test.js';
import type { EventRecord } from '../../store/events.js';
import { choiceFlag, integerFlag, noPositionals, onePositional, parseCommand } from '../args.js';
import { commandGroup, type CliContext, type Run } from '../context.js';
import { publisherOf } from '../event-publisher.js';
import { accountToChange, existingAccount } from '../existing-account.js';
import { jsonFlag, print } from '../output.js';
import { NotFoundError } from '../errors.js';
import { eventJson, eventLines, eventTable } from '../webhook-view.js';
import { resendAll, resendAllUsage } from './webhook-resend-all.js';

const listUsage = [
  'recoup webhooks list [--account <clientId>] [--status pending|delivered|failed|suppressed|undeliverable]',
  '                     [--limit <n>] [--json]',
];
const showUsage = 'recoup webhooks show <eventId> [--json]';
const resendUsage = 'recoup webhooks resend <eventId> [--json]';
const testUsage = 'recoup webhooks test <clientId> [--json]';
export const webhooksUsage = [...listUsage, showUsage, resendUsage, testUsage, ...resendAllUsage];

async function existing(ctx: CliContext, eventId: string): Promise<EventRecord> {
  const record = await ctx.stores.events.get(eventId);
  if (!record) throw new NotFoundError(`no event with eventId ${eventId}`);
  return record;
}

function list(argv: string[]): Run {
  const { values, positionals } = parseCommand(argv, {
    ...jsonFlag,
    account: { type: 'string' },
    status: { type: 'string' },
    limit: { type: 'string', default: '50' },
  });
  noPositionals(positionals, listUsage.map((l) => l.trim()).join(' '));
  const clientId = values.account;
  const status = choiceFlag('--status', values.status, deliveryStatuses);
  const limit = integerFlag('--limit', values.limit, 1, 1000);
  return async (ctx) => {
    // A mistyped client id would otherwise list nothing, as if the account had no events.
    if (clientId !== undefined) await existingAccount(ctx, clientId);
    const records = await ctx.stores.events.list({ accountId: clientId, status, limit });
    print(ctx, values.json, records.map(eventJson), () =>
      records.length === 0 ? ['No events.'] : eventTable(records),
    );
  };
}

function show(argv: string[]): Run {
  const { values, positionals } = parseCommand(argv, jsonFlag);
  const eventId = onePositional(positionals, 'eventId', showUsage);
  return async (ctx) => {
    const record = await existing(ctx, eventId);
    print(ctx, values.json, eventJson(record), () => eventLines(record));
  };
}

function resend(argv: string[]): Run {
  const { values, positionals } = parseCommand(argv, jsonFlag);
  const eventId = onePositional(positionals, 'eventId', resendUsage);
  return async (ctx) => {
    const record = await existing(ctx, eventId);
    await accountToChange(ctx, record.accountId);
    const events = await publisherOf(ctx);
    const sent = await events.resend(eventId).catch((error: unknown) => {
      throw error instanceof EventNotFoundError ? new NotFoundError(error.message) : error;
    });
    print(ctx, values.json, sent, () => [
      `Resending event ${eventId} as delivery ${sent.deliveryId} (workflow ${sent.workflowId}).`,
      `Follow it with: recoup webhooks show ${eventId}`,
    ]);
  };
}

/**
 * Sends the account a signed webhook.test event and prints it with its first attempt; exits 1 unless the
 * endpoint acknowledged it: how an operator checks a merchant's endpoint, e.g. right after onboarding.
 */
function test(argv: string[]): Run {
  const { values, positionals } = parseCommand(argv, jsonFlag);
  const clientId = onePositional(positionals, 'clientId', testUsage);
  return async (ctx) => {
    await accountToChange(ctx, clientId);
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
  };
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
