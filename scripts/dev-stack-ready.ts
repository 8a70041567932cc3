import { createServer } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import { loadConfig } from '../runtime/config.js';
import { hasRecentPoller } from '../worker/pollers.js';
import { taskQueues } from '../worker/task-queues.js';
import type { DevStackConfig } from './dev-stack-config.js';

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** Fails with one sentence naming the variable to change when a port the dev stack needs is taken. */
export async function checkPortsFree(cfg: DevStackConfig): Promise<void> {
  const wanted: Array<[number, string]> = [
    [cfg.apiPort, 'PORT'],
    [cfg.metrics.api, 'METRICS_PORT'],
    [cfg.metrics.worker, 'METRICS_PORT'],
  ];
  if ('port' in cfg.temporal)
    wanted.push([cfg.temporal.port, 'TEMPORAL_PORT'], [cfg.temporal.uiPort, 'TEMPORAL_UI_PORT']);
  if ('port' in cfg.mongo) wanted.push([cfg.mongo.port, 'MONGO_PORT']);
  for (const [port, variable] of wanted)
    if (!(await portFree(port)))
      throw new Error(
        `port ${port} is already in use (is Recoup already running?); set ${variable} to another port`,
      );
}

async function answers(url: string, check: (res: Response) => Promise<boolean>): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    return await check(res);
  } catch {
    return false;
  }
}

async function apiHealthy(apiUrl: string): Promise<boolean> {
  return answers(`${apiUrl}/api/health`, async (res) => {
    const body = (await res.json()) as { checks?: { mongo?: string; temporal?: string } };
    return res.status === 200 && body.checks?.mongo === 'ok' && body.checks.temporal === 'ok';
  });
}

/**
 * Waits until the API's health check passes with both dependencies, the Temporal UI answers HTTP, and a
 * worker polls every task queue. Gives up after three minutes (the first start bundles the workflows).
 */
export async function waitUntilReady(opts: {
  apiUrl: string;
  uiUrl: string | null;
  temporalAddress: string;
  env: NodeJS.ProcessEnv;
  isStopping: () => boolean;
}): Promise<void> {
  const config = loadConfig(opts.env);
  const queues = Object.values(taskQueues(config.temporal.taskQueue));
  const connection = await Connection.connect({ address: opts.temporalAddress });
  const client = new Client({ connection, namespace: config.temporal.namespace });
  const pending = new Set(['api', 'worker', ...(opts.uiUrl ? ['ui'] : [])]);
  const deadline = Date.now() + 180_000;
  try {
    while (pending.size > 0 && !opts.isStopping()) {
      if (Date.now() > deadline) throw new Error(`not ready within 3 minutes: ${[...pending].join(', ')}`);
      if (pending.has('api') && (await apiHealthy(opts.apiUrl))) pending.delete('api');
      if (opts.uiUrl && pending.has('ui') && (await answers(opts.uiUrl, (res) => Promise.resolve(res.ok))))
        pending.delete('ui');
      if (pending.has('worker')) {
        const now = new Date();
        const polled = await Promise.all(queues.map((q) => hasRecentPoller(client, q, { now })));
        if (polled.every(Boolean)) pending.delete('worker');
      }
      if (pending.size > 0) await new Promise((r) => setTimeout(r, 300));
    }
  } finally {
    await connection.close();
  }
}
