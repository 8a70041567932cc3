import { Client, Connection } from '@temporalio/client';
import { loadConfig } from '../runtime/config.js';
import { ConfigurationError } from '../runtime/configuration-error.js';
import { errorLine } from '../runtime/error-line.js';
import { createLogger } from '../runtime/logger.js';
import { createEventPublisher } from '../services/events.js';
import { ensureIndexes } from '../store/indexes.js';
import { checkMasterKey } from '../store/master-key-check.js';
import { connectMongo } from '../store/mongo.js';
import { createStores } from '../store/index.js';
import { taskQueues } from '../worker/task-queues.js';
import { createApp } from './app.js';
import { createApiRegistry, serveMetrics } from './metrics.js';

/** Composition root of an API process: config → MongoDB + Temporal client → Koa app → HTTP server. */
async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.logLevel, 'api');
  const { client: mongo, db } = await connectMongo(config.mongoUri);
  await ensureIndexes(db);
  await checkMasterKey(db, config.masterKey);
  const connection = await Connection.connect({ address: config.temporal.address });
  const temporal = new Client({ connection, namespace: config.temporal.namespace });
  const stores = createStores(db, config.masterKey, { cacheMs: config.accountCacheMs });
  const queues = taskQueues(config.temporal.taskQueue);
  const clock = () => new Date();
  const metrics = config.metrics ? createApiRegistry() : undefined;
  const app = createApp({
    log,
    stores,
    temporal,
    queues,
    publicBaseUrl: config.publicBaseUrl,
    clock,
    events: createEventPublisher({ stores, temporal, queues, clock }),
    ...(metrics ? { metrics } : {}),
  });
  const metricsServer = metrics && config.metrics ? await serveMetrics(metrics, config.metrics) : undefined;
  if (config.metrics) log.info(config.metrics, 'metrics at /metrics');
  const server = app.listen(config.port, config.host, () =>
    log.info({ port: config.port, host: config.host }, 'api listening'),
  );
  // Finished rate-limit windows are deleted here: FerretDB has no TTL indexes.
  const purge = setInterval(() => {
    stores.rateLimits
      .purgeExpired(clock())
      .catch((error: unknown) => log.warn({ err: error }, 'rate-limit purge failed'));
  }, 5 * 60_000);
  purge.unref();
  const stop = () => {
    log.info('api stopping');
    clearInterval(purge);
    metricsServer?.close();
    server.close(() => void Promise.all([connection.close(), mongo.close()]).then(() => process.exit(0)));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error: unknown) => {
  // A configuration error names the variable to fix: its stack would only bury that line.
  console.error(error instanceof ConfigurationError ? errorLine(error) : error);
  process.exit(1);
});
