import { randomBytes, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { inject } from 'vitest';
import { noopMetricMeter } from '@temporalio/common';
import type { Registry } from 'prom-client';
import type { ActivityDeps } from '../../activities/deps.js';
import { createActivities, type Activities } from '../../activities/index.js';
import { createWorkerMetrics, type WorkerMetrics } from '../../activities/metrics.js';
import { createApp } from '../../api/app.js';
import { quietTemporalRuntime } from '../../scripts/time-skipping.js';
import { createLogger } from '../../runtime/logger.js';
import { createEventPublisher, type EventPublisher } from '../../services/events.js';
import { Settings, type GatewayConfig } from '../../domain/settings.js';
import { ensureIndexes } from '../../store/indexes.js';
import { connectMongo } from '../../store/mongo.js';
import { createStores, type Stores } from '../../store/index.js';
import { createWorkers, runWorkers } from '../../worker/create-worker.js';
import { taskQueues, type TaskQueues } from '../../worker/task-queues.js';

/** A webhook URL on loopback that refuses connections: tests never send traffic off this machine. */
export const unreachableWebhookUrl = 'https://127.0.0.1:9/webhooks';

export interface Stack {
  baseUrl: string;
  stores: Stores;
  temporal: Client;
  queues: TaskQueues;
  events: EventPublisher;
  /** The task-queue prefix (TEMPORAL_TASK_QUEUE) and database name, for worker processes of this stack. */
  taskQueuePrefix: string;
  dbName: string;
  /** Creates an account with a test gateway (unless given others) and returns its credentials. */
  createAccount: (
    settings?: Record<string, unknown>,
    gateways?: GatewayConfig[],
  ) => ReturnType<Stores['accounts']['create']>;
  close: () => Promise<void>;
}

/**
 * The real service for one test file: a fresh database on the shared MongoDB server, a Koa app on a free
 * port, a Temporal client and (unless `worker: false`) workers on task queues of this file alone.
 */
export async function startStack(
  opts: {
    clock?: () => Date;
    worker?: boolean;
    /** Use this database (e.g. one the CLI also works on) instead of a fresh one; it is still dropped at close. */
    dbName?: string;
    /** The master key sealing secrets; random unless the test shares the database with another process. */
    masterKey?: Buffer;
    /** Run on this Temporal server instead of the shared dev server (e.g. the time-skipping test server). */
    temporal?: { client: Client; nativeConnection: NativeConnection };
    /** Where the API's request metrics and the activities' metrics go (none are kept by default). */
    metrics?: { api: Registry; worker: WorkerMetrics };
    /** How long execute waits for the first phase before answering 202 (25 s by default). */
    firstPhaseDeadlineMs?: number;
    /** How long a platform's new card settles before it is charged: none unless given (production's 2 minutes). */
    platformCardSettleMs?: number;
    /** The worker's activities as the test has them: one that does something more first, say. */
    activities?: (made: Activities) => Activities;
  } = {},
): Promise<Stack> {
  const clock = opts.clock ?? (() => new Date());
  const log = createLogger('silent', 'test');
  const suffix = randomUUID().slice(0, 8);
  const { client: mongo, db } = await connectMongo(`${inject('mongoUri')}${opts.dbName ?? `t_${suffix}`}`);
  await ensureIndexes(db);
  const stores = createStores(db, opts.masterKey ?? randomBytes(32));
  const address = inject('temporalAddress');
  const connection = opts.temporal ? null : await Connection.connect({ address });
  const temporal = opts.temporal?.client ?? new Client({ connection: connection!, namespace: 'default' });
  const taskQueuePrefix = `t-${suffix}`;
  const queues = taskQueues(taskQueuePrefix);
  const events = createEventPublisher({ stores, temporal, queues, clock });

  // Every answer is checked against its route's OpenAPI entry; the file fails at close on any mismatch.
  const undeclared: string[] = [];
  let server: Server | null = null;
  const baseUrl = await new Promise<string>((resolve) => {
    const app = createApp({
      undeclared: (problem) => undeclared.push(problem),
      log,
      stores,
      temporal,
      queues,
      publicBaseUrl: 'http://127.0.0.1',
      clock,
      events,
      ...(opts.metrics ? { metrics: opts.metrics.api } : {}),
      ...(opts.firstPhaseDeadlineMs ? { firstPhaseDeadlineMs: opts.firstPhaseDeadlineMs } : {}),
      platformCardSettleMs: opts.platformCardSettleMs ?? 0,
    });
    server = app.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server!.address() as AddressInfo).port}`),
    );
  });

  let stopWorkers: (() => void) | null = null;
  let workersDone: Promise<void> = Promise.resolve();
  let nativeConnection: NativeConnection | null = null;
  if (opts.worker !== false) {
    quietTemporalRuntime();
    nativeConnection = opts.temporal?.nativeConnection ?? (await NativeConnection.connect({ address }));
    const made = createActivities({
      stores,
      temporal,
      queues,
      log,
      clock,
      publicBaseUrl: baseUrl,
      events,
      metrics: opts.metrics?.worker ?? createWorkerMetrics(noopMetricMeter),
    });
    const activities = opts.activities ? opts.activities(made) : made;
    const workers: Worker[] = await createWorkers({
      connection: nativeConnection,
      namespace: 'default',
      queues,
      activities,
      source: { workflowBundle: { codePath: inject('workflowBundlePath') } },
    });
    const until = new Promise<void>((resolve) => (stopWorkers = resolve));
    workersDone = runWorkers(workers, until);
  }

  return {
    baseUrl,
    stores,
    temporal,
    queues,
    events,
    taskQueuePrefix,
    dbName: db.databaseName,
    createAccount: (
      settings = {},
      gateways = [{ name: 'test', kind: 'test', test: true, credentials: {} }],
    ) =>
      stores.accounts.create({
        name: 'Test merchant',
        settings: Settings.parse({ webhookUrl: unreachableWebhookUrl, ...settings }),
        gateways,
      }),
    async close() {
      stopWorkers?.();
      await workersDone;
      await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
      if (connection) {
        await nativeConnection?.close();
        await connection.close();
      }
      await db.dropDatabase();
      await mongo.close();
      if (undeclared.length > 0)
        throw new Error(
          `Answers the OpenAPI document does not declare:\n${[...new Set(undeclared)].join('\n')}`,
        );
    },
  };
}

/** What the worker's activities get on this stack, to call one directly (no metrics kept unless given). */
export function activityDeps(
  stack: Stack,
  metrics: WorkerMetrics = createWorkerMetrics(noopMetricMeter),
): ActivityDeps {
  return {
    stores: stack.stores,
    temporal: stack.temporal,
    queues: stack.queues,
    events: stack.events,
    log: createLogger('silent', 'test'),
    clock: () => new Date(),
    publicBaseUrl: stack.baseUrl,
    metrics,
  };
}

/** A JSON response as a test sees it. */
export interface JsonResponse<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
}

/** Sends a request over real HTTP and parses the JSON answer. */
export async function call<T = Record<string, unknown>>(
  baseUrl: string,
  method: string,
  path: string,
  opts: { key?: string; body?: unknown; headers?: Record<string, string>; raw?: string } = {},
): Promise<JsonResponse<T>> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers['X-API-KEY'] = opts.key;
  let body: string | undefined = opts.raw;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['Content-Type'] ??= 'application/json';
  }
  const res = await fetch(baseUrl + path, { method, headers, ...(body !== undefined ? { body } : {}) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : null) as T };
}
