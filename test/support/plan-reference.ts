import type { LocalParts } from '../../domain/local-time.js';
import type { Plan, PlanFacts, PlanOption } from '../../domain/plan.js';
import type { Prediction } from '../../domain/recovery.js';
import {
  declineFamily,
  freshTokenCode,
  paydayPrior,
  statKeys,
  type Family,
  type OutcomeStats,
  type Tally,
} from '../../domain/success-model.js';

// The planner exactly as it was before it was made fast enough for the benchmark (commit 011ab66):
// straightforward, and slow. test/plan-speed.test.ts holds the fast planner to every decision of this one.

const hour = 3_600_000;
const day = 24 * hour;
const fatigue = 0.7;
const decayPerDay = 0.97;
const sameDayPenalty = 0.5;
const patiencePerDay = 0.99;
const readyShare = 0.9;
const basePrior: Record<Family, number> = { funds: 0.22, issuer: 0.18, technical: 0.5, unknown: 0.2 };
const freshTokenPrior = 0.45;
const hourPrior = [0.88, 0.92, 1.0, 1.05, 1.05, 1.03, 1.0, 0.97];
const pseudoCount = 25;

function localParts(epochMs: number, offsetMinutes: number): LocalParts {
  const d = new Date(epochMs + offsetMinutes * 60_000);
  const year = d.getUTCFullYear();
  const month = d.getUTCMonth();
  return {
    hour: d.getUTCHours(),
    dayOfMonth: d.getUTCDate(),
    weekday: (d.getUTCDay() + 6) % 7,
    daysInMonth: new Date(Date.UTC(year, month + 1, 0)).getUTCDate(),
  };
}

const rate = (t: Tally | undefined) => t ?? { n: 0, s: 0 };

function blendLift(observed: Tally | undefined, familyRate: number, prior: number): number {
  const t = rate(observed);
  if (familyRate <= 0) return prior;
  return (t.s + pseudoCount * prior * familyRate) / (t.n + pseudoCount) / familyRate;
}

function baseRate(stats: OutcomeStats, code: string): { rate: number; observed: number } {
  const t = rate(stats.byCode[code]);
  const prior = code === freshTokenCode ? freshTokenPrior : basePrior[declineFamily(code)];
  return { rate: (t.s + pseudoCount * prior) / (t.n + pseudoCount), observed: t.n };
}

function contextLift(
  stats: OutcomeStats,
  code: string,
  local: LocalParts,
  gateway: string,
  billingCycleDay: number | null,
): number {
  const f = declineFamily(code);
  const keys = statKeys(code, local, gateway);
  const familyRate = baseRate(stats, code).rate;
  return (
    blendLift(
      stats.byHour[keys.hour],
      familyRate,
      f === 'technical' ? 1 : (hourPrior[Math.floor(local.hour / 3)] ?? 1),
    ) *
    blendLift(stats.byWeekday[keys.weekday], familyRate, 1) *
    blendLift(stats.byDay[keys.day], familyRate, paydayPrior(f, local, billingCycleDay)) *
    blendLift(stats.byGateway[keys.gateway], familyRate, 1)
  );
}

function optionProbability(facts: PlanFacts, option: PlanOption, t: number): number {
  const onToken = facts.attempts.filter((a) => a.token === option.token);
  const code = onToken.length === 0 ? freshTokenCode : facts.code;
  const lastHere = onToken
    .filter((a) => a.gateway === option.gateway)
    .reduce((m, a) => Math.max(m, a.at), -Infinity);
  const sameDay = t - lastHere < day && declineFamily(code) !== 'technical';
  const local = localParts(t, facts.offsetMinutes);
  const p =
    baseRate(facts.stats, code).rate *
    contextLift(facts.stats, code, local, option.gateway, facts.billingCycleDay) *
    (code === freshTokenCode ? 1 : decayPerDay ** Math.max(0, (t - facts.failedAt) / day)) *
    fatigue ** Math.max(0, onToken.length - 1) *
    (sameDay ? sameDayPenalty : 1);
  return Math.min(0.99, p);
}

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

/** planNextAttempt before it was memoised. */
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
  if (!facts.critical && 100 * (1 - best.probability) >= facts.riskSkipThreshold) {
    return {
      kind: 'stop',
      reason: 'high_risk',
      prediction: prediction(facts, best.probability, `Skipped: ${reasoning}`),
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
