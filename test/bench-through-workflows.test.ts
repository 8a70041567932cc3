import { describe, expect, inject, it } from 'vitest';
import { formatMismatches } from '../bench/recovery/through-workflows/compare.js';
import { runThroughWorkflows } from '../bench/recovery/through-workflows/index.js';
import { loadWorld } from '../bench/recovery/world.js';

// The benchmark's claim that production runs the benchmarked strategy, checked: payments of a world run
// through the real API, recovery workflow and activities on the time-skipping server, the test gateway
// answering from the world, and attempt for attempt they match the pure engine's run.

const servers = () => ({
  mongoUri: inject('mongoUri'),
  testServerPath: inject('testServerPath'),
  workflows: { workflowBundle: { codePath: inject('workflowBundlePath') } },
});

async function check(world: string, count: number) {
  const loaded = loadWorld(new URL(`../bench/worlds/${world}.json`, import.meta.url).pathname);
  const report = await runThroughWorkflows(loaded, count, loaded.seed ?? 1, servers());
  expect(formatMismatches(report.drawn, report.mismatches)).toBe('');
  return report;
}

describe('--through-workflows: production runs the benchmarked strategy', () => {
  it('the default world: 20 payments, attempts and outcomes identical to the pure run', async () => {
    const report = await check('default', 20);
    expect(report.drawn).toHaveLength(20);
  }, 120_000);

  it('Friday paydays, with a backup gateway and second cards: 20 payments identical', async () => {
    const report = await check('friday-paydays', 20);
    const charges = report.charges.flat();
    expect(charges.some((c) => c.gateway === 'acquirer-b')).toBe(true);
    expect(charges.some((c) => c.token.endsWith('_second'))).toBe(true);
  }, 120_000);
});
