import type { Client, Connection } from '@temporalio/client';
import { loadConfig, type Config } from '../runtime/config.js';
import { ConfigurationError } from '../runtime/configuration-error.js';
import { errorLine } from '../runtime/error-line.js';
import { ensureIndexes } from '../store/indexes.js';
import { checkMasterKey } from '../store/master-key-check.js';
import { connectMongo } from '../store/mongo.js';
import { createStores } from '../store/index.js';
import { taskQueues } from '../worker/task-queues.js';
import { accountsCommand, accountsUsage } from './commands/accounts.js';
import { connectorsCommand, connectorsUsage } from './commands/connectors.js';
import { customersCommand, customersUsage } from './commands/customers.js';
import { recoveriesCommand, recoveriesUsage } from './commands/recoveries.js';
import { reportsCommand, reportsUsage } from './commands/reports.js';
import { webhooksCommand, webhooksUsage } from './commands/webhooks.js';
import type { CliContext, Command } from './context.js';
import { exitCodeFor, UsageError } from './errors.js';

const commands: Record<string, Command> = {
  accounts: accountsCommand,
  connectors: connectorsCommand,
  customers: customersCommand,
  recoveries: recoveriesCommand,
  reports: reportsCommand,
  webhooks: webhooksCommand,
};

const usage = [
  'recoup: the Recoup operator CLI. It works on the MongoDB of MONGODB_URI (and DATA_DIR or RECOUP_MASTER_KEY).',
  '',
  'Usage:',
  ...accountsUsage.map((l) => `  ${l}`),
  ...webhooksUsage.map((l) => `  ${l}`),
  ...connectorsUsage.map((l) => `  ${l}`),
  ...recoveriesUsage.map((l) => `  ${l}`),
  ...reportsUsage.map((l) => `  ${l}`),
  ...customersUsage.map((l) => `  ${l}`),
];

/** The MongoDB URI without its password, for error messages. */
function safeUri(uri: string): string {
  return uri.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');
}

function configOrUsageError(): Config {
  try {
    // Never a new master key: secrets sealed with a key the service does not have could not be opened.
    return loadConfig(process.env, { createMasterKey: false });
  } catch (error) {
    throw new UsageError(errorLine(error));
  }
}

/**
 * A Temporal client made on first use, so commands that never need Temporal neither connect nor load the
 * SDK (which takes a noticeable part of a second).
 */
function lazyTemporal(config: Config) {
  let connecting: Promise<Connection> | null = null;
  return {
    async client(): Promise<Client> {
      const sdk = await import('@temporalio/client');
      connecting ??= sdk.Connection.connect({ address: config.temporal.address });
      return new sdk.Client({ connection: await connecting, namespace: config.temporal.namespace });
    },
    async close(): Promise<void> {
      if (connecting) await (await connecting).close();
    },
  };
}

/**
 * Composition root of the CLI: the command's arguments → config → MongoDB → stores → the command. Returns
 * the exit code. Arguments come first: a usage error is told at once, not after MongoDB's connect timeout.
 */
async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === 'help' || argv.includes('--help') || argv.includes('-h')) {
    // Asked for help: stdout and success; called with nothing: the same text as a usage error.
    const stream = name === undefined ? process.stderr : process.stdout;
    for (const line of usage) stream.write(`${line}\n`);
    return name === undefined ? 2 : 0;
  }
  const command = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (!command) throw new UsageError(`unknown command "${name}"; run \`recoup help\``);
  const run = command(rest);
  const config = configOrUsageError();
  const mongo = await connectMongo(config.mongoUri).catch((error: unknown) => {
    throw new Error(`cannot reach MongoDB at ${safeUri(config.mongoUri)}: ${errorLine(error)}`);
  });
  const temporal = lazyTemporal(config);
  try {
    await ensureIndexes(mongo.db);
    // A key other than the service's would seal secrets the service cannot open: refused before anything.
    await checkMasterKey(mongo.db, config.masterKey).catch((error: unknown) => {
      throw error instanceof ConfigurationError ? new UsageError(errorLine(error)) : error;
    });
    const ctx: CliContext = {
      config,
      stores: createStores(mongo.db, config.masterKey),
      temporal: () => temporal.client(),
      queues: taskQueues(config.temporal.taskQueue),
      clock: () => new Date(),
      out: (line) => process.stdout.write(`${line}\n`),
      warn: (line) => process.stderr.write(`recoup: warning: ${line}\n`),
    };
    await run(ctx);
    return 0;
  } finally {
    await mongo.client.close();
    await temporal.close();
  }
}

// A reader that stops early (`recoup webhooks list --json | head`) closes the pipe: the rest of the output is
// dropped quietly, where Node would print a stack trace and exit 1, and the command carries on to its end and
// its own exit code (`webhooks resend-all … | head -1` still resends every batch). Any other failure to
// write stdout is an error still.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE' && error.code !== 'ERR_STREAM_DESTROYED') throw error;
});

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`recoup: ${errorLine(error)}\n`);
    process.exitCode = exitCodeFor(error);
  },
);
