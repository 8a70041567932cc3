import { WorldModel } from '../outcome-model.js';
import type { PaymentResult } from '../payment-run.js';
import { drawPayments } from '../payments.js';
import { runEngine } from '../strategies/engine.js';
import type { World } from '../world.js';
import { compareRuns, type Mismatch } from './compare.js';
import { runThroughApi } from './drive.js';
import { createSequencer } from './sequencer.js';
import { startWorkflowStack, type StackServers } from './stack.js';
import { worldIssuers } from './world-issuers.js';

const day = 86_400_000;
/** 28 years of the Gregorian calendar between 1901 and 2099: the same weekdays, leap years and DST dates. */
const calendarCycle = 10_227 * day;

/**
 * The world moved forward by whole 28-year calendar cycles until it starts after `now`: the time-skipping
 * server's clock starts at today and only moves forward, and a cycle later every weekday, payday, leap day
 * and daylight-saving change falls on the same dates.
 */
export function worldAfter(world: World, now: number): World {
  const start = Date.parse(world.start);
  const cycles = Math.max(0, Math.ceil((now + day - start) / calendarCycle));
  const shifted = new Date(start + cycles * calendarCycle);
  if (shifted.getUTCFullYear() + 1 >= 2100) throw new Error('The 28-year calendar cycle ends in 2100');
  return { ...world, start: shifted.toISOString() };
}

export interface ThroughWorkflowsReport {
  payments: number;
  mismatches: Mismatch[];
  /** The payments, drawn from the world as moved in time. */
  drawn: ReturnType<typeof drawPayments>;
  /** Every payment's charges as the world saw them from the workflows. */
  charges: PaymentResult['charges'][];
}

/**
 * `--through-workflows K`: the world's first K payments run through the real API, recovery workflow and
 * activities on the time-skipping server, the test gateway answering from the world, and the pure engine
 * runs the same K payments; every payment's charges and outcome must be identical.
 */
export async function runThroughWorkflows(
  original: World,
  count: number,
  seed: number,
  servers: StackServers,
): Promise<ThroughWorkflowsReport> {
  const model = new WorldModel(worldAfter(original, Date.now()));
  const payments = drawPayments(model.world, seed, count);
  const pure = runEngine(model, payments, seed);
  const world = worldIssuers(model, payments, seed);
  const sequencer = createSequencer();
  const stack = await startWorkflowStack(servers, world.issuers, sequencer);
  try {
    const docs = await runThroughApi(stack, sequencer, model.world, payments);
    const seen = world.results();
    return {
      payments: count,
      mismatches: compareRuns(payments, pure, seen, docs),
      drawn: payments,
      charges: seen.map((r) => r.charges),
    };
  } finally {
    await stack.close();
  }
}
