/**
 * `npm run bench:data [-- --recoveries 20000 --seed 1 --json]`: how long the reads that scan an account's
 * recoveries take as the account grows — reports, the recovery listing, a customer's export, the data
 * retention purge — on the embedded FerretDB (or the MongoDB of MONGODB_URI, in a scratch database it
 * drops). The recoveries are written straight to the collection (a year of one account, and a tenth as many
 * of another), then each read runs once to warm up and three times measured; the median is reported.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { startMongo, type Running } from '../../scripts/servers.js';
import { readToolchain } from '../../scripts/toolchain-paths.js';
import { exportCustomer } from '../../services/customer-export.js';
import { purgeAccountData } from '../../services/data-retention.js';
import { listRecoveries } from '../../services/recovery-list.js';
import { breakdownOf, summaryOf } from '../../services/reports.js';
import { collections } from '../../store/collections.js';
import { createStores } from '../../store/index.js';
import { ensureIndexes } from '../../store/indexes.js';
import { connectMongo } from '../../store/mongo.js';
import type { RecoveryDoc } from '../../store/recoveries.js';
import { recoveryDocs } from './fixture.js';

const Options = z.object({
  recoveries: z.coerce.number().int().min(100).max(2_000_000).default(20_000),
  seed: z.coerce.number().int().default(1),
  json: z.boolean().default(false),
});
const { values } = parseArgs({
  args: process.argv.slice(2),
  options: { recoveries: { type: 'string' }, seed: { type: 'string' }, json: { type: 'boolean' } },
});
const parsed = Options.safeParse(values);
if (!parsed.success) {
  process.stderr.write(`bench:data: ${z.prettifyError(parsed.error)}\n`);
  process.exit(2);
}
const opts = parsed.data;
const say = (line: string) => (opts.json ? process.stderr : process.stdout).write(`${line}\n`);
const day = 86_400_000;

const dir = mkdtempSync(join(tmpdir(), 'recoup-bench-data-'));
let server: Running | null = null;
const external = process.env.MONGODB_URI;
if (!external) server = await startMongo(readToolchain(), { dataDir: dir });
const dbName = `recoup_bench_data_${randomBytes(4).toString('hex')}`;
const { client, db } = await connectMongo(`${external ?? server!.address}${external ? '' : dbName}`);
const bench = external ? client.db(dbName) : db;

try {
  await ensureIndexes(bench);
  const stores = createStores(bench, randomBytes(32));
  const now = new Date();
  const big = 'acct_bench_big';
  const small = 'acct_bench_small';
  const customers = Math.max(1, Math.floor(opts.recoveries / 3));
  say(
    `bench:data: writing ${opts.recoveries} recoveries of one account and ${opts.recoveries / 10} of another…`,
  );
  const loadStarted = performance.now();
  const collection = bench.collection<RecoveryDoc>(collections.recoveries);
  for (const [accountId, count, seed] of [
    [big, opts.recoveries, opts.seed],
    [small, Math.floor(opts.recoveries / 10), opts.seed + 1],
  ] as const) {
    const docs = recoveryDocs({ accountId, count, customers, days: 365, now, seed });
    for (let i = 0; i < docs.length; i += 1000) await collection.insertMany(docs.slice(i, i + 1000));
  }
  const loadSeconds = (performance.now() - loadStarted) / 1000;

  const results: Record<string, { ms: number; rows: number }> = {};
  /** Runs `read` once to warm up, then three times, and records the median and how many rows it gave. */
  async function measure<T>(name: string, read: () => Promise<T>, rows: (result: T) => number) {
    let result = await read();
    const times: number[] = [];
    for (let i = 0; i < 3; i += 1) {
      const started = performance.now();
      result = await read();
      times.push(performance.now() - started);
    }
    results[name] = { ms: Math.round(times.sort((a, b) => a - b)[1] ?? 0), rows: rows(result) };
    say(`  ${name}: ${results[name].ms} ms (${results[name].rows} rows)`);
  }

  const lastYear = { from: new Date(now.getTime() - 365 * day).toISOString(), to: now.toISOString() };
  const failures = (r: { byDeclineCode: Array<{ failedPayments: number }> }) =>
    r.byDeclineCode.reduce((sum, c) => sum + c.failedPayments, 0);
  await measure(
    'summary, last 30 days',
    () => summaryOf(stores, big, {}, now),
    (r) => r.failedPayments,
  );
  await measure(
    'summary, last 365 days',
    () => summaryOf(stores, big, lastYear, now),
    (r) => r.failedPayments,
  );
  await measure('breakdown, last 30 days', () => breakdownOf(stores, big, {}, now), failures);
  await measure('breakdown, last 365 days', () => breakdownOf(stores, big, lastYear, now), failures);
  const page = (r: Awaited<ReturnType<typeof listRecoveries>>) => ('docs' in r ? r.docs.length : 0);
  await measure('recoveries list, first page', () => listRecoveries(stores, big, { limit: 20 }), page);
  await measure(
    'recoveries list, status unknown',
    () => listRecoveries(stores, big, { status: 'unknown', limit: 20 }),
    page,
  );
  await measure(
    'customer export',
    () => exportCustomer(stores, big, { customerEmail: 'customer7@example.com' }, now),
    (r) => r.recoveries.length,
  );
  // Last: it deletes. Recoveries settled more than 90 days ago go (the recovered ones; failures still owed stay).
  const purgeStarted = performance.now();
  const purged = await purgeAccountData(stores, { id: big, days: 90 }, now);
  const purge = { ms: Math.round(performance.now() - purgeStarted), rows: purged.recoveries };
  results['retention purge, 90 days'] = purge;
  say(`  retention purge, 90 days: ${purge.ms} ms (${purge.rows} rows)`);

  const report = {
    server: external ? 'MONGODB_URI' : 'FerretDB (embedded, SQLite)',
    recoveries: { measured: opts.recoveries, other: Math.floor(opts.recoveries / 10) },
    seed: opts.seed,
    loadSeconds: Math.round(loadSeconds * 10) / 10,
    reads: results,
    maxRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    machine: { cores: cpus().length, memoryGb: Math.round(totalmem() / 2 ** 30), node: process.version },
  };
  if (opts.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else say(`Wrote in ${report.loadSeconds} s; the bench process peaked at ${report.maxRssMb} MB.`);
} finally {
  if (external) await bench.dropDatabase();
  await client.close();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
}
