// The webhook events an erasure finds: whether a delivery of one is under way, and deleting them.
import type { Client } from '@temporalio/client';
import { deliveryWorkflowId, mayBeUnderWay } from '../domain/webhooks.js';
import type { CustomerRefs } from '../store/customer-refs.js';
import type { EventRecord } from '../store/events.js';
import type { Stores } from '../store/index.js';
import { deleteHistory, running } from './workflow-history.js';

/** How long a new event may wait for its delivery workflow to start (the publisher inserts it first). */
const deliveryStartGraceMs = 60_000;

/**
 * Whether a delivery of the event is under way: its latest delivery may still run and its workflow runs,
 * or it was recorded too recently for that workflow to have started. A delivery that never started (the
 * publisher died before starting it) or ended without saying so is not, and does not block an erasure.
 */
export async function beingDelivered(temporal: Client, event: EventRecord, now: Date): Promise<boolean> {
  const latest = event.deliveries.at(-1);
  if (!latest || !mayBeUnderWay(event.deliveryStatus, latest)) return false;
  if (now.getTime() - latest.startedAt.getTime() < deliveryStartGraceMs) return true;
  return running(temporal, deliveryWorkflowId(event._id, latest.deliveryId));
}

/**
 * Deletes the events and the histories of their deliveries, but those whose delivery is under way (they are
 * returned): their workflow still reads them, and an erasure run again once they end deletes them.
 */
export async function removeDelivered(temporal: Client, stores: Stores, events: EventRecord[], now: Date) {
  const delivering: EventRecord[] = [];
  const done: EventRecord[] = [];
  for (const e of events) ((await beingDelivered(temporal, e, now)) ? delivering : done).push(e);
  let histories = 0;
  for (const id of done.flatMap((e) => e.deliveries.map((d) => deliveryWorkflowId(e._id, d.deliveryId))))
    if (await deleteHistory(temporal, id)) histories++;
  return { delivering, histories, events: await stores.events.remove(done.map((e) => e._id)) };
}

/**
 * What named the customer and was written while the erasure ran, after its footprint was read: a hosted link
 * minted for them, a webhook event about them (the card.updated of a card saved through one of their links
 * just before the link was deleted, whose use the link took with it). Looked up with every identifier the
 * erasure followed, once the records are pseudonymised; the links are deleted with their uses, the events
 * as `removeDelivered` does. A use of a link recorded after the link was deleted is refused (`consume`).
 */
export async function removeWrittenMeanwhile(
  temporal: Client,
  stores: Stores,
  accountId: string,
  refs: CustomerRefs,
  now: Date,
) {
  const links = await stores.links.ofCustomer(accountId, refs);
  const removedLinks = await stores.links.remove(links.map(({ link }) => link._id));
  const events = await stores.events.ofCustomer(accountId, refs);
  return { links: removedLinks, ...(await removeDelivered(temporal, stores, events, now)) };
}
