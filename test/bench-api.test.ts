import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect, inject, it } from 'vitest';
import { scratchDb } from './support/scratch-db.js';

// `npm run bench:api` end to end, briefly: on the suite's own Temporal and MongoDB (TEMPORAL_ADDRESS and
// MONGODB_URI, as an operator would point it at a deployment's servers), one second per scenario.
// The figures themselves are in the README; this proves the command runs and reports what it promises.

const scratch = scratchDb('bench_api');

it('--json measures every scenario, the baseline, the Temporal floor and webhook lag, with no errors', async () => {
  const db = scratch.db();
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      '--import',
      'tsx',
      'bench/api/main.ts',
      '--duration',
      '1',
      '--connections',
      '2',
      '--accounts',
      '2',
      '--log-level',
      'warn',
      '--json',
    ],
    {
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: inject('temporalAddress'),
        MONGODB_URI: `${inject('mongoUri')}${db.databaseName}`,
      },
      timeout: 240_000,
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  const lines = stdout.trim().split('\n');
  expect(lines).toHaveLength(1); // one JSON object and nothing else on stdout
  const report = JSON.parse(lines[0]!) as {
    scenarios: Record<string, { rps: number; p50Ms: number; p95Ms: number; p99Ms: number; errors: number }>;
    baseline: { rps: number; errors: number };
    temporalFloor: { rps: number; errors: number };
    executeOverheadP50Ms: number;
    throughputRatio: number;
    webhookLagP50Ms: number;
    webhookLagP99Ms: number;
    webhooksReceived: number;
    machine: { cores: number; memoryGiB: number; node: string };
  };
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
  expect(report.webhookLagP50Ms).toBeLessThanOrEqual(report.webhookLagP99Ms);
  expect(report.machine).toMatchObject({ node: process.version });
  // The run's accounts and recoveries are in the database it was pointed at.
  expect(await db.collection('accounts').countDocuments({ name: /^bench-/ })).toBe(2);
  expect(await db.collection('recoveries').countDocuments()).toBeGreaterThan(0);
}, 300_000);
