import { randomBytes, randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { IssuerWorld } from '../../../activities/gateways/test-gateway.js';
import { createActivities } from '../../../activities/index.js';
import { createApp } from '../../../api/app.js';
import { createLogger } from '../../../runtime/logger.js';
import { serverClock, startTimeSkippingServer } from '../../../scripts/time-skipping.js';
import { createEventPublisher } from '../../../services/events.js';
import { createStores, type Stores } from '../../../store/index.js';
import { ensureIndexes } from '../../../store/indexes.js';
import { connectMongo } from '../../../store/mongo.js';
import { createWorkers, runWorkers, type WorkflowSource } from '../../../worker/create-worker.js';
import { taskQueues } from '../../../worker/task-queues.js';
import { sequenced, type Sequencer } from './sequencer.js';
import { noopMetricMeter } from '@temporalio/common';
import { createWorkerMetrics } from '../../../activities/metrics.js';

/** Where the servers are: a MongoDB server URI ending in `/`, the toolchain's test server, the workflow code. */
export interface StackServers {
  mongoUri: string;
  testServerPath: string;
  workflows: WorkflowSource;
}

export interface WorkflowStack {
  env: TestWorkflowEnvironment;
  stores: Stores;
  baseUrl: string;
  close: () => Promise<void>;
}

/**
 * The real service on Temporal's time-skipping server — the Koa API, workers with the real activities and
 * workflows, a fresh database — with every test gateway answering from `world` and same-instant steps in
 * the sequencer's order. This composition root is the only place world mode is switched on.
 */
export async function startWorkflowStack(
  servers: StackServers,
  world: IssuerWorld,
  sequencer: Sequencer,
): Promise<WorkflowStack> {
  const env = await startTimeSkippingServer(servers.testServerPath);
  const suffix = randomUUID().slice(0, 8);
  const { client: mongo, db } = await connectMongo(`${servers.mongoUri}bench_${suffix}`);
  await ensureIndexes(db);
  const stores = createStores(db, randomBytes(32));
  const log = createLogger('silent', 'bench');
  const clock = serverClock;
  const temporal = env.client;
  const queues = taskQueues(`bench-${suffix}`);
  const events = createEventPublisher({ stores, temporal, queues, clock });
  const deps = { log, stores, temporal, queues, clock, events, publicBaseUrl: 'http://127.0.0.1' };

  let server: Server | null = null;
  const baseUrl = await new Promise<string>((resolve) => {
    server = createApp(deps).listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server!.address() as AddressInfo).port}`),
    );
  });
  const workers = await createWorkers({
    connection: env.nativeConnection,
    namespace: 'default',
    queues,
    activities: sequenced(
      createActivities({ ...deps, metrics: createWorkerMetrics(noopMetricMeter), testGatewayWorld: world }),
      sequencer,
    ),
    source: servers.workflows,
  });
  let stop = () => undefined as void;
  const done = runWorkers(workers, new Promise<void>((resolve) => (stop = resolve)));

  return {
    env,
    stores,
    baseUrl,
    async close() {
      stop();
      await done;
      await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
      await db.dropDatabase();
      await mongo.close();
      await env.teardown();
    },
  };
}
