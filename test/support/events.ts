import { randomUUID } from 'node:crypto';
import type { EventName } from '../../domain/events.js';
import type { DeliveryStatus } from '../../domain/webhooks.js';
import type { Delivery, EventStore } from '../../store/events.js';
import { poll } from './poll.js';
import { sampleEvent } from './sample-events.js';
import type { Stack } from './stack.js';

/** Waits until the account's recorded events include every name in `names`; returns them all. */
export function eventsOf(stack: Stack, accountId: string, names: EventName[], timeoutMs = 15_000) {
  return poll(
    () => stack.stores.events.list({ accountId, limit: 200 }),
    (events) => names.every((n) => events.some((e) => e.type === n)),
    { timeoutMs },
  );
}

/**
 * Inserts an event of the account straight into the store, as publish records it (the sample payload of
 * `type`, recovery.success else, and its exact body) but with no delivery workflow started; returns its id.
 * Pending by default, on one `initial` delivery begun at `createdAt` (now else) with no attempts yet.
 */
export async function storeEvent(
  events: EventStore,
  accountId: string,
  opts: { type?: EventName; createdAt?: Date; status?: DeliveryStatus; deliveries?: Delivery[] } = {},
): Promise<string> {
  const eventId = randomUUID();
  const type = opts.type ?? 'recovery.success';
  const createdAt = opts.createdAt ?? new Date();
  const payload = { ...sampleEvent(type), eventId, createdAt: createdAt.toISOString() };
  await events.insert({
    _id: eventId,
    accountId,
    type,
    payload,
    body: JSON.stringify(payload),
    createdAt,
    deliveryStatus: opts.status ?? 'pending',
    deliveries: opts.deliveries ?? [{ deliveryId: 'initial', startedAt: createdAt, attempts: [] }],
  });
  return eventId;
}
