import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';
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

/** The environment that points the real `recoup` at a test stack: its database, master key and Temporal. */
export function cliEnvOf(stack: Stack, masterKey: Buffer): Record<string, string> {
  return {
    MONGODB_URI: `${inject('mongoUri')}${stack.dbName}`,
    RECOUP_MASTER_KEY: masterKey.toString('base64'),
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_TASK_QUEUE: stack.taskQueuePrefix,
  };
}
