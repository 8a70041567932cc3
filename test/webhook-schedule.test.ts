import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Settings } from '../domain/settings.js';
import { webhookMaxAttempts, webhookWorkflowId } from '../domain/webhooks.js';
import type { webhookDeliveryWorkflow } from '../workflows/webhook-delivery.js';
import { verifyWebhookSignature } from '../runtime/webhook-signature.js';
import type { EventPublisher } from '../services/events.js';
import type { DeliveryAttempt } from '../store/events.js';
import type { Stores } from '../store/index.js';
import { storeEvent } from './support/events.js';
import { poll } from './support/poll.js';
import { sampleEvent } from './support/sample-events.js';
import { RecordingMeter } from './support/recording-meter.js';
import {
  startReceiver,
  type Answer,
  type ReceivedRequest,
  type Receiver,
} from './support/webhook-receiver.js';
import { startWebhookWorker, type WebhookWorker } from './support/webhook-worker.js';

// The delivery schedule on Temporal's time-skipping test server: a day of retries runs in seconds, and
// each attempt is timed by the receiver with the server's clock (the workflow's time), not the wall clock.

const meter = new RecordingMeter();
let env: TestWorkflowEnvironment;
let stores: Stores;
let events: EventPublisher;
let activities: WebhookWorker['activities'];
let bench: WebhookWorker | undefined;
const receivers: Receiver[] = [];

beforeAll(async () => {
  bench = await startWebhookWorker({ meter });
  ({ env, stores, events, activities } = bench);
});

afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await bench?.close();
});

/** A receiver timed by the test server's clock, and an account whose webhooks go to it. */
async function merchant(answer: (req: ReceivedRequest, index: number) => Answer) {
  const receiver = await startReceiver({ answer, now: () => env.currentTimeMs() });
  receivers.push(receiver);
  const created = await stores.accounts.create({
    name: 'Schedule test',
    settings: Settings.parse({ webhookUrl: receiver.url }),
    gateways: [{ name: 'test', kind: 'test', test: true, credentials: {} }],
  });
  return { receiver, accountId: created.account.id, secret: created.webhookSigningSecret };
}

/**
 * Publishes one event, waits (in skipped time) for its delivery workflow to finish, and times each request
 * the receiver got in seconds from the workflow's start.
 */
async function publishAndSettle(accountId: string, receiver: Receiver) {
  const { eventId } = await events.publish(accountId, sampleEvent('recovery.success'));
  const handle = env.client.workflow.getHandle<typeof webhookDeliveryWorkflow>(webhookWorkflowId(eventId));
  const result = await handle.result();
  const start = (await handle.describe()).startTime.getTime();
  const offsets = receiver.received.map((r) => (r.receivedAt - start) / 1000);
  return { eventId, result, offsets, record: await stores.events.get(eventId) };
}

/** How many webhook POSTs of `recovery.success` the worker counted with `outcome`, and the other counts. */
function counted() {
  const event = 'recovery.success';
  return {
    failed: meter.values('recoup_webhook_attempts', { event, outcome: 'failed' }).length,
    acknowledged: meter.values('recoup_webhook_attempts', { event, outcome: 'acknowledged' }).length,
    lags: meter.values('recoup_webhook_delivery_lag_seconds', { event }).length,
    gaveUp: meter.values('recoup_webhook_events_failed', { event }).length,
  };
}

/** Each attempt came when due: never early, and at most 2 s late (the time to send it, the first one from a cold worker). */
function expectOnSchedule(offsets: number[], dueSeconds: number[]): void {
  expect(offsets).toHaveLength(dueSeconds.length);
  offsets.forEach((offset, i) => {
    expect(offset).toBeGreaterThanOrEqual(dueSeconds[i]!);
    expect(offset).toBeLessThan(dueSeconds[i]! + 2);
  });
}

