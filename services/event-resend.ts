import { eventNames, type EventName } from '../domain/events.js';
import type { ResendFilter } from '../domain/resend-filter.js';
import { deliveryBlock, isHttpsUrl } from '../domain/webhooks.js';
import type { Stores } from '../store/index.js';
import { oldestFirst, pageOf, type PagePlace } from '../store/paging.js';
import { EventNotFoundError, notSentReason, ResendRefusedError, type EventPublisher } from './events.js';

/**
 * Which of an account's events to send again (status, kind and creation time, as the API and the CLI take
 * them), oldest first, a batch at a time: at most `limit`, carrying on after `after` (the previous batch's
 * `last`). Without a kind, every kind but `webhook.test` (a check, not something to catch up on).
 */
export type ResendSelection = ResendFilter & { after?: PagePlace; limit: number };

/** What a batch did. */
export interface ResendBatch {
  resent: Array<{ eventId: string; deliveryId: string }>;
  /** Selected but not sent: a delivery had started in the meantime, or the event was erased. */
  skipped: Array<{ eventId: string; reason: string }>;
  /** The last event of the batch, where the next one carries on; null when the batch was empty. */
  last: string | null;
  hasMore: boolean;
}

/**
 * The kinds a resend may select under the account's settings: a kind the settings keep from being sent is
 * refused when asked for by name, and otherwise left out (recovery.failed while dunning is off).
 */
function sendableTypes(
  type: EventName | undefined,
  settings: { dunningEnabled: boolean; webhookUrl: string },
): EventName[] {
  const refuse = (block: keyof typeof notSentReason) =>
    new ResendRefusedError('not_sent', notSentReason[block]);
  if (type) {
    const block = deliveryBlock(type, settings);
    if (block) throw refuse(block);
    return [type];
  }
  if (!isHttpsUrl(settings.webhookUrl)) throw refuse('undeliverable');
  return eventNames.filter((name) => name !== 'webhook.test' && !deliveryBlock(name, settings));
}

/**
 * Sends the selected events of the account again, oldest first, at most `limit` of them: each as
 * `EventPublisher.resend` does (a new delivery of the same body and eventId on the full schedule). How a
 * merchant catches up after its endpoint was down for longer than the schedule lasts; the next batch
 * carries on after `last`. A batch that dies half way leaves each event either resent or not: running it
 * again resends the rest, and an event whose delivery is under way is skipped, never sent twice at once.
 */
export async function resendBatch(
  deps: { stores: Stores; events: EventPublisher },
  accountId: string,
  selection: ResendSelection,
): Promise<ResendBatch> {
  const account = await deps.stores.accounts.find(accountId);
  if (!account) throw new Error(`No account ${accountId} to resend events of`);
  const types = sendableTypes(selection.type, account.settings);
  const page = await pageOf(selection.limit, (limit) =>
    deps.stores.events.list({
      accountId,
      status: selection.status,
      types,
      ...(selection.from ? { from: new Date(selection.from) } : {}),
      ...(selection.to ? { to: new Date(selection.to) } : {}),
      ...(selection.after ? { after: selection.after } : {}),
      order: oldestFirst,
      limit,
    }),
  );
  const batch: ResendBatch = {
    resent: [],
    skipped: [],
    last: page.docs.at(-1)?._id ?? null,
    hasMore: page.hasMore,
  };
  for (const record of page.docs) {
    try {
      const { deliveryId } = await deps.events.resend(record._id);
      batch.resent.push({ eventId: record._id, deliveryId });
    } catch (error) {
      if (!(error instanceof ResendRefusedError || error instanceof EventNotFoundError)) throw error;
      batch.skipped.push({ eventId: record._id, reason: error.message });
    }
  }
  return batch;
}
