import type { Client } from '@temporalio/client';
import type { Config } from '../runtime/config.js';
import type { Stores } from '../store/index.js';
import type { TaskQueues } from '../worker/task-queues.js';

/** What every `recoup` command gets from the composition root (cli/main.ts). */
export interface CliContext {
  config: Config;
  stores: Stores;
  /** Connects to Temporal on first use: only commands that start or inspect workflows need it. */
  temporal: () => Promise<Client>;
  queues: TaskQueues;
  clock: () => Date;
  /** Writes one line to stdout (results); errors are thrown and reported by main. */
  out: (line: string) => void;
}

/** A command: its own arguments (after the command name) and the context. */
export type Command = (argv: string[], ctx: CliContext) => Promise<void>;
