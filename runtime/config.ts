import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { ConfigurationError } from './configuration-error.js';

const port = z.coerce.number().int().min(1).max(65535);

const EnvSchema = z.object({
  PORT: port.default(3000),
  HOST: z.string().default('127.0.0.1'),
  PUBLIC_BASE_URL: z.url({ protocol: /^https?$/, error: 'must be an http or https URL' }).optional(),
  DATA_DIR: z.string().default('.data'),
  TEMPORAL_ADDRESS: z.string().default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: z.string().default('default'),
  TEMPORAL_TASK_QUEUE: z
    .string()
    .regex(/^[A-Za-z0-9._-]+$/)
    .default('recoup'),
  TEMPORAL_UI_PORT: port.default(8233),
  MONGODB_URI: z.string().default('mongodb://127.0.0.1:27017/recoup'),
  RECOUP_MASTER_KEY: z
    .string()
    .refine((s) => Buffer.from(s, 'base64').length === 32, 'must be 32 bytes, base64-encoded')
    .optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  ACCOUNT_CACHE_SECONDS: z.coerce.number().min(0).max(300).default(5),
  METRICS_PORT: port.optional(),
  METRICS_HOST: z.union([z.ipv4(), z.ipv6()]).default('127.0.0.1'),
});

/** Every environment variable an API or worker process reads (each documented in the README). */
export const configVariables = Object.keys(EnvSchema.shape) as Array<keyof typeof EnvSchema.shape>;

/** The variables that have no default and must always be set. */
export const requiredConfigVariables = configVariables.filter(
  (name) => !EnvSchema.shape[name].safeParse(undefined).success,
);

/** The whole configuration of an API or worker process, parsed once at start. */
export interface Config {
  port: number;
  host: string;
  publicBaseUrl: string;
  dataDir: string;
  temporal: { address: string; namespace: string; taskQueue: string; uiPort: number };
  mongoUri: string;
  masterKey: Buffer;
  logLevel: z.infer<typeof EnvSchema>['LOG_LEVEL'];
  /** How long a process answers account and API-key reads from its own copy. */
  accountCacheMs: number;
  /** Where the process serves Prometheus metrics (`/metrics`); null: it serves none. */
  metrics: { host: string; port: number } | null;
}

/**
 * Reads the master key from the environment, else from the data directory; the service creates it there on
 * its first start (`create`), a tool that must use the service's key (the CLI) is refused instead.
 */
function loadMasterKey(fromEnv: string | undefined, dataDir: string, create: boolean): Buffer {
  if (fromEnv) return Buffer.from(fromEnv, 'base64');
  const file = join(dataDir, 'master.key');
  if (existsSync(file)) {
    const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
    if (key.length !== 32) throw new ConfigurationError(`${file} must hold 32 bytes, base64-encoded`);
    return key;
  }
  if (!create)
    throw new ConfigurationError(
      `No master key: RECOUP_MASTER_KEY is not set and ${file} does not exist. Set DATA_DIR to the service's data directory, or RECOUP_MASTER_KEY to its key.`,
    );
  mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(32);
  writeFileSync(file, key.toString('base64'), { mode: 0o600, flag: 'wx' });
  return key;
}

/**
 * One line per bad variable of `names`: set to an empty (or blank) value, refused before anything reads it
 * (never taken as unset, its default, nor coerced, an empty PORT as 0: such a value is most often a
 * template or an `.env` line that lost it), else what its schema's `issues` say of it.
 */
export function variableProblems(
  names: readonly string[],
  env: NodeJS.ProcessEnv,
  issues: readonly z.core.$ZodIssue[] = [],
): string[] {
  return names.flatMap((name) =>
    env[name]?.trim() === ''
      ? [`${name}: must not be empty (unset it to use its default)`]
      : issues.filter((i) => i.path[0] === name).map((i) => `${name}: ${i.message}`),
  );
}

/**
 * Parses environment variables into a typed Config; throws one error naming every bad variable, an empty
 * one included (`variableProblems`).
 */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  opts: { createMasterKey: boolean } = { createMasterKey: true },
): Config {
  const parsed = EnvSchema.safeParse(env);
  const problems = variableProblems(configVariables, env, parsed.error?.issues);
  if (!parsed.success || problems.length > 0)
    throw new ConfigurationError(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  const e = parsed.data;
  const dataDir = resolve(e.DATA_DIR);
  return {
    port: e.PORT,
    host: e.HOST,
    publicBaseUrl: (e.PUBLIC_BASE_URL ?? `http://localhost:${e.PORT}`).replace(/\/$/, ''),
    dataDir,
    temporal: {
      address: e.TEMPORAL_ADDRESS,
      namespace: e.TEMPORAL_NAMESPACE,
      taskQueue: e.TEMPORAL_TASK_QUEUE,
      uiPort: e.TEMPORAL_UI_PORT,
    },
    mongoUri: e.MONGODB_URI,
    masterKey: loadMasterKey(e.RECOUP_MASTER_KEY, dataDir, opts.createMasterKey),
    logLevel: e.LOG_LEVEL,
    accountCacheMs: e.ACCOUNT_CACHE_SECONDS * 1000,
    metrics: e.METRICS_PORT === undefined ? null : { host: e.METRICS_HOST, port: e.METRICS_PORT },
  };
}
