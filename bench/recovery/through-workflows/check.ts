import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMongo } from '../../../scripts/servers.js';
import { readToolchain } from '../../../scripts/toolchain-paths.js';
import { workflowsPath } from '../../../worker/create-worker.js';
import type { World } from '../world.js';
import { formatMismatches } from './compare.js';
import { runThroughWorkflows } from './index.js';

/**
 * The command line's `--through-workflows K`: FerretDB and the time-skipping server from the toolchain, the
 * check, a mismatch report (or one line) on stdout. Returns the exit code: 1 when any payment differs.
 */
export async function checkThroughWorkflows(world: World, count: number, seed: number): Promise<number> {
  const tools = readToolchain();
  if (!tools.testServer)
    throw new Error('The toolchain has no time-skipping test server: run `npm run toolchain`.');
  const dir = mkdtempSync(join(tmpdir(), 'recoup-bench-'));
  const mongo = await startMongo(tools, { dataDir: dir });
  const started = performance.now();
  try {
    const report = await runThroughWorkflows(world, count, seed, {
      mongoUri: mongo.address,
      testServerPath: tools.testServer,
      workflows: { workflowsPath },
    });
    const seconds = Math.round((performance.now() - started) / 100) / 10;
    if (report.mismatches.length === 0) {
      process.stdout.write(`${count} payments: attempts and outcomes identical\n`);
    } else {
      process.stdout.write(`${formatMismatches(report.drawn, report.mismatches)}\n`);
      process.stdout.write(`${report.mismatches.length} of ${count} payments differ\n`);
    }
    process.stderr.write(`${count} payments through the workflows in ${seconds} s\n`);
    return report.mismatches.length === 0 ? 0 : 1;
  } finally {
    await mongo.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
