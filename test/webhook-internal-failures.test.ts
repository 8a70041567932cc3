import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import type { Db, MongoClient } from 'mongodb';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createActivities } from '../activities/index.js';
import { createWorkerMetrics } from '../activities/metrics.js';
import { Settings } from '../domain/settings.js';
import { webhookPostDeadlineMs, webhookWorkflowId } from '../domain/webhooks.js';
import { createLogger } from '../runtime/logger.js';
import { createEventPublisher, type EventPublisher } from '../services/events.js';
import { createStores, type Stores } from '../store/index.js';
import { ensureIndexes } from '../store/indexes.js';
import { connectMongo } from '../store/mongo.js';
import { taskQueues } from '../worker/task-queues.js';
import type { webhookDeliveryWorkflow } from '../workflows/webhook-delivery.js';
import { storeEvent } from './support/events.js';
import { RecordingMeter } from './support/recording-meter.js';
import { sampleEvent } from './support/sample-events.js';
import { startTimeSkipping } from './support/time-skipping.js';
import { startReceiver, type Answer, type Receiver } from './support/webhook-receiver.js';

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
let mongo: MongoClient;
let db: Db;
let stores: Stores;
let events: EventPublisher;
let activities: ReturnType<typeof createActivities>;
let worker: Worker;
let running: Promise<void>;
const receivers: Receiver[] = [];

beforeAll(async () => {
  env = await startTimeSkipping();
  const suffix = randomUUID().slice(0, 8);
  ({ client: mongo, db } = await connectMongo(`${inject('mongoUri')}ts_${suffix}`));
  await ensureIndexes(db);
  stores = createStores(db, randomBytes(32));
  const queues = taskQueues(`ts-${suffix}`);
  const clock = () => new Date();
  events = createEventPublisher({ stores, temporal: env.client, queues, clock });
  activities = createActivities({
    stores: troubledStores(stores),
    temporal: env.client,
    queues,
    log: createLogger('silent', 'test'),
    clock,
    publicBaseUrl: 'http://127.0.0.1',
    events,
    metrics: createWorkerMetrics(new RecordingMeter()),
  });
  worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue: queues.webhooks,
    workflowBundle: { codePath: inject('workflowBundlePath') },
    activities,
  });
  running = worker.run();
});

afterAll(async () => {
  worker?.shutdown();
  await running;
  await Promise.all(receivers.map((r) => r.close()));
  await db?.dropDatabase();
  await mongo?.close();
  await env?.teardown();
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
