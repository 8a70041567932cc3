import { localParts, offsetAt, type LocalParts, type OffsetChange } from './local-time.js';
import type { Prediction } from './recovery.js';
import {
  baseRate,
  contextLiftAt,
  declineFamily,
  depthFactor,
  evidenceConfidence,
  freshTokenCode,
  optimisticRouteLift,
  sameDayFactor,
  type OutcomeStats,
} from './success-model.js';

const hour = 3_600_000;
const day = 24 * hour;
/** Daily decay (research §9); value of recovering a day sooner. */
const decayPerDay = 0.97;
const patiencePerDay = 0.99;

/** A way to charge: one token through one gateway, in the spec's cascade order. */
export interface PlanOption {
  gateway: string;
  token: string;
  role: 'primary' | 'backup_gateway' | 'fallback_token';
}

/** One attempt already made on a token (ours, or the merchant's original failure). */
export interface AttemptFact {
  at: number;
  gateway: string;
  token: string;
  code: string | null;
}

/** Everything the planner may know: what production sees, nothing else. */
export interface PlanFacts {
  now: number;
  /** When the merchant's own charge failed. */
  failedAt: number;
  /** The decline being recovered from (latest seen). */
  code: string;
  /** Options still usable, in cascade order (dead tokens and unroutable gateways removed). */
  options: PlanOption[];
  attempts: AttemptFact[];
  attemptsLeft: number;
  horizonEnd: number;
  /** A trial conversion: never skipped for risk, and attempted now unless `atOnce` says otherwise. */
  critical: boolean;
  /**
   * Attempted now, in cascade order, never held back for timing (a trial conversion's first attempts);
   * `critical` when not given.
   */
  atOnce?: boolean;
  /** Customer's local clock, as a UTC offset in minutes (at intake). */
  offsetMinutes: number;
  /**
   * How the customer's offset changes after intake (daylight saving) within the recovery's window; none
   * given, the offset at intake holds throughout.
   */
  offsetChanges?: readonly OffsetChange[];
  billingCycleDay: number | null;
  /**
   * A billing day past a month's end (29–31) falls on its last day (`paydayPrior`); false in a recovery
   * begun before, which planned such a month without one. True when not given.
   */
  lastDayBills?: boolean;
  riskSkipThreshold: number;
  /** Earliest time each token may be charged again under card-network rules. */
  notBefore: Record<string, number>;
  stats: OutcomeStats;
}

export type StopReason = 'budget' | 'horizon' | 'high_risk' | 'no_options';

export type Plan =
  | { kind: 'attempt'; at: number; options: PlanOption[]; prediction: Prediction }
  | { kind: 'stop'; reason: StopReason; prediction: Prediction };

/**
 * What the planner knows of one option's card: the code it last declined with (`fresh_token` for a card
 * never charged), how many times we retried it since (its depth), when it was last charged, and whether
 * its decline is a technical one not yet retried: another processor may get through, so such a card tries
 * every gateway in one slot.
 */
export function optionHistory(facts: PlanFacts, option: PlanOption) {
  const onToken = facts.attempts.filter((a) => a.token === option.token);
  // A token that has never declined (a fallback card, or one the customer just entered) starts fresh; the
  // primary card recovers from the recovery's decline, a fallback card from its own latest one.
  const own = option.role === 'fallback_token' ? onToken.findLast((a) => a.code !== null)?.code : undefined;
  const code = onToken.length === 0 ? freshTokenCode : (own ?? facts.code);
  const lastCharge = onToken.reduce((m, a) => Math.max(m, a.at), -Infinity);
  const depth = Math.max(0, onToken.length - 1);
  const transient = declineFamily(code) === 'technical' && code !== freshTokenCode && depth === 0;
  return { code, depth, lastCharge, transient };
}

/**
 * The part of an option's predicted success (`probabilityOf`) outside the code's rate and its lifts: decay
 * since the failure, and the same-day factor when the card was charged less than 24 h before
 * (`sameDayFactor`: an issuer that just declined a card rarely changes its mind the same day, whichever
 * gateway asks). Outcomes are logged with both, so the rate and the lifts learn from a neutral moment and
 * the same-day factor from its own table.
 */
export function optionExposure(
  facts: PlanFacts,
  option: PlanOption,
  t: number,
): { exposure: number; sameDay: number | null } {
  const { code, depth, lastCharge } = optionHistory(facts, option);
  const sameDay = t - lastCharge < day ? sameDayFactor(facts.stats, code, depth) : null;
  const decay = code === freshTokenCode ? 1 : decayPerDay ** Math.max(0, (t - facts.failedAt) / day);
  return { exposure: decay * (sameDay ?? 1), sameDay };
}

/**
 * An option goes now, ahead of a later slot, when now is nearly its own best moment (a fresh card); a
 * technical failure cascades through every gateway at once while a retry at once keeps this share.
 */
