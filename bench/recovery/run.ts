import { WorldModel } from './outcome-model.js';
import type { PaymentResult } from './payment-run.js';
import { drawPayments, type Payment } from './payments.js';
import { runEngine } from './strategies/engine.js';
import { fixedSchedules, fixedVariants, runFixed } from './strategies/fixed.js';
import { runOracle } from './strategies/oracle.js';
import type { World } from './world.js';

const day = 86_400_000;

/**
 * The report's strategies in order: the engine, every fixed baseline of `fixedVariants` (each schedule with
 * and without the second card, through every gateway: `<schedule>[+second_card][@<backup gateway>]`), the
 * oracle.
 */
export function strategyNames(world: World): string[] {
  return ['engine', ...fixedVariants(world).map((v) => v.name), 'oracle'];
}

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
  strategies: Record<string, StrategyReport>;
  /** The fixed baseline (schedule × second card × gateway) that recovered the most revenue. */
  bestFixed: string;
  /** Engine's recovered revenue over `bestFixed`'s, from unrounded sums; null when that recovered nothing. */
  engineVsBestFixed: number | null;
  /** Engine's recovered revenue over the oracle's; null when the oracle recovered nothing. */
  engineVsOracle: number | null;
}

const round = (x: number, digits = 4) => (Number.isFinite(x) ? Number(x.toFixed(digits)) : 0);

/** Amount recovered by one strategy, in minor units, unrounded. */
function recoveredAmount(payments: Payment[], results: PaymentResult[]): number {
  return results.reduce((sum, r, i) => sum + (r.recoveredAt === null ? 0 : payments[i]!.amount), 0);
}

/** `numerator / denominator` to 3 decimals, or null when the denominator is 0 (no ratio, not "worse"). */
const ratio = (numerator: number, denominator: number) =>
  denominator > 0 ? round(numerator / denominator, 3) : null;

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

/** Every payment's results under every strategy, by the names of `strategyNames`. */
export function simulate(world: World, count: number, seed: number) {
  const model = new WorldModel(world);
  const payments = drawPayments(world, seed, count);
  const engine = runEngine(model, payments, seed);
  const fixed = fixedVariants(world).map((v) => [
    v.name,
    payments.map((p) => runFixed(model, p, seed, fixedSchedules[v.schedule], v.gateway, v.secondCard)),
  ]);
  const oracle = payments.map((p) => runOracle(model, p, seed));
  const results: Record<string, PaymentResult[]> & { engine: PaymentResult[]; oracle: PaymentResult[] } = {
    ...(Object.fromEntries(fixed) as Record<string, PaymentResult[]>),
    engine,
    oracle,
  };
  return { payments, results };
}

/** The benchmark's report: deterministic for a world, a number of payments and a seed. */
export function runBenchmark(world: World, count: number, seed: number): BenchReport {
  const { payments, results } = simulate(world, count, seed);
  const names = strategyNames(world);
  const strategies = Object.fromEntries(names.map((name) => [name, summarise(payments, results[name]!)]));
  const recovered = (name: string) => recoveredAmount(payments, results[name]!);
  // The best fixed baseline by its unrounded recovered amount (the first of equals, in report order).
  const fixed = fixedVariants(world).map((v) => ({ name: v.name, amount: recovered(v.name) }));
  const best = fixed.reduce((b, f) => (f.amount > b.amount ? f : b));
  const engine = recovered('engine');
  return {
    world: world.name,
    payments: count,
    seed,
    strategies,
    bestFixed: best.name,
    engineVsBestFixed: ratio(engine, best.amount),
    engineVsOracle: ratio(engine, recovered('oracle')),
  };
}
