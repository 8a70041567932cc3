import {
  optionHistory,
  optionProbability,
  type Plan,
  type PlanFacts,
  type PlanOption,
} from '../../domain/plan.js';
import type { Prediction } from '../../domain/recovery.js';
import { baseRate, depthFactor } from '../../domain/success-model.js';

// planNextAttempt the straightforward way, as it read before it was memoised for the benchmark: every
// candidate hour asks `optionProbability` (the readable definition) for every option. test/plan-speed.test.ts
// holds the fast planner to every decision of this one; change both together when the strategy changes.

const hour = 3_600_000;
const day = 24 * hour;
const patiencePerDay = 0.99;
const readyShare = 0.9;

function slotAt(
  facts: PlanFacts,
  t: number,
): { options: PlanOption[]; probs: number[]; probability: number } {
  const options = facts.options
    .filter((o) => (facts.notBefore[o.token] ?? 0) <= t)
    .slice(0, facts.attemptsLeft);
  const probs = options.map((o) => optionProbability(facts, o, t));
  return { options, probs, probability: 1 - probs.reduce((miss, p) => miss * (1 - p), 1) };
}

function recoveryChance(facts: PlanFacts, best: { at: number; probability: number; options: PlanOption[] }) {
  const slots = Math.max(
    1,
    Math.min(
      Math.floor(facts.attemptsLeft / best.options.length),
      1 + Math.floor((facts.horizonEnd - best.at) / day),
    ),
  );
  const { code, depth } = optionHistory(facts, best.options[0]!);
  const now = depthFactor(facts.stats, code, depth);
  let miss = 1;
  for (let k = 0; k < slots; k += 1)
    miss *= 1 - (best.probability * depthFactor(facts.stats, code, depth + k)) / now;
  return 1 - miss;
}

function prediction(facts: PlanFacts, probability: number, reasoning: string): Prediction {
  const observed = baseRate(facts.stats, facts.code).observed;
  return {
    score: Math.round(probability * 1000) / 10,
    confidence: Math.round(40 + 55 * (1 - Math.exp(-observed / 150))),
    reasoning,
    dataSource: observed > 0 ? 'blended' : 'static',
  };
}

function describe(facts: PlanFacts, at: number, probability: number): string {
  const when = at <= facts.now ? 'now' : `at ${new Date(at).toISOString()}`;
  const evidence =
    baseRate(facts.stats, facts.code).observed > 0
      ? "static priors blended with this account's outcomes"
      : 'static priors';
  return `A ${facts.code} decline is best retried ${when}: ${Math.round(probability * 100)}% predicted success from ${evidence}.`;
}

/** planNextAttempt without memoisation. */
export function referencePlan(facts: PlanFacts): Plan {
  if (facts.attemptsLeft <= 0)
    return { kind: 'stop', reason: 'budget', prediction: prediction(facts, 0, 'The retry budget is spent.') };
  if (facts.options.length === 0) {
    return {
      kind: 'stop',
      reason: 'no_options',
      prediction: prediction(facts, 0, 'No payment method or gateway is left that can be charged.'),
    };
  }
  let best = { at: Number.NaN, value: -1, probability: 0, options: [] as PlanOption[] };
  const bestFor = new Map<PlanOption, number>();
  const nextHour = Math.floor(facts.now / hour) * hour + hour;
  for (let t = facts.now; t <= facts.horizonEnd; t = t === facts.now ? nextHour : t + hour) {
    const slot = slotAt(facts, t);
    if (slot.options.length === 0) continue;
    const discount = patiencePerDay ** ((t - facts.now) / day);
    slot.options.forEach((o, i) => bestFor.set(o, Math.max(bestFor.get(o) ?? 0, slot.probs[i]! * discount)));
    const value = slot.probability * discount;
    if (value > best.value) best = { at: t, value, probability: slot.probability, options: slot.options };
    if (facts.critical) break;
  }
  if (best.options.length === 0) {
    return {
      kind: 'stop',
      reason: 'horizon',
      prediction: prediction(facts, 0, 'No attempt is allowed before the retry window closes.'),
    };
  }
  const reasoning = describe(facts, best.at, best.probability);
  const recovery = recoveryChance(facts, best);
  if (!facts.critical && 100 * (1 - recovery) >= facts.riskSkipThreshold) {
    return {
      kind: 'stop',
      reason: 'high_risk',
      prediction: prediction(
        facts,
        recovery,
        `Skipped: ${reasoning} The remaining retries together have ${Math.round(recovery * 100)}%.`,
      ),
    };
  }
  if (best.at - facts.now >= hour / 2) {
    const now = slotAt(facts, facts.now);
    const ready = now.options.filter((o, i) => now.probs[i]! >= readyShare * (bestFor.get(o) ?? 1));
    if (ready.length > 0) {
      const probability =
        1 - now.options.reduce((miss, o, i) => (ready.includes(o) ? miss * (1 - now.probs[i]!) : miss), 1);
      return {
        kind: 'attempt',
        at: facts.now,
        options: ready,
        prediction: prediction(facts, probability, describe(facts, facts.now, probability)),
      };
    }
  }
  const at = best.at - facts.now < hour / 2 ? facts.now : best.at;
  return {
    kind: 'attempt',
    at,
    options: best.options,
    prediction: prediction(facts, best.probability, reasoning),
  };
}
