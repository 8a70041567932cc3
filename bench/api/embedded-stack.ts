import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../../scripts/servers.js';

/** What the benchmark drives: the embedded stack it started, or a deployment that is already running. */
export interface EmbeddedStack {
  apiUrl: string;
  mongoUri: string;
  temporalAddress: string;
  masterKey: Buffer;
  stop: () => Promise<void>;
}

/**
 * A Recoup deployment that is already running (`--api-url`): the accounts go into its database sealed with
 * its master key, and the Temporal floor runs on its Temporal, so all three must be given.
 */
export function runningStack(apiUrl: string, env: NodeJS.ProcessEnv): EmbeddedStack {
  const needed = ['MONGODB_URI', 'TEMPORAL_ADDRESS', 'RECOUP_MASTER_KEY'] as const;
  const missing = needed.filter((name) => !env[name]);
  if (missing.length > 0)
    throw new Error(
      `bench:api: --api-url needs ${missing.join(', ')} of the deployment: its accounts are created in its database, sealed with its master key, and the Temporal floor runs on its Temporal`,
    );
  const masterKey = Buffer.from(env.RECOUP_MASTER_KEY!, 'base64');
  if (masterKey.length !== 32)
    throw new Error('bench:api: RECOUP_MASTER_KEY must be 32 bytes, base64-encoded');
  return {
    apiUrl: apiUrl.replace(/\/+$/, ''),
    mongoUri: env.MONGODB_URI!,
    temporalAddress: env.TEMPORAL_ADDRESS!,
    masterKey,
    stop: () => Promise.resolve(),
  };
}

/**
 * Starts the embedded stack (`scripts/dev-stack.ts`, as `npm start`) as a child process on free ports with its
 * own data directory, and waits until it says it is running. With TEMPORAL_ADDRESS or MONGODB_URI set it
 * uses those servers instead of starting its own, and its API and worker take task queues of their own, so
 * a deployment's workers on the same Temporal never run its work.
 */
export async function startEmbeddedStack(opts: {
  dataDir: string;
  env: NodeJS.ProcessEnv;
}): Promise<EmbeddedStack> {
  const external = { temporal: process.env.TEMPORAL_ADDRESS, mongo: process.env.MONGODB_URI };
  const [port, temporalPort, uiPort, mongoPort] = await Promise.all([
    freePort(),
    freePort(),
    freePort(),
    freePort(),
  ]);
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'scripts/dev-stack.ts'], {
    env: {
      ...process.env,
      ...opts.env,
      DATA_DIR: opts.dataDir,
      PORT: String(port),
      TEMPORAL_PORT: String(temporalPort),
      TEMPORAL_UI_PORT: String(uiPort),
      MONGO_PORT: String(mongoPort),
      ...(external.temporal ? { TEMPORAL_TASK_QUEUE: `bench-${randomUUID().slice(0, 8)}` } : {}),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error('the embedded stack did not start within 3 minutes')),
      180_000,
    );
    child.once('exit', (code) => reject(new Error(`the embedded stack exited with ${code}`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('Recoup is running.')) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  // Keep draining its output (the services' logs) so the child never blocks on a full pipe.
  child.stdout!.resume();
  return {
    apiUrl: `http://127.0.0.1:${port}`,
    mongoUri: external.mongo ?? `mongodb://127.0.0.1:${mongoPort}/recoup`,
    temporalAddress: external.temporal ?? `127.0.0.1:${temporalPort}`,
    masterKey: Buffer.from(readFileSync(join(opts.dataDir, 'master.key'), 'utf8').trim(), 'base64'),
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
