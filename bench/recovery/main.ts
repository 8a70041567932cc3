import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';
import { formatTable } from './report.js';
import { checkThroughWorkflows } from './through-workflows/check.js';
import { runBenchmark } from './run.js';
import { loadWorld, WorldError } from './world.js';

const usage =
  'usage: npm run bench:recovery -- --world <file> [--payments N] [--seed S] [--risk-skip-threshold 0-100] [--json] [--through-workflows K]';
const resultsDir = new URL('../results/', import.meta.url).pathname;

/** A non-negative integer option, or a clear error naming it. */
function count(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value)) throw new WorldError(`--${name} must be a non-negative integer, got "${value}"`);
  return Number(value);
}

function options() {
  try {
    return parseArgs({
      options: {
        world: { type: 'string' },
        payments: { type: 'string' },
        seed: { type: 'string' },
        'risk-skip-threshold': { type: 'string' },
        json: { type: 'boolean', default: false },
        'through-workflows': { type: 'string' },
        help: { type: 'boolean', default: false },
      },
      strict: true,
    }).values;
  } catch (error) {
    throw new WorldError(`${(error as Error).message}\n${usage}`);
  }
}

/**
 * Runs the benchmark: the table (or, with --json, one JSON object) on stdout, a JSON copy in bench/results/;
 * with --through-workflows K, the check that production's workflow runs K payments as the pure engine does.
 */
async function main(): Promise<void> {
  const values = options();
  if (values.help) {
    process.stdout.write(`${usage}\n`);
    return;
  }
  if (!values.world) throw new WorldError(`--world is required\n${usage}`);
  const loaded = loadWorld(values.world);
  // Every merchant's account runs with this riskSkipThreshold instead of its own (or the default 85).
  const threshold = values['risk-skip-threshold'];
  if (threshold !== undefined && count('risk-skip-threshold', threshold, 0) > 100)
    throw new WorldError('--risk-skip-threshold must be between 0 and 100');
  const world =
    threshold === undefined
      ? loaded
      : {
          ...loaded,
          merchants: loaded.merchants.map((m) => ({ ...m, riskSkipThreshold: Number(threshold) })),
        };
  const payments = count('payments', values.payments, 20_000);
  if (payments < 1) throw new WorldError('--payments must be at least 1');
  const seed = count('seed', values.seed, world.seed ?? 1);
  const through = values['through-workflows'];
  if (through !== undefined) {
    const k = count('through-workflows', through, 0);
    if (k < 1) throw new WorldError('--through-workflows must be at least 1');
    process.exitCode = await checkThroughWorkflows(world, k, seed);
    return;
  }

  const started = performance.now();
  const report = runBenchmark(world, payments, seed);
  const seconds = Math.round((performance.now() - started) / 100) / 10;

  process.stdout.write(values.json ? `${JSON.stringify(report)}\n` : `${formatTable(report)}\n`);
  const machine = {
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
  };
  mkdirSync(resultsDir, { recursive: true });
  const variant = threshold === undefined ? '' : `-risk${threshold}`;
  const file = join(
    resultsDir,
    `recovery-${basename(values.world, '.json')}-${payments}-${seed}${variant}.json`,
  );
  writeFileSync(file, `${JSON.stringify({ ...report, seconds, machine }, null, 2)}\n`);
  process.stderr.write(`${payments} payments in ${seconds} s; written to ${file}\n`);
}

try {
  await main();
} catch (error) {
  if (!(error instanceof WorldError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exitCode = 2;
}
