import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';
import type { CliContext } from '../../cli/context.js';
import { loadConfig } from '../../runtime/config.js';
import type { Stack } from './stack.js';

const bin = fileURLToPath(new URL('../../cli/bin.js', import.meta.url));

/** What one run of the real `recoup` executable printed, and how it exited. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `node cli/bin.js …args` as a child process with `env` added to the environment. */
export function runCli(args: string[], env: Record<string, string>): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [bin, ...args],
      { env: { ...process.env, ...env } },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/**
 * Runs `node cli/bin.js …args` as `runCli` does, but with its stdout a pipe whose reading end is closed before
 * the CLI starts, like `recoup … | head` once `head` has gone: what it wrote to stderr, and how it exited.
 */
export function runCliIntoClosedPipe(
  args: string[],
  env: Record<string, string>,
): Promise<Omit<CliRun, 'stdout'>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject).on('close', (code) => resolve({ code: code ?? 1, stderr }));
  });
}

/** The environment that points the real `recoup` at a test stack: its database, master key and Temporal. */
export function cliEnvOf(stack: Stack, masterKey: Buffer): Record<string, string> {
  return {
    MONGODB_URI: `${inject('mongoUri')}${stack.dbName}`,
    RECOUP_MASTER_KEY: masterKey.toString('base64'),
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_TASK_QUEUE: stack.taskQueuePrefix,
  };
}

/**
 * A context to run a `recoup` command in this process on the stack's own stores and Temporal client (to
 * reach into what it reads, e.g. make a read fail): what it prints and warns goes to `lines`.
 */
export function cliContextOf(stack: Stack, lines: string[]): CliContext {
  return {
    config: loadConfig({
      DATA_DIR: tmpdir(),
      RECOUP_MASTER_KEY: randomBytes(32).toString('base64'),
      MONGODB_URI: inject('mongoUri'),
      TEMPORAL_ADDRESS: inject('temporalAddress'),
    }),
    stores: stack.stores,
    temporal: () => Promise.resolve(stack.temporal),
    queues: stack.queues,
    clock: () => new Date(),
    out: (line) => lines.push(line),
    warn: (line) => lines.push(`warning: ${line}`),
  };
}
