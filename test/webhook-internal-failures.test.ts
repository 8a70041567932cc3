import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Settings } from '../domain/settings.js';
import { webhookPostDeadlineMs, webhookWorkflowId } from '../domain/webhooks.js';
import type { EventPublisher } from '../services/events.js';
import type { Stores } from '../store/index.js';
import type { webhookDeliveryWorkflow } from '../workflows/webhook-delivery.js';
import { storeEvent } from './support/events.js';
import { sampleEvent } from './support/sample-events.js';
import { startReceiver, type Answer, type Receiver } from './support/webhook-receiver.js';
import { startWebhookWorker, type WebhookWorker } from './support/webhook-worker.js';

// A failure inside Recoup before anything is posted (the event cannot be read while MongoDB fails over, a
// read so slow that the attempt's run times out) is no attempt of the spec's eight: the attempt is made
// once the database answers, with its own number, and posted once. On the time-skipping server, with the
// delivery activities reading through a database that fails as the test says.

/** What the next reads of an event do before answering: fail, or take this many milliseconds. */
const trouble = new Map<string, Array<'fail' | number>>();

/** The stores, but each read of an event first meets the trouble planned for it. */
function troubledStores(stores: Stores): Stores {
  const { get } = stores.events;
  return {
    ...stores,
    events: {
      ...stores.events,
      async get(eventId: string) {
        const next = trouble.get(eventId)?.shift();
        if (next === 'fail') throw new Error('connection to MongoDB closed: failing over');
        if (next !== undefined) await delay(next);
        return get(eventId);
      },
    },
  };
}

let env: TestWorkflowEnvironment;
let stores: Stores;
let events: EventPublisher;
let activities: WebhookWorker['activities'];
let bench: WebhookWorker | undefined;
const receivers: Receiver[] = [];

beforeAll(async () => {
  bench = await startWebhookWorker({ storesOf: troubledStores });
  ({ env, stores, events, activities } = bench);
});

afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await bench?.close();
});

/** An account whose receiver answers the n-th request with `statuses[n]` (200 past the end). */
async function merchant(statuses: number[]) {
  const answer = (_req: unknown, i: number): Answer => ({ status: statuses[i] ?? 200 });
  const receiver = await startReceiver({ answer, now: () => env.currentTimeMs() });
  receivers.push(receiver);
  const { account } = await stores.accounts.create({
    name: 'Internal failures test',
    settings: Settings.parse({ webhookUrl: receiver.url }),
    gateways: [{ name: 'test', kind: 'test', test: true, credentials: {} }],
  });
  return { receiver, accountId: account.id };
}

/** Publishes an event whose first reads meet `reads`, and waits (in skipped time) for its delivery's end. */
async function deliverThroughTrouble(accountId: string, receiver: Receiver, reads: Array<'fail' | number>) {
  const eventId = randomUUID();
  trouble.set(eventId, reads);
  await events.publish(accountId, sampleEvent('recovery.success'), { eventId });
  const handle = env.client.workflow.getHandle<typeof webhookDeliveryWorkflow>(webhookWorkflowId(eventId));
  const result = await handle.result();
  const start = (await handle.describe()).startTime.getTime();
  return {
    result,
    attemptHeaders: receiver.received.map((r) => r.headers['x-service-delivery-attempt']),
    offsets: receiver.received.map((r) => (r.receivedAt - start) / 1000),
    audit: (await stores.events.get(eventId))?.deliveries[0]?.attempts.map((a) => [a.attempt, a.statusCode]),
  };
}

describe('a failure inside Recoup before the POST', () => {
  it('a read that fails while MongoDB fails over uses up no attempt: the first POST is attempt 1', async () => {
    const { receiver, accountId } = await merchant([500, 500, 500, 200]);
    const { result, attemptHeaders, offsets, audit } = await deliverThroughTrouble(accountId, receiver, [
      'fail',
      'fail',
    ]);

    expect(result).toEqual({ delivered: true, attempts: 4 });
    expect(attemptHeaders).toEqual(['1', '2', '3', '4']);
    // Every attempt in the audit log is a POST the receiver answered: none stands for the failed reads.
    expect(audit).toEqual([
      [1, 500],
      [2, 500],
      [3, 500],
      [4, 200],
    ]);
    // The first attempt waited for the database; the schedule went on from the delivery's start.
    expect(offsets[0]).toBeGreaterThanOrEqual(1);
    expect(offsets[1]).toBeGreaterThanOrEqual(Math.max(2, offsets[0]!));
    expect(offsets[2]).toBeGreaterThanOrEqual(8);
    expect(offsets[2]).toBeLessThan(10);
    expect(offsets[3]).toBeGreaterThanOrEqual(60);
    expect(offsets[3]).toBeLessThan(62);
  });

  it('an attempt that cannot read its event for 10 minutes counts as failed, and the schedule goes on', async () => {
    const { receiver, accountId } = await merchant([200]);
    const { result, attemptHeaders, audit } = await deliverThroughTrouble(
      accountId,
      receiver,
      Array.from({ length: 40 }, () => 'fail' as const),
    );
    expect(attemptHeaders.length).toBeGreaterThan(0);
    expect(audit?.[0]).toEqual([1, null]);
    expect(result).toMatchObject({ delivered: true });
  }, 60_000);

  it('a read that outlasts the attempt’s run is run again as attempt 1, and attempt 1 is posted once', async () => {
    // The first read answers after 16 s: its run has timed out (15 s) and been run again by then, and when
    // the read finally answers it is too late for that run to post.
    const { receiver, accountId } = await merchant([200]);
    const { result, attemptHeaders, audit } = await deliverThroughTrouble(accountId, receiver, [16_000]);
    // Let the stalled read answer: its run must still post nothing.
    await delay(2_000);

    expect(result).toEqual({ delivered: true, attempts: 1 });
    expect(attemptHeaders).toEqual(['1']);
    expect(audit).toEqual([[1, 200]]);
  }, 40_000);

  it('a run whose read took too long to leave the POST its 10 s posts nothing, and fails to be run again', async () => {
    // Driven by hand, with no workflow: the read's delay is on the wall clock.
    const { receiver, accountId } = await merchant([200]);
    const eventId = await storeEvent(stores.events, accountId);
    trouble.set(eventId, [webhookPostDeadlineMs + 500]);
    await expect(
      activities.deliverWebhook({ eventId, deliveryId: 'initial', attempt: 1 }),
    ).rejects.toMatchObject({ type: 'PostDeadlinePassed', nonRetryable: false });
    expect(receiver.received).toEqual([]);
  });
});