describe('webhook delivery schedule', () => {
  it('a receiver that always fails gets 8 attempts at 0 s, 2 s, 8 s, 1 m, 5 m, 30 m, 2 h and 24 h', async () => {
    const { receiver, accountId, secret } = await merchant(() => ({ status: 500 }));
    const before = counted();
    const { eventId, result, offsets, record } = await publishAndSettle(accountId, receiver);

    expect(result).toEqual({ delivered: false, attempts: 8 });
    const expected = [0, 2, 8, 60, 300, 1800, 7200, 86400];
    expectOnSchedule(offsets, expected);

    receiver.received.forEach((req, i) => {
      expect(req.headers['x-service-event-id']).toBe(eventId);
      expect(req.headers['x-service-delivery-attempt']).toBe(String(i + 1));
      expect(verifyWebhookSignature(req.raw, req.headers['x-service-signature'] as string, secret)).toBe(
        true,
      );
    });
    // The audit log keeps every attempt, and the event is dead-lettered for a manual resend.
    expect(record?.deliveryStatus).toBe('failed');
    const attempts = record?.deliveries[0]?.attempts ?? [];
    expect(attempts.map((a) => [a.attempt, a.statusCode, a.error])).toEqual(
      expected.map((_, i) => [i + 1, 500, 'HTTP 500: only 200 acknowledges']),
    );
    // Metrics: eight failed POSTs and one event given up on, nothing acknowledged.
    expect(counted()).toEqual({ ...before, failed: before.failed + 8, gaveUp: before.gaveUp + 1 });
  });

  it('201, 204, a redirect and 500 are failures; a 200 at the fifth attempt ends the schedule', async () => {
    const statuses = [201, 204, 302, 500, 200];
    const { receiver, accountId } = await merchant((req, i) => ({
      status: statuses[i] ?? 200,
      headers: statuses[i] === 302 ? { Location: `${req.path}/elsewhere` } : undefined,
    }));
    const before = counted();
    const { result, offsets, record } = await publishAndSettle(accountId, receiver);

    expect(result).toEqual({ delivered: true, attempts: 5 });
    expect(receiver.received.map((r) => r.path)).toEqual(Array(5).fill('/webhooks'));
    expectOnSchedule(offsets, [0, 2, 8, 60, 300]);
    expect(record?.deliveryStatus).toBe('delivered');
    expect(record?.deliveries[0]?.attempts.map((a) => [a.statusCode, a.error])).toEqual([
      [201, 'HTTP 201: only 200 acknowledges'],
      [204, 'HTTP 204: only 200 acknowledges'],
      [302, 'HTTP 302: redirects are not followed'],
      [500, 'HTTP 500: only 200 acknowledges'],
      [200, null],
    ]);
    expect(counted()).toEqual({
      failed: before.failed + 4,
      acknowledged: before.acknowledged + 1,
      lags: before.lags + 1,
      gaveUp: before.gaveUp,
    });
  });
});

describe('attempts never overlap', () => {
  it('an attempt due while the one before is still waiting for its answer follows it at once', async () => {
    // The second attempt (at 2 s) is answered 7 s later, after the third was due (8 s).
    const { receiver, accountId } = await merchant((_req, i) =>
      i === 1 ? { status: 500, delayMs: 7_000 } : { status: i === 3 ? 200 : 500 },
    );
    const { result, offsets } = await publishAndSettle(accountId, receiver);
    expect(result).toEqual({ delivered: true, attempts: 4 });
    expect(offsets[2]).toBeGreaterThanOrEqual(offsets[1]! + 7);
    expect(offsets[2]).toBeLessThan(offsets[1]! + 7 + 2);
    expectOnSchedule([offsets[0]!, offsets[1]!, offsets[3]!], [0, 2, 60]);
  });
});

/** One recorded attempt with this status code, made `n`-th. */
const attemptOf = (n: number, statusCode: number): DeliveryAttempt => ({
  attempt: n,
  at: new Date(),
  statusCode,
  error: statusCode === 200 ? null : `HTTP ${statusCode}: only 200 acknowledges`,
  latencyMs: 7,
});

