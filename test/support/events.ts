import type { EventName } from '../../domain/events.js';
import { poll } from './poll.js';
import type { Stack } from './stack.js';

/** Waits until the account's recorded events include every name in `names`; returns them all. */
export function eventsOf(stack: Stack, accountId: string, names: EventName[], timeoutMs = 15_000) {
  return poll(
    () => stack.stores.events.list({ accountId, limit: 200 }),
    (events) => names.every((n) => events.some((e) => e.type === n)),
    { timeoutMs },
  );
}
