import { randomBytes, randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import type { Db, MongoClient } from 'mongodb';
import { inject } from 'vitest';
import { createActivities } from '../../activities/index.js';
import { createWorkerMetrics } from '../../activities/metrics.js';
import { createLogger } from '../../runtime/logger.js';
import { createEventPublisher, type EventPublisher } from '../../services/events.js';
import { createStores, type Stores } from '../../store/index.js';
import { ensureIndexes } from '../../store/indexes.js';
import { connectMongo } from '../../store/mongo.js';
import { taskQueues } from '../../worker/task-queues.js';
import { RecordingMeter } from './recording-meter.js';
import { startTimeSkipping } from './time-skipping.js';

/** A webhook worker alone on the time-skipping server, over a scratch database: what delivery tests drive. */
export interface WebhookWorker {
  env: TestWorkflowEnvironment;
  stores: Stores;
  events: EventPublisher;
  activities: ReturnType<typeof createActivities>;
  close(): Promise<void>;
}

/**
 * Starts the time-skipping server, a scratch database and a worker of the webhook queue. `meter` records
 * the worker's metrics; `storesOf` gives the activities other stores than the publisher's (a database that
 * fails as a test says).
 */
export async function startWebhookWorker(
  opts: { meter?: RecordingMeter; storesOf?: (stores: Stores) => Stores } = {},
): Promise<WebhookWorker> {
  const env = await startTimeSkipping();
  const suffix = randomUUID().slice(0, 8);
  let mongo: MongoClient | undefined;
  let db: Db | undefined;
  try {
    ({ client: mongo, db } = await connectMongo(`${inject('mongoUri')}ts_${suffix}`));
    await ensureIndexes(db);
    const stores = createStores(db, randomBytes(32));
    const queues = taskQueues(`ts-${suffix}`);
    const clock = () => new Date();
    const events = createEventPublisher({ stores, temporal: env.client, queues, clock });
    const activities = createActivities({
      stores: opts.storesOf ? opts.storesOf(stores) : stores,
      temporal: env.client,
      queues,
      log: createLogger('silent', 'test'),
      clock,
      publicBaseUrl: 'http://127.0.0.1',
      events,
      metrics: createWorkerMetrics(opts.meter ?? new RecordingMeter()),
    });
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue: queues.webhooks,
      workflowBundle: { codePath: inject('workflowBundlePath') },
      activities,
    });
    const running = worker.run();
    const opened = { mongo, db };
    return {
      env,
      stores,
      events,
      activities,
      async close() {
        worker.shutdown();
        await running;
        await opened.db.dropDatabase();
        await opened.mongo.close();
        await env.teardown();
      },
    };
  } catch (error) {
    await db?.dropDatabase();
    await mongo?.close();
    await env.teardown();
    throw error;
  }
}
