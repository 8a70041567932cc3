import type { Client } from '@temporalio/client';
import type { Logger } from '../runtime/logger.js';
import type { EventPublisher } from '../services/events.js';
import type { Stores } from '../store/index.js';
import type { TaskQueues } from '../worker/task-queues.js';
import type { IssuerWorld } from './gateways/test-gateway.js';
import type { WorkerMetrics } from './metrics.js';

/** What activities may touch, injected by the composition root (worker/worker-process.ts) or by tests. */
export interface ActivityDeps {
  stores: Stores;
  temporal: Client;
  queues: TaskQueues;
  log: Logger;
  clock: () => Date;
  publicBaseUrl: string;
  /** Validates, stores and delivers webhook events. */
  events: EventPublisher;
  /** Counters and timings exported with Temporal's own metrics (a no-op meter where none are exported). */
  metrics: WorkerMetrics;
  /** Benchmark only: the world test gateways answer charges from (`--through-workflows`); unset in production. */
  testGatewayWorld?: IssuerWorld;
}
