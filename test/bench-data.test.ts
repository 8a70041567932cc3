import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect, inject, it } from 'vitest';

// `npm run bench:data` end to end on a small account, on the suite's MongoDB server (MONGODB_URI, in a
// scratch database the benchmark drops): it writes the recoveries, runs every read and reports it. The
// figures themselves are in the README.

interface Report {
  recoveries: { measured: number; other: number };
  reads: Record<string, { ms: number; rows: number }>;
  machine: { cores: number; node: string };
}

it('writes an account’s year of recoveries, times each read over them and reports JSON', async () => {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', 'bench/data/main.ts', '--recoveries', '300', '--json'],
    { env: { ...process.env, MONGODB_URI: inject('mongoUri') } },
  );
  const report = JSON.parse(stdout) as Report;
  expect(report.recoveries).toEqual({ measured: 300, other: 30 });
  const rows = Object.fromEntries(Object.entries(report.reads).map(([name, r]) => [name, r.rows]));
  // A year of the measured account's failures, none of the other account's.
  expect(rows['summary, last 365 days']).toBe(300);
  expect(rows['breakdown, last 365 days']).toBe(300);
  expect(rows['summary, last 30 days']).toBeGreaterThan(0);
  expect(rows['summary, last 30 days']).toBeLessThan(100);
  expect(rows['recoveries list, first page']).toBe(20);
  expect(rows['customer export']).toBeGreaterThan(0);
  // Recoveries settled more than 90 days ago (the fixture's recovered third; unpaid failures stay): about a
  // quarter of a year's.
  expect(rows['retention purge, 90 days']).toBeGreaterThan(40);
  expect(rows['retention purge, 90 days']).toBeLessThan(120);
  for (const r of Object.values(report.reads)) expect(r.ms).toBeGreaterThanOrEqual(0);
}, 120_000);