// The tests below store their events with no workflow running them and drive the delivery activities
// themselves: the HTTP timeout runs on the wall clock, not the test server's.
describe('one attempt', () => {
  it('a 200 that takes 11 s is a failure: the receiver must answer within 10 s', async () => {
    const { receiver, accountId } = await merchant(() => ({ status: 200, delayMs: 11_000 }));
    const eventId = await storeEvent(stores.events, accountId);
    const outcome = await activities.deliverWebhook({ eventId, deliveryId: 'initial', attempt: 1 });

    expect(outcome).toMatchObject({ ok: false, statusCode: null, error: 'no answer within 10 s' });
    expect(outcome.latencyMs).toBeGreaterThanOrEqual(9_900);
    expect(outcome.latencyMs).toBeLessThan(11_000);
    expect(receiver.received).toHaveLength(1);
  });

  it('an attempt run again after its 200 was recorded answers that 200 and posts nothing', async () => {
    // A worker died after recording the 200, before Temporal learned of it: attempt 1 runs again.
    const { receiver, accountId } = await merchant(() => ({ status: 500 }));
    const acknowledged = attemptOf(1, 200);
    const eventId = await storeEvent(stores.events, accountId, {
      status: 'delivered',
      deliveries: [{ deliveryId: 'initial', startedAt: new Date(), attempts: [acknowledged] }],
    });
    const outcome = await activities.deliverWebhook({ eventId, deliveryId: 'initial', attempt: 1 });
    // ok: the workflow ends there instead of going on to post an acknowledged event again.
    expect(outcome).toEqual({
      ok: true,
      statusCode: 200,
      error: null,
      at: acknowledged.at.toISOString(),
      latencyMs: 7,
    });
    await activities.recordWebhookAttempt({
      eventId,
      deliveryId: 'initial',
      deliveryIndex: 0,
      attempt: 1,
      ...outcome,
    });
    expect(receiver.received).toEqual([]);
    const record = await stores.events.get(eventId);
    expect(record?.deliveryStatus).toBe('delivered');
    expect(record?.deliveries[0]?.attempts).toEqual([acknowledged]);
  });

  it('a delivery a resend replaced posts nothing, and its end leaves the event to the resend', async () => {
    const { receiver, accountId } = await merchant(() => ({ status: 500 }));
    const startedAt = new Date();
    const failedAll = Array.from({ length: webhookMaxAttempts }, (_, i) => attemptOf(i + 1, 500));
    const eventId = await storeEvent(stores.events, accountId, {
      deliveries: [
        { deliveryId: 'initial', startedAt, attempts: failedAll.slice(0, -1) },
        { deliveryId: 'resend-1', startedAt, attempts: [] },
      ],
    });
    const outcome = await activities.deliverWebhook({
      eventId,
      deliveryId: 'initial',
      attempt: webhookMaxAttempts,
    });
    expect(outcome).toMatchObject({
      ok: false,
      statusCode: null,
      error: expect.stringContaining('resend-1'),
    });
    expect(receiver.received).toEqual([]);
    // Its last attempt recorded, the replaced delivery ends; the event stays pending on the resend.
    await activities.recordWebhookAttempt({
      eventId,
      deliveryId: 'initial',
      deliveryIndex: 0,
      attempt: webhookMaxAttempts,
      ...outcome,
    });
    await activities.markEventStatus({ eventId, status: 'failed' });
    expect((await stores.events.get(eventId))?.deliveryStatus).toBe('pending');
  });
});

