import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import { MongoClient } from 'mongodb';
import { allSearchAttributeKeys, cliTypeName } from '../domain/search-attributes.js';
import type { Toolchain } from './toolchain-paths.js';

/** Recoup's custom search attributes by name, with their types as Temporal's CLI spells them. */
export const searchAttributes: Readonly<Record<string, string>> = Object.fromEntries(
  allSearchAttributeKeys.map((key) => [key.name, cliTypeName(key.type)]),
);

/** A local server process and the address it answers on. */
export interface Running {
  address: string;
  process: ChildProcess;
  stop: () => Promise<void>;
}

/** Asks the OS for a free TCP port on loopback. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

function stopper(child: ChildProcess): () => Promise<void> {
  return () =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      child.kill('SIGTERM');
    });
}

async function waitFor(
  what: string,
  child: ChildProcess,
  probe: () => Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${what} exited with code ${child.exitCode}`);
    if (await probe()) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${what} did not answer within ${timeoutMs / 1000} s`);
}

function spawnLogged(cmd: string, args: string[], logFile: string | null, detached = false): ChildProcess {
  // detached: a process group of its own, so a terminal's Ctrl-C reaches only the parent, which stops it in order.
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], detached });
  const chunks: string[] = [];
  const keep = (b: Buffer) => {
    chunks.push(b.toString());
    if (chunks.length > 200) chunks.shift();
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  child.once('exit', (code) => {
    if (code && code !== 0 && logFile === null)
      process.stderr.write(`${cmd} exited ${code}:\n${chunks.join('')}\n`);
  });
  return child;
}

/** Starts FerretDB (SQLite files under `dataDir`) or mongod, and waits until it answers. */
export async function startMongo(
  tools: Toolchain,
  opts: { dataDir: string; port?: number; ownProcessGroup?: boolean },
): Promise<Running> {
  if (!tools.mongo) throw new Error('No MongoDB server in the toolchain');
  const port = opts.port ?? (await freePort());
  const dir = join(opts.dataDir, 'mongo');
  mkdirSync(dir, { recursive: true });
  const args =
    tools.mongo.kind === 'ferretdb'
      ? ['--listen-addr', `127.0.0.1:${port}`, '--sqlite-dir', dir]
      : ['--bind_ip', '127.0.0.1', '--port', String(port), '--dbpath', dir];
  const child = spawnLogged(tools.mongo.path, args, null, opts.ownProcessGroup);
  const address = `mongodb://127.0.0.1:${port}/`;
  await waitFor(
    `MongoDB server (${tools.mongo.kind})`,
    child,
    async () => {
      const client = new MongoClient(address, { serverSelectionTimeoutMS: 500 });
      try {
        await client.db('admin').command({ ping: 1 });
        return true;
      } catch {
        return false;
      } finally {
        await client.close();
      }
    },
    30_000,
  );
  return { address, process: child, stop: stopper(child) };
}

/**
 * Starts the Temporal dev server with `namespace` (and `default`, which it always has), both holding our
 * search attributes; UI on `uiPort` unless headless.
 */
export async function startTemporal(
  tools: Toolchain,
  opts: {
    dbFile?: string;
    port?: number;
    uiPort?: number;
    headless?: boolean;
    ownProcessGroup?: boolean;
    namespace?: string;
  },
): Promise<Running> {
  if (!tools.temporal) throw new Error('No Temporal CLI in the toolchain');
  const port = opts.port ?? (await freePort());
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(port),
    '--namespace',
    opts.namespace ?? 'default',
    '--log-level',
    'error',
  ];
  args.push('--http-port', String(await freePort()), '--metrics-port', String(await freePort()));
  // WAL with synchronous=NORMAL: a commit no longer waits for its own fsync. A crash of any process loses
  // nothing; only an OS crash or power loss can roll back the last commits. Measured here: 4× the workflow
  // starts per second of SQLite's default rollback journal (docs/benchmarks.md).
  if (opts.dbFile)
    args.push(
      '--db-filename',
      opts.dbFile,
      '--sqlite-pragma',
      'journal_mode=wal',
      '--sqlite-pragma',
      'synchronous=normal',
    );
  // The dev server re-reads the search attributes from SQLite on every use so that ones added at run time
  // show at once; ours are written into each namespace it creates, so its cache can be trusted (README,
  // Benchmarks: queued executes +30 % in alternating runs of bench:api). One an older database lacks, the
  // worker adds at start and waits for (the namespace cache, refreshed every few seconds, not this one).
  args.push('--dynamic-config-value', 'system.forceSearchAttributesCacheRefreshOnRead=false');
  if (opts.headless ?? true) args.push('--headless');
  else args.push('--ui-port', String(opts.uiPort ?? port + 1000));
  for (const [name, type] of Object.entries(searchAttributes))
    args.push('--search-attribute', `${name}=${type}`);
  const child = spawnLogged(tools.temporal, args, null, opts.ownProcessGroup);
  const address = `127.0.0.1:${port}`;
  await waitFor(
    'Temporal dev server',
    child,
    async () => {
      try {
        const conn = await Connection.connect({ address, connectTimeout: 500 });
        try {
          await conn.workflowService.getSystemInfo({});
          return true;
        } finally {
          await conn.close();
        }
      } catch {
        return false;
      }
    },
    60_000,
  );
  return { address, process: child, stop: stopper(child) };
}
