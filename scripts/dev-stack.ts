/**
 * `npm start`: the whole service on one machine. Starts the Temporal dev server (SQLite, web UI) and
 * FerretDB (SQLite) under the data directory unless TEMPORAL_ADDRESS / MONGODB_URI point elsewhere, then
 * one worker and the API; waits until each answers; prints the URLs and the demo account's credentials.
 * Ctrl-C / SIGTERM stops the API and the worker first, then the servers. Data survives restarts.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../runtime/config.js';
import { loadDevStackConfig } from './dev-stack-config.js';
import { checkPortsFree, waitUntilReady } from './dev-stack-ready.js';
import { ensureDemoAccount, type DemoCredentials } from './demo-account.js';
import { startMongo, startTemporal, type Running } from './servers.js';
import { startService, type Service } from './services.js';
import { readToolchain, toolsDir } from './toolchain-paths.js';
import { connectMongo } from '../store/mongo.js';
import { ensureIndexes } from '../store/indexes.js';
import { createStores } from '../store/index.js';

const root = join(toolsDir, '..');
const servers: Running[] = [];
const services: Service[] = [];
let stopping = false;

const say = (line: string) => process.stdout.write(`dev-stack | ${line}\n`);

/** Stops our processes before the servers they talk to. */
async function stopEverything(): Promise<void> {
  stopping = true;
  while (services.length > 0) await Promise.all(services.splice(0).map((s) => s.stop()));
  while (servers.length > 0) await Promise.all(servers.splice(0).map((s) => s.stop()));
}

async function demoAccount(env: NodeJS.ProcessEnv, file: string): Promise<DemoCredentials> {
  const config = loadConfig(env); // also creates the master key on the first start, before any child reads it
  const { client, db } = await connectMongo(config.mongoUri);
  try {
    await ensureIndexes(db);
    return await ensureDemoAccount(createStores(db, config.masterKey).accounts, file);
  } finally {
    await client.close();
  }
}

function banner(
  urls: { api: string; ui: string | null; mongo: string; metrics: { api: string; worker: string } },
  dataDir: string,
  demo: DemoCredentials,
) {
  const lines = [
    'Recoup is running.',
    `  API          ${urls.api}   (health: ${urls.api}/api/health, OpenAPI: ${urls.api}/api/openapi.json)`,
    `  Temporal UI  ${urls.ui ?? 'not started here (TEMPORAL_ADDRESS is set)'}`,
    `  MongoDB      ${urls.mongo}`,
    `  Metrics      ${urls.metrics.api} (API), ${urls.metrics.worker} (worker)`,
    `  Data         ${dataDir}`,
    `Demo sandbox account (test gateway), saved in ${join(dataDir, 'demo-account.json')}:`,
    `  clientId              ${demo.clientId}`,
    `  apiKey                ${demo.apiKey}`,
    `  publishableKey        ${demo.publishableKey}`,
    `  webhookSigningSecret  ${demo.webhookSigningSecret}`,
    'Stop with Ctrl-C; a restart keeps all data.',
  ];
  for (const line of lines) say(line);
}

async function run(): Promise<number> {
  const cfg = loadDevStackConfig(process.env);
  mkdirSync(cfg.dataDir, { recursive: true });
  const tools = readToolchain();
  await checkPortsFree(cfg);

  let temporalAddress: string;
  let uiUrl: string | null = null;
  if ('external' in cfg.temporal) temporalAddress = cfg.temporal.external;
  else {
    say(`starting the Temporal dev server on 127.0.0.1:${cfg.temporal.port}…`);
    const opts = {
      dbFile: join(cfg.dataDir, 'temporal.db'),
      port: cfg.temporal.port,
      uiPort: cfg.temporal.uiPort,
      namespace: cfg.temporal.namespace,
    };
    servers.push(await startTemporal(tools, { ...opts, headless: false, ownProcessGroup: true }));
    temporalAddress = `127.0.0.1:${cfg.temporal.port}`;
    uiUrl = `http://127.0.0.1:${cfg.temporal.uiPort}`;
  }
  if (stopping) return 0;
  let mongoUri: string;
  if ('external' in cfg.mongo) mongoUri = cfg.mongo.external;
  else {
    say(`starting ${tools.mongo?.kind ?? 'MongoDB'} on 127.0.0.1:${cfg.mongo.port}…`);
    servers.push(
      await startMongo(tools, { dataDir: cfg.dataDir, port: cfg.mongo.port, ownProcessGroup: true }),
    );
    mongoUri = `mongodb://127.0.0.1:${cfg.mongo.port}/recoup`;
  }
  if (stopping) return 0;

  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TEMPORAL_ADDRESS: temporalAddress,
    MONGODB_URI: mongoUri,
    DATA_DIR: cfg.dataDir,
    PORT: String(cfg.apiPort),
  };
  if ('uiPort' in cfg.temporal) env.TEMPORAL_UI_PORT = String(cfg.temporal.uiPort);
  const demo = await demoAccount(env, join(cfg.dataDir, 'demo-account.json'));
  if (stopping) return 0;
  say('starting the worker and the API…');
  const metricsOf = (port: number) => ({
    env: { ...env, METRICS_PORT: String(port) },
    url: `http://127.0.0.1:${port}/metrics`,
  });
  const metrics = { api: metricsOf(cfg.metrics.api), worker: metricsOf(cfg.metrics.worker) };
  services.push(startService('worker', 'worker/main.ts', { cwd: root, env: metrics.worker.env }));
  services.push(startService('api', 'api/main.ts', { cwd: root, env: metrics.api.env }));
  const apiUrl = `http://127.0.0.1:${cfg.apiPort}`;
  const died = Promise.race(services.map((s) => s.exited.then((code) => ({ name: s.name, code }))));
  const ready = await Promise.race([
    waitUntilReady({ apiUrl, uiUrl, temporalAddress, env, isStopping: () => stopping }).then(() => null),
    died,
  ]);
  if (stopping) return 0;
  if (ready) throw new Error(`the ${ready.name} exited (${ready.code}) while starting`);
  const metricsUrls = { api: metrics.api.url, worker: metrics.worker.url };
  banner({ api: apiUrl, ui: uiUrl, mongo: mongoUri, metrics: metricsUrls }, cfg.dataDir, demo);
  const exit = await died;
  if (stopping) return 0;
  throw new Error(`the ${exit.name} exited (${exit.code}); stopping everything`);
}

// A signal only starts the shutdown: run() then returns and the last step below stops the rest in order,
// including a server whose start was still under way when the signal came.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    say(`${signal}: stopping the API and the worker, then the servers…`);
    for (const s of services) void s.stop();
  });

async function finish(code: number): Promise<never> {
  await stopEverything();
  say('stopped.');
  process.exit(code);
}

run().then(finish, async (error: unknown) => {
  if (!stopping)
    process.stderr.write(`dev-stack | ${error instanceof Error ? error.message : String(error)}\n`);
  await finish(stopping ? 0 : 1);
});
