import type { Client } from '@temporalio/client';
import { UsageError } from './errors.js';
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
  /** Writes one warning line to stderr: the result stands, but the operator must know something about it. */
  warn: (line: string) => void;
}

/** What a command does once its arguments are parsed and checked: everything that needs the database. */
export type Run = (ctx: CliContext) => Promise<void>;

/**
 * A command: parses and checks its own arguments (after the command name), throwing usage errors before
 * anything is loaded or connected, and returns what it does.
 */
export type Command = (argv: string[]) => Run;

/** A group of subcommands (`recoup accounts create|list|…`): runs the one named first, or says which exist. */
export function commandGroup(group: string, subcommands: Record<string, Command>): Command {
  return (argv) => {
    const [name, ...rest] = argv;
    const parse = name !== undefined && Object.hasOwn(subcommands, name) ? subcommands[name] : undefined;
    if (!parse)
      throw new UsageError(
        `unknown ${group} command "${name ?? ''}" (one of: ${Object.keys(subcommands).join(', ')}); run \`recoup help\``,
      );
    return parse(rest);
  };
}
