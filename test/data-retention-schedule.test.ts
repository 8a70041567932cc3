import { randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createActivities } from '../activities/index.js';
import { dataRetentionWorkflowId, nextSweepAt, sweepDay } from '../domain/card-health.js';
import { outboxWatchMs, outboxWatchRenewMs, strandedAfterMs } from '../domain/webhooks.js';
import { serverClock } from '../scripts/time-skipping.js';
import { ensureDailyWorkflows } from '../services/card-sweep.js';
import { createEventPublisher } from '../services/events.js';
import { dataRetentionWorkflow } from '../workflows/data-retention.js';
import { storeEvent } from './support/events.js';
import { poll } from './support/poll.js';
import { sampleEvent } from './support/sample-events.js';
import { activityDeps, call, type Stack } from './support/stack.js';
import { skipTo, stackOnTimeSkipping, startTimeSkipping } from './support/time-skipping.js';
import { startReceiver, type Receiver } from './support/webhook-receiver.js';

// The daily data retention on Temporal's time-skipping server: three months of days in seconds, with the
// real workers, activities and FerretDB.

let env: TestWorkflowEnvironment;
let stack: Stack;
let receiver: Receiver;
const day = 86_400_000;
const minute = 60_000;

beforeAll(async () => {
  env = await startTimeSkipping();
  stack = await stackOnTimeSkipping(env);
  receiver = await startReceiver({ now: () => env.currentTimeMs() });
});
afterAll(async () => {
  await stack?.close();
  await receiver?.close();
  await env?.teardown();
});

describe('the daily data retention', () => {
  it('deletes an account’s records once they are older than dataRetentionDays, and no one else’s', async () => {
    const start = await env.currentTimeMs();
    const recover = async (settings: Record<string, unknown>) => {
      const { account, apiKey } = await stack.createAccount(settings);
      const res = await call<{ transactionId: string }>(stack.baseUrl, 'POST', '/api/recovery/execute', {
        key: apiKey,
        body: { paymentMethodToken: 'tok_visa', originalDeclineCode: 'try_again_later', amount: 2500 },
      });
      expect(res.status).toBe(200);
      return { accountId: account.id, transactionId: res.body.transactionId };
    };
    const limited = await recover({ dataRetentionDays: 90 });
    const unlimited = await recover({});
    await ensureDailyWorkflows(env.client, stack.queues);
    const kept = async (r: { accountId: string; transactionId: string }) => ({
      recovery: (await stack.stores.recoveries.find(r.accountId, r.transactionId)) !== null,
      // recovery.success to an unreachable endpoint: given up on after 24 hours, then purgeable.
      events: (await stack.stores.events.list({ accountId: r.accountId })).length,
    });

    await skipTo(env, start + 89 * day);
    expect(await kept(limited)).toEqual({ recovery: true, events: 1 });
    await skipTo(env, start + 92 * day);
    expect(await kept(limited)).toEqual({ recovery: false, events: 0 });
    expect(await kept(unlimited)).toEqual({ recovery: true, events: 1 });
  }, 180_000);

  it('a day whose purge fails for good leaves the daily workflow running: the next day’s run comes as always', async () => {
    // A worker of its own, whose purge fails on the first day it runs (MongoDB down past every retry).
    const activities = createActivities({ ...activityDeps(stack), clock: serverClock });
    const tries: number[] = [];
    const taskQueue = `${stack.queues.recovery}-failing-day`;
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: { codePath: inject('workflowBundlePath') },
      activities: {
        ...activities,
        purgeExpiredData: async (input: { asOf: number }) => {
          tries.push(input.asOf);
          if (input.asOf === tries[0]) throw new Error('MongoServerSelectionError: connection refused');
          return activities.purgeExpiredData(input);
        },
      },
    });
    const running = worker.run();
    try {
      const firstDay = nextSweepAt(await env.currentTimeMs());
      const handle = await env.client.workflow.start(dataRetentionWorkflow, {
        workflowId: `${dataRetentionWorkflowId(taskQueue)}-${randomUUID().slice(0, 8)}`,
        taskQueue,
      });

      // Given up on after its six tries, about half an hour.
      await skipTo(env, firstDay + 2 * 3_600_000);
      expect(tries.map(sweepDay)).toEqual(Array<string>(6).fill(sweepDay(firstDay)));
      expect((await handle.describe()).status.name).toBe('RUNNING');
      await skipTo(env, firstDay + day + 2 * 3_600_000);
      expect(tries.slice(6).map(sweepDay)).toEqual([sweepDay(firstDay + day)]);
      expect((await handle.describe()).status.name).toBe('RUNNING');
      await handle.terminate('test done');
    } finally {
      worker.shutdown();
      await running;
    }
  }, 120_000);
});

/**
 * A publisher of this stack whose process dies as it starts a delivery (`start` never answers), or whose
 * start Temporal refuses; its clock is the server's (as a deployment's is Temporal's) unless given one.
 * Counts the times it tells the outbox check that it records events.
 */
async function publisherWhoseStart(
  start: 'dies' | 'is refused',
  clock?: () => Date,
  signals: 'reach the check' | 'fail' = 'reach the check',
) {
  const told = { times: 0 };
  const temporal = new Client({
    connection: env.connection,
    interceptors: {
      workflow: [
        {
          signal: (input, next) => {
            told.times += 1;
            return signals === 'fail' ? Promise.reject(new Error('Temporal unreachable')) : next(input);
          },
        },
      ],
    },
  });
  temporal.workflow.start = () =>
    start === 'dies' ? new Promise(() => {}) : Promise.reject(new Error('Temporal refused the start'));
  const offset = (await env.currentTimeMs()) - Date.now();
  const events = createEventPublisher({
    stores: stack.stores,
    temporal,
    queues: stack.queues,
    clock: clock ?? (() => new Date(Date.now() + offset)),
  });
  return { events, told };
}

