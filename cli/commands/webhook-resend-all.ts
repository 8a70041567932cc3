import { ResendFilter } from '../../domain/resend-filter.js';
import { resendBatch, type ResendBatch } from '../../services/event-resend.js';
import type { PagePlace } from '../../store/paging.js';
import type { Stores } from '../../store/index.js';
import { onePositional, parseCommand, validInput } from '../args.js';
import type { CliContext, Run } from '../context.js';
import { publisherOf } from '../event-publisher.js';
import { accountToChange } from '../existing-account.js';
import { jsonFlag, print } from '../output.js';

/** The usage of `recoup webhooks resend-all` as `recoup help` lists it: two lines. */
export const resendAllUsage = [
  'recoup webhooks resend-all <clientId> [--status failed|delivered|suppressed|undeliverable] [--type <event>]',
  '                           [--from <ISO date-time>] [--to <ISO date-time>] [--json]',
];

/** Batches of a bulk resend: the API's largest. */
const resendBatchSize = 100;

/**
 * The stores, with the place (creation time and id) of every event a batch lists noted down: the next
 * batch carries on after the last one from its place as the batch read it. Reading that event again by id
 * would fail once data retention or an erasure deleted it in the meantime.
 */
function notingPlaces(stores: Stores) {
  const places = new Map<string, PagePlace>();
  const events: Stores['events'] = {
    ...stores.events,
    async list(query) {
      const records = await stores.events.list(query);
      for (const r of records) places.set(r._id, { _id: r._id, createdAt: r.createdAt });
      return records;
    },
  };
  return { stores: { ...stores, events }, places };
}

/** Where the batch ends: the place of its last event, or an error should it not have been listed. */
function placeAfter(batch: ResendBatch, places: Map<string, PagePlace>): PagePlace {
  const place = batch.last === null ? undefined : places.get(batch.last);
  if (!place)
    throw new Error(`the resend batch ended on event ${batch.last ?? '(none)'}, which it never listed`);
  return place;
}

/** What the batches did, all together. */
type Done = Pick<ResendBatch, 'resent' | 'skipped'>;

/** Resends batch after batch, adding what each did to `done` and printing it (for people) as it completes. */
async function resendBatches(
  ctx: CliContext,
  clientId: string,
  filter: ResendFilter,
  json: boolean,
  done: Done,
): Promise<void> {
  const { stores, places } = notingPlaces(ctx.stores);
  const events = await publisherOf(ctx);
  let after: PagePlace | undefined;
  for (;;) {
    const batch = await resendBatch({ stores, events }, clientId, {
      ...filter,
      ...(after ? { after } : {}),
      limit: resendBatchSize,
    });
    done.resent.push(...batch.resent);
    done.skipped.push(...batch.skipped);
    if (batch.last === null) return;
    after = placeAfter(batch, places);
    if (!json) {
      ctx.out(
        `Resent ${batch.resent.length} and skipped ${batch.skipped.length} event(s), oldest first through ${after._id} (created ${after.createdAt.toISOString()}).`,
      );
      for (const s of batch.skipped) ctx.out(`Skipped ${s.eventId}: ${s.reason}`);
    }
    if (!batch.hasMore) return;
  }
}

/**
 * Sends the account's selected events again (by default every failed one), oldest first, batch after batch
 * as a merchant's POST /api/events/resend does, until none is left: after an endpoint's long outage. Each
 * batch is printed as it completes, and should one fail, what the ones before did is printed (with
 * `--json`, as the whole result would be) before the error: nothing resent goes unrecorded.
 */
export function resendAll(argv: string[]): Run {
  const { values, positionals } = parseCommand(argv, {
    ...jsonFlag,
    status: { type: 'string' },
    type: { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
  });
  const clientId = onePositional(positionals, 'clientId', resendAllUsage.map((l) => l.trim()).join(' '));
  const filter = validInput(
    'selection',
    ResendFilter,
    { status: values.status, type: values.type, from: values.from, to: values.to },
    { status: '--status', type: '--type', from: '--from', to: '--to' },
  );
  return async (ctx) => {
    await accountToChange(ctx, clientId);
    const done: Done = { resent: [], skipped: [] };
    const report = (finished: boolean) =>
      print(ctx, values.json, done, () => [
        finished
          ? `Resent ${done.resent.length} ${filter.status} event(s) of ${clientId}, each as a new delivery.`
          : `Stopped after resending ${done.resent.length} ${filter.status} event(s) of ${clientId} (the batches above): the error follows.`,
        ...(done.resent.length > 0
          ? [`Follow them with: recoup webhooks list --account ${clientId} --status pending`]
          : []),
      ]);
    try {
      await resendBatches(ctx, clientId, filter, values.json, done);
    } catch (error) {
      if (done.resent.length + done.skipped.length > 0) report(false);
      throw error;
    }
    report(true);
  };
}
