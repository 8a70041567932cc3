import { setTimeout as sleep } from 'node:timers/promises';
import { webhookAcknowledgeTimeoutMs } from '../domain/webhooks.js';
import type { EventRecord } from '../store/events.js';
import type { Stores } from '../store/index.js';
import type { EventPublisher } from './events.js';

/** How long a test waits for its first attempt: the receiver's 10 s and a few seconds to hand it over. */
export const testEventWaitMs = webhookAcknowledgeTimeoutMs + 5_000;
const pollMs = 200;

/** A test event and whether its first attempt has an outcome yet. */
export interface TestEventOutcome {
  record: EventRecord;
  /**
   * True once the first attempt has ended, or when nothing is sent (no https webhook URL: `undeliverable`);
   * false when no attempt ended within the wait (workers busy or not running), the delivery going on.
   */
  attempted: boolean;
}

/** True once the event's first attempt has an outcome, or it is not sent at all. */
const attemptedOrBlocked = (record: EventRecord) =>
  record.deliveryStatus !== 'pending' || record.deliveries.some((d) => d.attempts.length > 0);

/**
 * Sends the account a `webhook.test` event, signed and delivered like every event (and retried on the same
 * schedule if its endpoint fails), and waits for the first attempt's outcome: how a merchant or an operator
 * checks that the endpoint receives events and verifies their signature.
 */
export async function sendTestEvent(
  deps: { stores: Stores; events: EventPublisher; clock: () => Date },
  accountId: string,
  waitMs = testEventWaitMs,
): Promise<TestEventOutcome> {
  const { eventId } = await deps.events.publish(accountId, {
    event: 'webhook.test',
    clientId: accountId,
    message:
      'A test event from Recoup: your endpoint received it. Verify its X-Service-Signature and answer 200.',
    timestamp: deps.clock().toISOString(),
  });
  const deadline = performance.now() + waitMs;
  for (;;) {
    const record = await deps.stores.events.get(eventId);
    if (!record) throw new Error(`The test event ${eventId} was not stored`);
    if (attemptedOrBlocked(record)) return { record, attempted: true };
    if (performance.now() >= deadline) return { record, attempted: false };
    await sleep(pollMs);
  }
}