/** Noon (UTC) of the next day on the server: hours away from the daily run at 06:00. */
async function skipToNoon(): Promise<void> {
  const now = await env.currentTimeMs();
  await skipTo(env, (Math.floor(now / day) + 1) * day + 12 * 3_600_000);
}

/** The event's POSTs to the receiver: when each came (server time) and the attempt it carried. */
const postsOf = (eventId: string) =>
  receiver.received
    .filter((r) => r.headers['x-service-event-id'] === eventId)
    .map((r) => ({ at: r.receivedAt, attempt: r.headers['x-service-delivery-attempt'] }));

/**
 * Ten minutes on, the event was delivered by one attempt, started by the outbox check once it could count
 * as stranded (5 minutes after it was stored), and no later.
 */
async function expectStartedByTheCheck(eventId: string, storedAt: Date): Promise<void> {
  await env.sleep(10 * minute);
  const record = await poll(
    () => stack.stores.events.get(eventId),
    (e) => e?.deliveryStatus === 'delivered',
  );
  expect(record?.deliveryStatus).toBe('delivered');
  const posts = postsOf(eventId);
  expect(posts.map((p) => p.attempt)).toEqual(['1']);
  expect(posts[0]!.at - storedAt.getTime()).toBeGreaterThanOrEqual(strandedAfterMs);
  expect(posts[0]!.at - storedAt.getTime()).toBeLessThanOrEqual(10 * minute);
}

describe('an event stored while its delivery never started', () => {
  it('is delivered within minutes when the process that stored it died before starting it', async () => {
    await skipToNoon();
    await ensureDailyWorkflows(env.client, stack.queues);
    const { account } = await stack.createAccount({ webhookUrl: receiver.url });
    const { events } = await publisherWhoseStart('dies');
    const eventId = randomUUID();
    void events.publish(account.id, sampleEvent('recovery.success'), { eventId });
    const stored = await poll(
      () => stack.stores.events.get(eventId),
      (e) => e !== null,
    );
    expect(stored).toMatchObject({ deliveryStatus: 'pending' });

    await expectStartedByTheCheck(eventId, stored!.createdAt);
  });

  it('a resend is delivered within minutes when the process that recorded it died before starting it', async () => {
    await skipToNoon();
    await ensureDailyWorkflows(env.client, stack.queues);
    const { account } = await stack.createAccount({ webhookUrl: receiver.url });
    // Dead-lettered an hour ago (stored straight into the store: no delivery ran here).
    const failedAt = new Date((await env.currentTimeMs()) - 60 * minute);
    const failedAttempt = { attempt: 1, at: failedAt, statusCode: 500, error: null, latencyMs: 5 };
    const eventId = await storeEvent(stack.stores.events, account.id, {
      createdAt: failedAt,
      status: 'failed',
      deliveries: [{ deliveryId: 'initial', startedAt: failedAt, attempts: [failedAttempt] }],
    });
    const { events } = await publisherWhoseStart('dies');
    void events.resend(eventId);
    const recorded = await poll(
      () => stack.stores.events.get(eventId),
      (e) => e?.deliveries.length === 2,
    );
    // Listed pending, a call again to resend what failed no longer selects it: the check must start it.
    expect(recorded).toMatchObject({ deliveryStatus: 'pending' });

    await expectStartedByTheCheck(eventId, recorded!.deliveries[1]!.startedAt);
  });

  it('is delivered within minutes when Temporal refused its start, not dead-lettered', async () => {
    await skipToNoon();
    await ensureDailyWorkflows(env.client, stack.queues);
    const { account } = await stack.createAccount({ webhookUrl: receiver.url });
    const { events } = await publisherWhoseStart('is refused');
    const eventId = randomUUID();
    await expect(events.publish(account.id, sampleEvent('recovery.success'), { eventId })).rejects.toThrow(
      'refused',
    );
    const stored = await stack.stores.events.get(eventId);
    // The check, told before the event was stored, is what starts it: it stays pending meanwhile.
    expect(stored).toMatchObject({ deliveryStatus: 'pending' });

    await expectStartedByTheCheck(eventId, stored!.createdAt);
  });

  it('a publisher tells the check once for all it records in a while, and again before that runs out', async () => {
    await ensureDailyWorkflows(env.client, stack.queues);
    const { account } = await stack.createAccount({ webhookUrl: receiver.url });
    let now = await env.currentTimeMs();
    const { events, told } = await publisherWhoseStart('is refused', () => new Date(now));
    const publish = () => events.publish(account.id, sampleEvent('recovery.success')).catch(() => null);
    await publish();
    now += outboxWatchMs - outboxWatchRenewMs - 1;
    await publish();
    expect(told.times).toBe(1);
    now += 1;
    await publish();
    expect(told.times).toBe(2);
  });

  it('a publisher that cannot tell the check tries again only a while later, and dead-letters meanwhile', async () => {
    const { account } = await stack.createAccount({ webhookUrl: receiver.url });
    let now = await env.currentTimeMs();
    const { events, told } = await publisherWhoseStart('is refused', () => new Date(now), 'fail');
    const publish = async () => {
      const eventId = randomUUID();
      await events.publish(account.id, sampleEvent('recovery.success'), { eventId }).catch(() => null);
      return (await stack.stores.events.get(eventId))?.deliveryStatus;
    };
    // Untold, a start Temporal refuses is dead-lettered as before, where resend finds it.
    expect(await publish()).toBe('failed');
    expect(await publish()).toBe('failed');
    expect(told.times).toBe(1);
    now += outboxWatchRenewMs;
    await publish();
    expect(told.times).toBe(2);
  });
});
