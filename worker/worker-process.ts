import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { createActivities, type Activities } from '../activities/index.js';
import { createWorkerMetrics } from '../activities/metrics.js';
import { loadConfig } from '../runtime/config.js';
import { createLogger } from '../runtime/logger.js';
import { ensureDailyWorkflows } from '../services/card-sweep.js';
import { createEventPublisher } from '../services/events.js';
import { ensureIndexes } from '../store/indexes.js';
import { checkMasterKey } from '../store/master-key-check.js';
import { connectMongo } from '../store/mongo.js';
import { createStores } from '../store/index.js';
import { createWorkers, runWorkers, workflowsPath } from './create-worker.js';
import { ensureSearchAttributes } from './search-attributes.js';
import { installTelemetry } from './telemetry.js';
import { taskQueues } from './task-queues.js';

/**
 * Composition root of a worker process: config → MongoDB + Temporal → activities → workers, until SIGINT or
 * SIGTERM. `activities` changes the activities as made (a test's worker that dies at a given point).
 */
export async function runWorkerProcess(
  opts: { activities?: (made: Activities) => Activities } = {},
): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.logLevel, 'worker');
  const meter = installTelemetry(config.metrics);
  const { client: mongo, db } = await connectMongo(config.mongoUri);
  await ensureIndexes(db);
  await checkMasterKey(db, config.masterKey);
  const stores = createStores(db, config.masterKey, { cacheMs: config.accountCacheMs });
  const clientConnection = await Connection.connect({ address: config.temporal.address });
  const temporal = new Client({ connection: clientConnection, namespace: config.temporal.namespace });
  const registered = await ensureSearchAttributes(clientConnection, config.temporal.namespace, log);
  if (registered.length > 0) log.info({ searchAttributes: registered }, 'search attributes registered');
  const connection = await NativeConnection.connect({ address: config.temporal.address });
  const queues = taskQueues(config.temporal.taskQueue);
  const made = createActivities({
    stores,
    temporal,
    queues,
    log,
    clock: () => new Date(),
    publicBaseUrl: config.publicBaseUrl,
    events: createEventPublisher({ stores, temporal, queues, clock: () => new Date() }),
    metrics: createWorkerMetrics(meter),
  });
  const activities = opts.activities ? opts.activities(made) : made;
  const workers = await createWorkers({
    connection,
    namespace: config.temporal.namespace,
    queues,
    activities,
    source: { workflowsPath },
  });
  const stop = new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  const daily = await ensureDailyWorkflows(temporal, queues);
  log.info({ queues, ...daily, metrics: config.metrics }, 'worker started');
  await runWorkers(workers, stop);
  await Promise.all([connection.close(), clientConnection.close(), mongo.close()]);
  log.info('worker stopped');
}