const readyShare = 0.9;

type Probability = (option: PlanOption, t: number) => number;

/**
 * Each option's predicted success at the many candidate times of one plan: what does not change with time
 * is computed once per option, the local clock and decay once per time, context lifts once per value.
 */
function probabilities(facts: PlanFacts): Probability {
  const perOption = new Map<PlanOption, (t: number, local: LocalParts, decay: number) => number>();
  let at = Number.NaN;
  const clock = (t: number) => localParts(t, offsetAt(t, facts.offsetMinutes, facts.offsetChanges));
  let local = clock(facts.now);
  let decay = 1;
  return (option, t) => {
    if (t !== at) {
      at = t;
      local = clock(t);
      decay = decayPerDay ** Math.max(0, (t - facts.failedAt) / day);
    }
    let p = perOption.get(option);
    if (!p) perOption.set(option, (p = probabilityOf(facts, option)));
    return p(t, local, decay);
  };
}

/**
 * One option's predicted success as a function of time, its local clock and the decay at that time: the
 * code's rate times its context lift, its depth factor and its exposure (`optionExposure`), at most 0.99.
 */
function probabilityOf(facts: PlanFacts, option: PlanOption) {
  const { code, depth, lastCharge } = optionHistory(facts, option);
  const rate = baseRate(facts.stats, code).rate;
  const lift = contextLiftAt(facts.stats, code, option.gateway, facts.billingCycleDay, facts.lastDayBills);
  const tired = depthFactor(facts.stats, code, depth);
  const sameDay = sameDayFactor(facts.stats, code, depth);
  return (t: number, local: LocalParts, decay: number) => {
    const p =
      rate *
      lift(local) *
      tired *
      ((code === freshTokenCode ? 1 : decay) * (t - lastCharge < day ? sameDay : 1));
    return Math.min(0.99, p);
  };
}

type Slot = { options: PlanOption[]; probs: number[]; probability: number };

/**
 * Options chargeable at `t` within the remaining budget, and the chance that at least one succeeds. The
 * options of a slot only change when a card's network wait ends, so each distinct set is built once.
 */
function slots(facts: PlanFacts, chance: Probability): (t: number) => Slot {
  const sets = new Map<string, PlanOption[]>();
  // Usually no card is waiting for the networks: then every slot has the same options.
  const waiting = facts.options.some((o) => (facts.notBefore[o.token] ?? 0) > facts.now);
  return (t) => {
    let key = '';
    if (waiting) for (const o of facts.options) key += (facts.notBefore[o.token] ?? 0) <= t ? '1' : '0';
    let options = sets.get(key);
    if (!options) {
      options = facts.options
        .filter((o) => (facts.notBefore[o.token] ?? 0) <= t)
        .slice(0, facts.attemptsLeft);
      sets.set(key, options);
    }
    const probs: number[] = [];
    let miss = 1;
    for (const o of options) {
      const p = chance(o, t);
      probs.push(p);
      miss *= 1 - p;
    }
    return { options, probs, probability: 1 - miss };
  };
}

/**
 * Predicted success of each slot the rest of the recovery can have, from `best` on, if each later slot does
 * as well as the best one less what each further retry of the card loses. Later slots are limited by the
 * budget and by the days left.
 */
function slotChances(facts: PlanFacts, best: { at: number; probability: number; options: PlanOption[] }) {
  const slots = Math.max(
    1,
    Math.min(
      Math.floor(facts.attemptsLeft / best.options.length),
      1 + Math.floor((facts.horizonEnd - best.at) / day),
    ),
  );
  const { code, depth } = optionHistory(facts, best.options[0]!);
  const now = depthFactor(facts.stats, code, depth);
  const chances: number[] = [];
  for (let k = 0; k < slots; k += 1)
    chances.push((best.probability * depthFactor(facts.stats, code, depth + k)) / now);
  return chances;
}

/** The chance that at least one of `chances` succeeds. */
const anyOf = (chances: number[]) => 1 - chances.reduce((miss, p) => miss * (1 - p), 1);

/**
 * The chance that the rest of the recovery succeeds: the risk a merchant's riskSkipThreshold is about is
 * losing the payment, not one attempt failing.
 */
function recoveryChance(facts: PlanFacts, best: { at: number; probability: number; options: PlanOption[] }) {
  return anyOf(slotChances(facts, best));
}

/**
 * The routes worth a slot: a card whose technical failure has not been retried yet tries every gateway in
 * cascade order (another processor may well get through at once) as long as the account's outcomes say
 * that retrying such a failure at once works (its same-day factor is near 1); any other card goes through
 * one gateway only, the one with the best optimistic learned lift, since a second gateway asking the same
 * issuer minutes later mostly meets the same answer. Ties keep the cascade order.
 */
