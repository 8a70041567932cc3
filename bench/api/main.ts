/**
 * `npm run bench:api`: load on the embedded stack (execute that resolves at once, execute that queues,
 * status lookups, pulse, paywall status), the same execute load on a bare Koa baseline, and webhook
 * delivery lag to a local HTTPS receiver. Prints a table, or with --json one JSON object. The stack's
 * Temporal and MongoDB are its own unless TEMPORAL_ADDRESS / MONGODB_URI name others; the load goes to
 * 127.0.0.1 only, and every loop is bounded by --duration.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { Settings } from '../../domain/settings.js';
import { freePort } from '../../scripts/servers.js';
import { createStores } from '../../store/index.js';
import { connectMongo } from '../../store/mongo.js';
import { createTestTls } from '../../test/support/tls.js';
import { runningStack, startEmbeddedStack } from './embedded-stack.js';
import { percentile, runScenario, type Scenario, type ScenarioResult } from './load.js';
import { benchOptions } from './options.js';
import { startLagReceiver } from './receiver.js';

const opts = benchOptions(process.argv.slice(2));
const say = (line: string) => (opts.json ? process.stderr : process.stdout).write(`${line}\n`);
// A running deployment is checked before anything is started.
const running = opts.apiUrl ? runningStack(opts.apiUrl, process.env) : null;
const dir = mkdtempSync(join(tmpdir(), 'recoup-bench-'));
// The receiver's certificate: one the deployment's workers already trust, or a CA made for this run that the
// embedded stack's worker is told to trust.
const made = opts.receiverCert ? null : createTestTls(dir);
const receiver = await startLagReceiver(made ?? { certFile: opts.receiverCert!, keyFile: opts.receiverKey! });
say(
  running ? `bench:api: measuring the API at ${running.apiUrl}…` : 'bench:api: starting the embedded stack…',
);
const stack =
  running ??
  (await startEmbeddedStack({
    dataDir: join(dir, 'data'),
    env: { ...(made ? { NODE_EXTRA_CA_CERTS: made.trustFile } : {}), LOG_LEVEL: opts.logLevel },
  }));

// Accounts through the operator's store code, with the limit raised so the load is not throttled.
const { client: mongo, db } = await connectMongo(stack.mongoUri);
const stores = createStores(db, stack.masterKey);
const accounts: Array<{ apiKey: string; publishableKey: string; account: { id: string } }> = [];
for (let i = 0; i < opts.accounts; i += 1) {
  accounts.push(
    await stores.accounts.create({
      name: `bench-${i}`,
      settings: Settings.parse({ webhookUrl: receiver.url, rateLimitPerMinute: 100_000 }),
      gateways: [
        { name: 'test', kind: 'test', test: true, credentials: { latencyMs: String(opts.gatewayLatencyMs) } },
      ],
    }),
  );
}

/** Starts one of the comparison servers as its own process; resolves once it listens. */
async function comparison(script: string, target: string) {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', script, String(port), target, String(opts.gatewayLatencyMs)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  return { url: `http://127.0.0.1:${port}`, child };
}
const baseline = await comparison('bench/api/baseline-server.ts', stack.mongoUri);
const floor = await comparison('bench/api/temporal-floor.ts', stack.temporalAddress);

const account = (n: number) => accounts[n % accounts.length]!;
const json = { 'Content-Type': 'application/json' };
const succeededIds: Array<{ key: string; id: string }> = [];
let amount = 50;
const execute = (code: string) => (n: number) => ({
  method: 'POST' as const,
  path: '/api/recovery/execute',
  headers: { ...json, 'X-API-KEY': account(n).apiKey },
  // A card and an amount of its own per request, as in real traffic: neither the 5-minute velocity rule
  // nor the card networks' per-card caps (Visa: 15 attempts in 30 days) come into the measurement.
  body: JSON.stringify({
    paymentMethodToken: `tok_card_${(amount += 1)}`,
    amount,
    originalDeclineCode: code,
    customerEmail: `c${n % 5000}@example.com`,
  }),
});

const scenarios: Scenario[] = [
  {
    name: 'executeSuccess',
    url: stack.apiUrl,
    expectStatus: 200,
    build: execute('try_again_later'),
  },
  { name: 'executeQueued', url: stack.apiUrl, expectStatus: 202, build: execute('insufficient_funds') },
  {
    name: 'status',
    url: stack.apiUrl,
    expectStatus: 200,
    build: (n) => {
      const hit = succeededIds[n % succeededIds.length]!;
      return { method: 'GET', path: `/api/recovery/status/${hit.id}`, headers: { 'X-API-KEY': hit.key } };
    },
  },
  {
    name: 'pulse',
    url: stack.apiUrl,
    expectStatus: 200,
    build: (n) => ({
      method: 'POST',
      path: '/api/recovery/pulse',
      headers: { ...json, 'X-API-KEY': account(n).apiKey },
      body: JSON.stringify({ amount: 1999, transactionId: `ch_${n}` }),
    }),
  },
  {
    name: 'paywall',
    url: stack.apiUrl,
    expectStatus: 200,
    build: (n) => ({
      method: 'GET',
      path: `/api/recovery/paywall-status?customerEmail=c${n % 5000}%40example.com`,
      headers: { 'X-API-KEY': account(n).publishableKey },
    }),
  },
];