describe('dunning turned off while a recovery.failed is being delivered', () => {
  it('the attempts still due post nothing, and the event ends suppressed, not failed', async () => {
    // The first attempt is answered 3 s late: dunning is off before it ends, and before the second is due.
    const { receiver, accountId } = await merchant(() => ({ status: 500, delayMs: 3_000 }));
    const account = await stores.accounts.find(accountId);
    if (!account) throw new Error('the account was not created');
    const { eventId, deliveryStatus } = await events.publish(accountId, sampleEvent('recovery.failed'));
    expect(deliveryStatus).toBe('pending');
    await poll(
      () => receiver.received.length,
      (n) => n === 1,
    );
    await stores.accounts.updateSettings(accountId, { ...account.settings, dunningEnabled: false });

    const handle = env.client.workflow.getHandle<typeof webhookDeliveryWorkflow>(webhookWorkflowId(eventId));
    expect(await handle.result()).toEqual({ delivered: false, attempts: webhookMaxAttempts });
    expect(receiver.received).toHaveLength(1);
    const record = await stores.events.get(eventId);
    expect(record?.deliveryStatus).toBe('suppressed');
    expect(record?.deliveries[0]?.attempts.map((a) => [a.attempt, a.statusCode, a.error])).toEqual([
      [1, 500, 'HTTP 500: only 200 acknowledges'],
      ...Array.from({ length: webhookMaxAttempts - 1 }, (_, i) => [
        i + 2,
        null,
        'recovery.failed is not sent while dunningEnabled is false: nothing sent',
      ]),
    ]);
  });

  it.each([
    ['dunning turned off', { dunningEnabled: false }, 'suppressed'],
    ['a webhook URL that is not https', { webhookUrl: 'http://127.0.0.1:9/webhooks' }, 'undeliverable'],
  ] as const)(
    'a resend of a delivered event stopped by %s sends nothing more once it is undone; the event stays delivered',
    async (_name, change, stopped) => {
      const { receiver, accountId } = await merchant(() => ({ status: 200 }));
      const account = await stores.accounts.find(accountId);
      if (!account) throw new Error('the account was not created');
      const eventId = await storeEvent(stores.events, accountId, {
        type: 'recovery.failed',
        status: 'delivered',
        deliveries: [
          { deliveryId: 'initial', startedAt: new Date(), attempts: [attemptOf(1, 200)] },
          { deliveryId: 'resend-1', startedAt: new Date(), attempts: [attemptOf(1, 500)] },
        ],
      });
      const attemptNo = async (attempt: number) => {
        const outcome = await activities.deliverWebhook({ eventId, deliveryId: 'resend-1', attempt });
        await activities.recordWebhookAttempt({
          eventId,
          deliveryId: 'resend-1',
          deliveryIndex: 1,
          attempt,
          ...outcome,
        });
        return outcome;
      };

      await stores.accounts.updateSettings(accountId, { ...account.settings, ...change });
      expect(await attemptNo(2)).toMatchObject({ ok: false, statusCode: null });
      await stores.accounts.updateSettings(accountId, account.settings);
      expect(await attemptNo(3)).toMatchObject({
        ok: false,
        statusCode: null,
        error: expect.stringContaining(stopped),
      });
      expect(receiver.received).toEqual([]);
      const record = await stores.events.get(eventId);
      expect(record?.deliveryStatus).toBe('delivered');
      expect(record?.deliveries[1]?.stopped).toBe(stopped);

      // A resend sends it again, in a delivery of its own.
      expect(await events.resend(eventId)).toMatchObject({ deliveryId: 'resend-2' });
      const handle = env.client.workflow.getHandle<typeof webhookDeliveryWorkflow>(
        webhookWorkflowId(eventId, 2),
      );
      expect(await handle.result()).toEqual({ delivered: true, attempts: 1 });
      expect(receiver.received).toHaveLength(1);
    },
  );

  it('a delivery stopped so sends nothing more, even once dunning is back on', async () => {
    const { receiver, accountId } = await merchant(() => ({ status: 200 }));
    const eventId = await storeEvent(stores.events, accountId, {
      type: 'recovery.failed',
      status: 'suppressed',
      deliveries: [{ deliveryId: 'initial', startedAt: new Date(), attempts: [attemptOf(1, 500)] }],
    });
    const outcome = await activities.deliverWebhook({ eventId, deliveryId: 'initial', attempt: 2 });
    expect(outcome).toMatchObject({
      ok: false,
      statusCode: null,
      error: expect.stringContaining('suppressed'),
    });
    expect(receiver.received).toEqual([]);
  });
});
