import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, Connection } from '@temporalio/client';
import { cardHealthSweepWorkflowId, dataRetentionWorkflowId } from '../domain/card-health.js';
import { freePort } from '../scripts/servers.js';
import { taskQueues } from '../worker/task-queues.js';
import { sumOf } from './support/prometheus.js';
import { call } from './support/stack.js';

const root = fileURLToPath(new URL('..', import.meta.url));

/** A running `npm start` (the dev-stack script) and what it printed once ready. */
interface Started {
  child: ChildProcess;
  apiUrl: string;
  uiUrl: string;
  apiKey: string;
  output: () => string;
}

let dataDir: string;
let env: NodeJS.ProcessEnv;
const running: ChildProcess[] = [];

function field(text: string, label: string): string {
  const match = new RegExp(`^dev-stack \\|\\s+${label}\\s+(\\S+)`, 'm').exec(text);
  if (!match?.[1]) throw new Error(`dev stack printed no ${label}:\n${text}`);
  return match[1];
}

/** Starts the dev stack and resolves once it prints that it is running (or fails with its output). */
function startDevStack(): Promise<Started> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/dev-stack.ts'], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.push(child);
  let text = '';
  child.stdout.on('data', (b: Buffer) => (text += b.toString()));
  child.stderr.on('data', (b: Buffer) => (text += b.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`dev stack not ready in 150 s:\n${text}`)), 150_000);
    child.once('exit', (code) => reject(new Error(`dev stack exited ${code}:\n${text}`)));
    child.stdout.on('data', () => {
      if (!text.includes('Stop with Ctrl-C')) return;
      clearTimeout(timer);
      resolve({
        child,
        apiUrl: field(text, 'API'),
        uiUrl: field(text, 'Temporal UI'),
        apiKey: field(text, 'apiKey'),
        output: () => text,
      });
    });
  });
}

/** Sends SIGTERM and resolves with the exit code once the dev stack has stopped everything. */
function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve(child.exitCode);
    child.once('exit', (code) => resolve(code));
    child.kill('SIGTERM');
  });
}

function refusesConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

/** The status of a daily workflow the worker started, once it has (null if not within 20 s). */
async function dailyStatus(workflowId: (taskQueue: string) => string): Promise<string | null> {
  const connection = await Connection.connect({ address: `127.0.0.1:${env.TEMPORAL_PORT}` });
  try {
    const handle = new Client({ connection }).workflow.getHandle(workflowId(taskQueues('recoup').recovery));
    for (let i = 0; i < 40; i += 1) {
      const found = await handle.describe().catch(() => null);
      if (found) return found.status.name;
      await new Promise((r) => setTimeout(r, 500));
    }
    return null;
  } finally {
    await connection.close();
  }
}

/** A free port whose next port is free too (the dev stack serves the worker's metrics there). */
async function freePortPair(): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port < 65535 && (await refusesConnections(port + 1))) return port;
  }
}

/** The worker's and the API's metrics once the demo account's payment is recovered through them. */
async function metricsAfterOneRecovery(apiUrl: string, apiKey: string) {
  const paid = await call(apiUrl, 'POST', '/api/recovery/execute', {
    key: apiKey,
    body: { paymentMethodToken: 'tok_visa', originalDeclineCode: 'try_again_later', amount: 1500 },
  });
  expect(paid.status).toBe(200);
  const scrape = async (port: number) => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return { api: await scrape(Number(env.METRICS_PORT)), worker: await scrape(Number(env.METRICS_PORT) + 1) };
}

const statusOfUnknown = (apiUrl: string, key?: string) =>
  call(apiUrl, 'GET', `/api/recovery/status/${randomUUID()}`, key ? { key } : {});

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'recoup-dev-stack-'));
  const { MONGODB_URI: _m, TEMPORAL_ADDRESS: _t, ...rest } = process.env;
  env = {
    ...rest,
    DATA_DIR: dataDir,
    PORT: String(await freePort()),
    TEMPORAL_PORT: String(await freePort()),
    TEMPORAL_UI_PORT: String(await freePort()),
    MONGO_PORT: String(await freePort()),
    METRICS_PORT: String(await freePortPair()),
    LOG_LEVEL: 'warn',
  };
});
afterAll(async () => {
  await Promise.all(running.map(stop));
  rmSync(dataDir, { recursive: true, force: true });
});

describe('npm start (the dev stack)', () => {
  it('runs the whole service, stops cleanly on SIGTERM, and keeps the demo account across restarts', async () => {
    const first = await startDevStack();
    expect(first.apiUrl).toBe(`http://127.0.0.1:${env.PORT}`);
    expect(first.uiUrl).toBe(`http://127.0.0.1:${env.TEMPORAL_UI_PORT}`);

    const health = await call(first.apiUrl, 'GET', '/api/health');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ status: 'ok', checks: { mongo: 'ok', temporal: 'ok' } });
    const ui = await fetch(first.uiUrl);
    expect(ui.status).toBe(200);
    expect(await ui.text()).toMatch(/<html/i);

    expect(first.apiKey).toMatch(/^sk_/);
    expect((await statusOfUnknown(first.apiUrl)).status).toBe(401);
    expect((await statusOfUnknown(first.apiUrl, first.apiKey)).status).toBe(404);
    expect(statSync(join(dataDir, 'demo-account.json')).mode & 0o777).toBe(0o600);
    expect(await dailyStatus(cardHealthSweepWorkflowId)).toBe('RUNNING');
    expect(await dailyStatus(dataRetentionWorkflowId)).toBe('RUNNING');

    const metricsPort = Number(env.METRICS_PORT);
    expect(first.output()).toContain(
      `Metrics      http://127.0.0.1:${metricsPort}/metrics (API), http://127.0.0.1:${metricsPort + 1}/metrics (worker)`,
    );
    const metrics = await metricsAfterOneRecovery(first.apiUrl, first.apiKey);
    const execute = { method: 'POST', route: '/api/recovery/execute', status: '200' };
    expect(sumOf(metrics.api, 'recoup_http_request_duration_seconds_count', execute)).toBe(1);
    expect(sumOf(metrics.api, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    const charge = { gateway_kind: 'test', operation: 'charge', outcome: 'approved' };
    expect(sumOf(metrics.worker, 'recoup_gateway_requests_total', charge)).toBe(1);
    expect(sumOf(metrics.worker, 'recoup_recoveries_ended_total', { state: 'succeeded' })).toBe(1);
    // Temporal's own: the recovery workflow's tasks and its activities, with their task queues.
    const recoveryQueue = { task_queue: taskQueues('recoup').recovery };
    expect(sumOf(metrics.worker, 'temporal_workflow_completed_total', recoveryQueue)).toBeGreaterThanOrEqual(
      1,
    );
    expect(sumOf(metrics.worker, 'temporal_workflow_task_execution_latency_count')).toBeGreaterThan(0);

    expect(await stop(first.child)).toBe(0);
    expect(first.output()).toMatch(/dev-stack \| stopped\.\s*$/);
    await expect(fetch(`${first.apiUrl}/api/health`)).rejects.toThrow();
    await expect(fetch(first.uiUrl)).rejects.toThrow();
    expect(await refusesConnections(Number(env.MONGO_PORT))).toBe(true);

    const second = await startDevStack();
    expect(second.apiKey).toBe(first.apiKey);
    expect((await statusOfUnknown(second.apiUrl, second.apiKey)).status).toBe(404);
    expect(await stop(second.child)).toBe(0);
  }, 300_000);
});
