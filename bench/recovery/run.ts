import { WorldModel } from './outcome-model.js';
import type { PaymentResult } from './payment-run.js';
import { drawPayments, type Payment } from './payments.js';
import { runEngine } from './strategies/engine.js';
import { fixedSchedules, runFixed, type FixedStrategy } from './strategies/fixed.js';
import { runOracle } from './strategies/oracle.js';
import type { World } from './world.js';

const day = 86_400_000;

export const strategyNames = ['engine', 'fixed_8_in_14', 'fixed_3_5_7', 'immediate_x3', 'oracle'] as const;
export type StrategyName = (typeof strategyNames)[number];
const fixedNames = ['fixed_8_in_14', 'fixed_3_5_7', 'immediate_x3'] as const satisfies FixedStrategy[];

export interface StrategyReport {
  recoveredRevenueShare: number;
  recoveryRate: number;
  attemptsPerPayment: number;
  meanDaysToRecover: number;
  networkViolations: number;
}

export interface BenchReport {
  world: string;
  payments: number;
  seed: number;
  strategies: Record<StrategyName, StrategyReport>;
  engineVsBestFixed: number;
  engineVsOracle: number;
}

const round = (x: number, digits = 4) => (Number.isFinite(x) ? Number(x.toFixed(digits)) : 0);

/** Sums one strategy's per-payment results into the figures. */
export function summarise(payments: Payment[], results: PaymentResult[]): StrategyReport {
  let failed = 0;
  let recovered = 0;
  let count = 0;
  let attempts = 0;
  let days = 0;
  let violations = 0;
  results.forEach((r, i) => {
    const p = payments[i]!;
    failed += p.amount;
    attempts += r.attempts;
    violations += r.violations;
    if (r.recoveredAt !== null) {
      recovered += p.amount;
      count += 1;
      days += (r.recoveredAt - p.failedAt) / day;
    }
  });
  return {
    recoveredRevenueShare: round(recovered / failed),
    recoveryRate: round(count / payments.length),
    attemptsPerPayment: round(attempts / payments.length, 3),
    meanDaysToRecover: round(count ? days / count : 0, 2),
    networkViolations: violations,
  };
}

/** Every payment's results under every strategy (the engine's, for `--through-workflows`, kept whole). */
export function simulate(world: World, count: number, seed: number) {
  const model = new WorldModel(world);
  const payments = drawPayments(world, seed, count);
  const results = {} as Record<StrategyName, PaymentResult[]>;
  results.engine = runEngine(model, payments, seed);
  for (const name of fixedNames)
    results[name] = payments.map((p) => runFixed(model, p, seed, fixedSchedules[name]));
  results.oracle = payments.map((p) => runOracle(model, p, seed));
  return { payments, results };
}

/** The benchmark's report: deterministic for a world, a number of payments and a seed. */
export function runBenchmark(world: World, count: number, seed: number): BenchReport {
  const { payments, results } = simulate(world, count, seed);
  const strategies = Object.fromEntries(
    strategyNames.map((name) => [name, summarise(payments, results[name])]),
  ) as Record<StrategyName, StrategyReport>;
  const share = (name: StrategyName) => strategies[name].recoveredRevenueShare;
  const bestFixed = Math.max(...fixedNames.map(share));
  return {
    world: world.name,
    payments: count,
    seed,
    strategies,
    engineVsBestFixed: round(bestFixed > 0 ? share('engine') / bestFixed : 0, 3),
    engineVsOracle: round(share('oracle') > 0 ? share('engine') / share('oracle') : 0, 3),
  };
}