// Warm-up, not measured: the worker's first workflows and the floor's first start pay for loading code.
const warmUp = { connections: Math.min(4, opts.connections), duration: 2 };
say('bench:api: warming up…');
await runScenario(scenarios[0]!, warmUp);
await runScenario({ ...scenarios[0]!, url: floor.url }, warmUp);
// Webhook lag counts only the events of the measured scenarios, not the warm-up's cold first workflows.
const measuredFrom = Date.now();

const results: Record<string, ScenarioResult> = {};
for (const s of scenarios) {
  say(`bench:api: ${s.name} for ${opts.duration} s over ${opts.connections} connections…`);
  results[s.name] = await runScenario(s, opts);
  if (s.name === 'executeSuccess') {
    // The status scenario looks up these recoveries, each with its own account's key.
    const keyOf = new Map(accounts.map((a) => [a.account.id, a.apiKey]));
    const done = await db
      .collection<{ _id: string; accountId: string }>('recoveries')
      .find(
        { state: 'succeeded', accountId: { $in: accounts.map((a) => a.account.id) } },
        { projection: { accountId: 1 } },
      )
      .limit(50_000)
      .toArray();
    for (const d of done) succeededIds.push({ key: keyOf.get(d.accountId)!, id: d._id });
  }
}
say('bench:api: baseline execute…');
const baselineResult = await runScenario(
  { name: 'baseline', url: baseline.url, expectStatus: 200, build: execute('try_again_later') },
  opts,
);
say('bench:api: Temporal floor execute…');
const floorResult = await runScenario(
  { name: 'temporalFloor', url: floor.url, expectStatus: 200, build: execute('try_again_later') },
  opts,
);
// Let the last deliveries land before reading the lag.
await new Promise((r) => setTimeout(r, 5_000));
const lags = receiver.lagsSince(measuredFrom).sort((a, b) => a - b);

const success = results.executeSuccess!;
const report = {
  scenarios: results,
  baseline: baselineResult,
  temporalFloor: floorResult,
  executeOverheadP50Ms: success.p50Ms - baselineResult.p50Ms,
  executeOverheadP99Ms: success.p99Ms - baselineResult.p99Ms,
  throughputRatio: Math.round((success.rps / baselineResult.rps) * 1000) / 1000,
  // None received (a deployment's workers that do not trust the receiver): no figure rather than 0.
  webhookLagP50Ms: lags.length > 0 ? percentile(lags, 50) : null,
  webhookLagP99Ms: lags.length > 0 ? percentile(lags, 99) : null,
  webhooksReceived: lags.length,
  machine: { cores: cpus().length, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version },
  options: opts,
};

baseline.child.kill('SIGTERM');
floor.child.kill('SIGTERM');
await mongo.close();
await stack.stop();
await receiver.close();
rmSync(dir, { recursive: true, force: true });

if (opts.json) {
  process.stdout.write(`${JSON.stringify(report)}\n`);
} else {
  const rows = [
    ...Object.entries(results),
    ['baseline', baselineResult] as const,
    ['temporalFloor', floorResult] as const,
  ];
  say('\nscenario         rps    p50 ms  p95 ms  p99 ms  errors');
  for (const [name, r] of rows)
    say(
      `${name.padEnd(15)} ${String(r.rps).padStart(6)} ${String(r.p50Ms).padStart(7)} ${String(r.p95Ms).padStart(7)} ${String(r.p99Ms).padStart(7)} ${String(r.errors).padStart(7)}`,
    );
  say(
    `\nexecute overhead over the baseline: p50 ${report.executeOverheadP50Ms} ms, p99 ${report.executeOverheadP99Ms} ms; throughput ratio ${report.throughputRatio}`,
  );
  say(
    lags.length > 0
      ? `webhook lag (outcome recorded → receiver): p50 ${report.webhookLagP50Ms} ms, p99 ${report.webhookLagP99Ms} ms over ${lags.length} deliveries`
      : 'webhook lag: no webhook reached the receiver (do the workers trust its certificate?)',
  );
  say(`machine: ${report.machine.cores} cores, ${report.machine.memoryGiB} GiB, Node ${report.machine.node}`);
}
