import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';

/** One of our own processes (API or worker) run from its TypeScript entry point through tsx. */
export interface Service {
  name: string;
  process: ChildProcess;
  /** Resolves with the exit code (or signal name) when the process ends, for whatever reason. */
  exited: Promise<number | string>;
  /** SIGTERM, then SIGKILL if it has not ended within the grace period; idempotent. */
  stop: () => Promise<void>;
}

function prefixLines(stream: Readable | null, prefix: string, to: NodeJS.WriteStream): void {
  if (!stream) return;
  createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) =>
    to.write(`${prefix}${line}\n`),
  );
}

/**
 * Starts `node --import tsx <entry>` in `cwd` with `env`, in its own process group so that a Ctrl-C in the
 * terminal reaches only the dev stack, which then stops its children in order. Output lines are
 * prefixed with the service name.
 */
export function startService(
  name: string,
  entry: string,
  opts: { cwd: string; env: NodeJS.ProcessEnv },
): Service {
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
    cwd: opts.cwd,
    env: opts.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const prefix = `${name.padEnd(8)}| `;
  prefixLines(child.stdout, prefix, process.stdout);
  prefixLines(child.stderr, prefix, process.stderr);
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );
  let stopping: Promise<void> | null = null;
  // Once only: a second SIGTERM would end a process in the middle of its own graceful shutdown.
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      child.kill('SIGTERM');
      await exited;
      clearTimeout(timer);
    })());
  return { name, process: child, exited, stop };
}
