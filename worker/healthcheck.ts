import { hostname } from 'node:os';
import { Client, Connection } from '@temporalio/client';
import { loadConfig } from '../runtime/config.js';
import { hasRecentPoller } from './pollers.js';
import { taskQueues } from './task-queues.js';

/**
 * Health check of a worker container (Docker HEALTHCHECK): healthy when a worker of this host polls every
 * task queue, as Temporal itself reports. Exit code 0 healthy, 1 not.
 */
async function main(): Promise<boolean> {
  const config = loadConfig();
  const connection = await Connection.connect({ address: config.temporal.address, connectTimeout: 5_000 });
  try {
    const client = new Client({ connection, namespace: config.temporal.namespace });
    const queues = Object.values(taskQueues(config.temporal.taskQueue));
    const polled = await Promise.all(
      queues.map((q) => hasRecentPoller(client, q, { now: new Date(), identitySuffix: `@${hostname()}` })),
    );
    return polled.every(Boolean);
  } finally {
    await connection.close();
  }
}

main().then(
  (healthy) => {
    process.exitCode = healthy ? 0 : 1;
  },
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  },
);