function routes(facts: PlanFacts): PlanOption[] {
  const best = new Map<string, { option: PlanOption; lift: number }>();
  const cascade: PlanOption[] = [];
  for (const option of facts.options) {
    const { code, transient } = optionHistory(facts, option);
    if (transient && sameDayFactor(facts.stats, code, 0) >= readyShare) {
      cascade.push(option);
      continue;
    }
    const lift = optimisticRouteLift(facts.stats, code, option.gateway);
    const held = best.get(option.token);
    if (!held || lift > held.lift) best.set(option.token, { option, lift });
  }
  const chosen = new Set([...cascade, ...[...best.values()].map((b) => b.option)]);
  return facts.options.filter((o) => chosen.has(o));
}

/**
 * The slot that recovers most, counting what comes after it: the chance of the best schedule of the
 * remaining slots that starts there, by backward induction over the candidate hours (each later slot loses
 * what a further retry of the card loses, and waits out the same-day penalty). Waiting for a better hour
 * also pushes back, and decays, every retry that would follow.
 */
function bestSlot(
  facts: PlanFacts,
  candidates: Array<{ at: number; slot: Slot; discount: number }>,
  reference: { at: number; probability: number; options: PlanOption[] },
) {
  const chances = slotChances(facts, reference);
  // First candidate index at or after `t + gap`, for each candidate.
  const after: number[] = [];
  for (let j = 0, k = 0; j < candidates.length; j += 1) {
    while (k < candidates.length && candidates[k]!.at < candidates[j]!.at + day) k += 1;
    after.push(k);
  }
  const n = candidates.length;
  let following = new Float64Array(n + 1); // best chance of the slots after this one, from each candidate on
  let value = new Float64Array(n);
  for (let d = chances.length - 1; d >= 0; d -= 1) {
    const scale = reference.probability > 0 ? chances[d]! / reference.probability : 0;
    const from = new Float64Array(n + 1);
    for (let j = n - 1; j >= 0; j -= 1) {
      const p = Math.min(0.99, candidates[j]!.slot.probability * scale);
      value[j] = p + (1 - p) * following[after[j]!]!;
      from[j] = Math.max(from[j + 1]!, value[j]!);
    }
    following = from;
    if (d > 0) value = new Float64Array(n);
  }
  let best = { ...reference, value: -1 };
  candidates.forEach(({ at, slot, discount }, j) => {
    const v = value[j]! * discount;
    if (v > best.value) best = { at, value: v, probability: slot.probability, options: slot.options };
  });
  return best;
}

function prediction(facts: PlanFacts, probability: number, reasoning: string): Prediction {
  const observed = baseRate(facts.stats, facts.code).observed;
  return {
    score: Math.round(probability * 1000) / 10,
    confidence: evidenceConfidence(observed),
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

/**
 * Chooses when to try next and through which options, or to stop: the time that maximises the predicted
 * success of the rest of the recovery started then (customer's local hour, paydays, billing cycle, learned
 * lifts, fatigue and decay of this retry and the ones after it), discounted for waiting; trial conversions
 * go at once. Deterministic: same facts, same plan.
 */
export function planNextAttempt(facts: PlanFacts): Plan {
  if (facts.attemptsLeft <= 0)
    return { kind: 'stop', reason: 'budget', prediction: prediction(facts, 0, 'The retry budget is spent.') };
  if (facts.options.length === 0) {
    return {
      kind: 'stop',
      reason: 'no_options',
      prediction: prediction(facts, 0, 'No payment method or gateway is left that can be charged.'),
    };
  }
  const atOnce = facts.atOnce ?? facts.critical;
  if (!atOnce) facts = { ...facts, options: routes(facts) };
  const slotAt = slots(facts, probabilities(facts));
  const candidates: Array<{ at: number; slot: Slot; discount: number }> = [];
  let reference = { at: Number.NaN, value: -1, probability: 0, options: [] as PlanOption[] };
  const bestFor = new Map<PlanOption, number>();
  // Candidates: now, then every whole hour until the window closes.
  const nextHour = Math.floor(facts.now / hour) * hour + hour;
  for (let t = facts.now; t <= facts.horizonEnd; t = t === facts.now ? nextHour : t + hour) {
    const slot = slotAt(t);
    if (slot.options.length === 0) continue;
    const discount = patiencePerDay ** ((t - facts.now) / day);
    candidates.push({ at: t, slot, discount });
    for (let i = 0; i < slot.options.length; i += 1) {
      const o = slot.options[i]!;
      bestFor.set(o, Math.max(bestFor.get(o) ?? 0, slot.probs[i]! * discount));
    }
    const value = slot.probability * discount;
    if (value > reference.value)
      reference = { at: t, value, probability: slot.probability, options: slot.options };
    if (atOnce) break;
  }
  const best = reference.options.length > 0 ? bestSlot(facts, candidates, reference) : reference;
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
    // Options already at their best go now; the rest wait for the later slot.
    const now = slotAt(facts.now);
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
