import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, expect, inject, it } from 'vitest';
import { scratchDb } from './support/scratch-db.js';
import { startStack, type Stack } from './support/stack.js';

// `npm run bench:api` end to end, briefly (one second per scenario): on the suite's own Temporal and
// MongoDB (TEMPORAL_ADDRESS and MONGODB_URI, as an operator would point it at a deployment's servers), and
// against an API that is already running (--api-url). The figures themselves are in the README; this
// proves the command runs and reports what it promises.

const scratch = scratchDb('bench_api');
const stacks: Stack[] = [];
afterAll(async () => {
  for (const stack of stacks) await stack.close();
});

interface Report {
  scenarios: Record<
    string,
    { rps: number; p50Ms: number; p95Ms: number; p99Ms: number; errors: number; requests: number }
  >;
  baseline: { rps: number; errors: number };
  temporalFloor: { rps: number; errors: number };
  executeOverheadP50Ms: number;
  throughputRatio: number;
  webhookLagP50Ms: number | null;
  webhookLagP99Ms: number | null;
  webhooksReceived: number;
  machine: { cores: number; memoryGiB: number; node: string };
}

/** Runs the benchmark for one second per scenario; returns its one line of JSON, parsed. */
async function bench(args: string[], env: NodeJS.ProcessEnv): Promise<Report> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      '--import',
      'tsx',
      'bench/api/main.ts',
      // Enough accounts that no key meets the paywall's fixed 120 requests a minute in a second of load.
      ...['--duration', '1', '--connections', '2', '--accounts', '20', '--log-level', 'warn', '--json'],
      ...args,
    ],
    { env: { ...process.env, ...env }, timeout: 240_000, maxBuffer: 16 * 1024 * 1024 },
  );
  const lines = stdout.trim().split('\n');
  expect(lines).toHaveLength(1); // one JSON object and nothing else on stdout
  return JSON.parse(lines[0]!) as Report;
}

/** Every scenario, the baseline and the floor measured without errors, and webhooks timed. */
function expectComplete(report: Report): void {
  expect(Object.keys(report.scenarios).sort()).toEqual([
    'executeQueued',
    'executeSuccess',
    'paywall',
    'pulse',
    'status',
  ]);
  for (const [name, s] of Object.entries(report.scenarios)) {
    expect(s.errors, name).toBe(0);
    expect(s.rps, name).toBeGreaterThan(0);
    expect(s.p50Ms, name).toBeLessThanOrEqual(s.p99Ms);
  }
  for (const comparison of [report.baseline, report.temporalFloor]) {
    expect(comparison.errors).toBe(0);
    expect(comparison.rps).toBeGreaterThan(0);
  }
  expect(typeof report.executeOverheadP50Ms).toBe('number');
  expect(report.throughputRatio).toBeGreaterThan(0);
  // Every recovery the run recovered sent a signed recovery.success to the local HTTPS receiver.
  expect(report.webhooksReceived).toBeGreaterThan(0);
  // Only the measured recoveries' webhooks (recovery.success of executeSuccess), not the warm-up's: at most
  // one per request, and the two connections' last requests.
  expect(report.webhooksReceived).toBeLessThanOrEqual(report.scenarios.executeSuccess!.requests + 2);
  expect(report.webhookLagP50Ms).toBeLessThanOrEqual(report.webhookLagP99Ms!);
  expect(report.machine).toMatchObject({ node: process.version });
}

it('on given Temporal and MongoDB servers: every scenario, the comparisons and webhook lag, no errors', async () => {
  const db = scratch.db();
  const report = await bench([], {
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    MONGODB_URI: `${inject('mongoUri')}${db.databaseName}`,
  });
  expectComplete(report);
  // The run's accounts and recoveries are in the database it was pointed at.
  expect(await db.collection('accounts').countDocuments({ name: /^bench-/ })).toBe(20);
  expect(await db.collection('recoveries').countDocuments()).toBeGreaterThan(0);
}, 300_000);

it('against a running API (--api-url) whose workers trust the receiver certificate it is given', async () => {
  const masterKey = randomBytes(32);
  const stack = await startStack({ masterKey });
  stacks.push(stack);
  const report = await bench(
    [
      '--api-url',
      stack.baseUrl,
      '--receiver-cert',
      inject('tlsCertFile'),
      '--receiver-key',
      inject('tlsKeyFile'),
    ],
    {
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      MONGODB_URI: `${inject('mongoUri')}${stack.dbName}`,
      RECOUP_MASTER_KEY: masterKey.toString('base64'),
    },
  );
  expectComplete(report);
  expect(await stack.stores.db.collection('accounts').countDocuments({ name: /^bench-/ })).toBe(20);
}, 300_000);

it('--api-url without the deployment’s database, Temporal and master key is refused, naming them', async () => {
  const run = bench(['--api-url', 'http://127.0.0.1:9'], {
    TEMPORAL_ADDRESS: '',
    MONGODB_URI: '',
    RECOUP_MASTER_KEY: '',
  });
  await expect(run).rejects.toThrow(/--api-url needs MONGODB_URI, TEMPORAL_ADDRESS, RECOUP_MASTER_KEY/);
});
