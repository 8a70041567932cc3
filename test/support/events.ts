import type { EventName } from '../../domain/events.js';
import type { Stack } from './stack.js';

/** Waits until the account's recorded events include every name in `names`; returns them all. */
export async function eventsOf(stack: Stack, accountId: string, names: EventName[], timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const events = await stack.stores.events.list({ accountId, limit: 200 });
    if (names.every((n) => events.some((e) => e.type === n)) || Date.now() > deadline) return events;
    await new Promise((r) => setTimeout(r, 100));
  }
}
