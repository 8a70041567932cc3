import { own } from './declines.js';
import type { LocalParts } from './local-time.js';
import { lastBusinessDay } from './local-time.js';

/** Successes out of attempts. */
export interface Tally {
  n: number;
  s: number;
}

/** Decline families whose timing behaves alike; lifts are learned per family so data pools. */
export type Family = 'funds' | 'issuer' | 'technical' | 'unknown';

const familyOf: Record<string, Family> = {
  insufficient_funds: 'funds',
  withdrawal_count_limit_exceeded: 'funds',
  card_velocity_exceeded: 'funds',
  do_not_honor: 'issuer',
  generic_decline: 'issuer',
  card_declined: 'issuer',
  call_issuer: 'issuer',
  processing_error: 'technical',
  try_again_later: 'technical',
  issuer_not_available: 'technical',
  reenter_transaction: 'technical',
};

/** A token that has never declined (a fallback card, a refreshed or newly entered card). */
export const freshTokenCode = 'fresh_token';

/** The family of a decline code; a fresh token times like a technical failure: try it now. */
export function declineFamily(code: string): Family {
  return code === freshTokenCode ? 'technical' : (own(familyOf, code) ?? 'unknown');
}

/** An account's outcomes of earlier attempts, aggregated from the attempts log. */
export interface OutcomeStats {
  byCode: Record<string, Tally>;
  /** Keys `${family}|${bucket}`: hour bucket (3 h), weekday (0 = Monday), day of month, gateway name. */
  byHour: Record<string, Tally>;
  byWeekday: Record<string, Tally>;
  byDay: Record<string, Tally>;
  byGateway: Record<string, Tally>;
  /** Keys `${family}|${depth}`: how success falls as a card is retried (depth = earlier retries of it). */
  byDepth: Record<string, Tally>;
  /** Keys `${family}|soon` and `${family}|later`: first retries within 24 h of the card's last charge, or not. */
  byRepeat: Record<string, Tally>;
}

export const emptyStats = (): OutcomeStats => ({
  byCode: {},
  byHour: {},
  byWeekday: {},
  byDay: {},
  byGateway: {},
  byDepth: {},
  byRepeat: {},
});

/** The key of a family's 3-hour bucket of the customer's local day (0 = 00:00–03:00). */
const hourKey = (f: Family, bucket: number) => `${f}|${bucket}`;

/** Dimension keys under which one attempt is counted; shared by the recorder and the model. */
function statKeys(code: string, local: LocalParts, gateway: string) {
  const f = declineFamily(code);
  return {
    code,
    hour: hourKey(f, Math.floor(local.hour / 3)),
    weekday: `${f}|${local.weekday}`,
    day: `${f}|${local.dayOfMonth}`,
    gateway: `${f}|${gateway}`,
  };
}

/** Depths are learned one by one up to this one; deeper retries extrapolate with the fatigue prior. */
const maxDepth = 7;

/** One attempt outcome as the attempts log keeps it. */
export interface OutcomeRow {
  /** The code the attempt recovered from: the card's latest decline, or `fresh_token` for a new card. */
  fromCode: string;
  local: LocalParts;
  gateway: string;
  approved: boolean;
  /** Earlier retries of the card in its recovery (0: its first retry); absent in older logs. */
  depth?: number;
  /**
   * The part of the attempt's prediction outside the code's rate and its lifts: decay, and the same-day
   * factor when the card was charged less than 24 h before; 1 when absent.
   */
  exposure?: number;
  /** That same-day factor, when there was one (absent in older logs: they count as not the same day). */
  sameDay?: number;
}

const repeatKey = (code: string, soon: boolean) => `${declineFamily(code)}|${soon ? 'soon' : 'later'}`;

/**
 * The counts one attempt outcome adds: `[table, key, attempts, successes]`. An attempt counts for its
 * exposure, so what is learned is success at a neutral moment; the code's rate and the time and route
 * lifts learn from first retries only, which keeps them free of how deep the engine chose to retry when,
 * and `byDepth` learns how much each further retry loses.
 */
export function outcomeCounts(row: OutcomeRow): Array<[keyof OutcomeStats, string, number, number]> {
  const k = statKeys(row.fromCode, row.local, row.gateway);
  const n = Math.min(1, Math.max(0.01, row.exposure ?? 1));
  const s = row.approved ? 1 : 0;
  const depth = Math.min(maxDepth, Math.max(0, Math.floor(row.depth ?? 0)));
  const counts: Array<[keyof OutcomeStats, string, number, number]> = [
    ['byDepth', `${declineFamily(row.fromCode)}|${depth}`, n, s],
  ];
  if (depth === 0)
    counts.push(
      ['byCode', k.code, n, s],
      ['byHour', k.hour, n, s],
      ['byWeekday', k.weekday, n, s],
      ['byDay', k.day, n, s],
      ['byGateway', k.gateway, n, s],
    );
  // Soon or later, counted for the decay alone: the same-day factor is what this table learns. A card's
  // first charge (a fresh token) has no earlier one to be soon after.
  if (depth === 0 && row.fromCode !== freshTokenCode)
    counts.push(['byRepeat', repeatKey(row.fromCode, row.sameDay !== undefined), n / (row.sameDay ?? 1), s]);
  return counts;
}

/** Counts one attempt outcome into the statistics: the engine's learning step, shared by store and benchmark. */
export function tallyOutcome(stats: OutcomeStats, row: OutcomeRow): void {
  for (const [table, key, n, s] of outcomeCounts(row)) {
    const tallies = (stats[table] ??= {});
    let t = own(tallies, key);
    if (!t) {
      t = { n: 0, s: 0 };
      // Defined, not assigned: a code such as `__proto__` is a key like any other.
      Object.defineProperty(tallies, key, { value: t, enumerable: true, writable: true, configurable: true });
    }
    t.n += n;
    t.s += s;
  }
}

/**
 * Static priors (research/recovery-economics.md §2–3, §9): per-attempt success at a neutral time for a
 * first retry, and how time of day and paydays move it. They are where learning starts, not where it ends.
 */
const basePrior: Record<Family, number> = { funds: 0.22, issuer: 0.18, technical: 0.5, unknown: 0.2 };
/** Most fresh cards charge. */
const freshTokenPrior = 0.45;
const hourPrior = [0.88, 0.92, 1.0, 1.05, 1.05, 1.03, 1.0, 0.97]; // 3-hour buckets, customer local time
/** How many observations a prior is worth. */
export const pseudoCount = 25;

/** How confident a prediction is, 40–95, growing with the observations behind it. */
export const evidenceConfidence = (observed: number) => Math.round(40 + 55 * (1 - Math.exp(-observed / 150)));
/** A retry within 24 h of the card's last charge keeps about this share of its chance (research §9). */
const sameDayPrior = 0.5;
/** Each earlier failed retry of a card leaves about this share of its chance (research §9). */
export const fatiguePrior = 0.7;

/**
 * The customer's payday effect on a day: lift on paydays and the day after, a dip in the days before, and
 * the account's billing day (×1.1). A billing day past a month's end (29–31) falls on its last day, as
 * billing platforms bill it; `lastDayBills` false keeps the rule of recoveries begun before, where such a
 * month had no billing day.
 */
export function paydayPrior(
  family: Family,
  local: LocalParts,
  billingCycleDay: number | null,
  lastDayBills = true,
): number {
  const day = local.dayOfMonth;
  const paydays = [1, 15, lastBusinessDay(local)];
  const billingDay =
    billingCycleDay !== null && lastDayBills ? Math.min(billingCycleDay, local.daysInMonth) : billingCycleDay;
  let lift = billingDay === day ? 1.1 : 1;
  if (family !== 'funds') return lift;
  const onOrAfter = paydays.some((p) => day === p || day === p + 1);
  const before = paydays.some((p) => p - day >= 1 && p - day <= 3) || day >= local.daysInMonth - 2;
  if (onOrAfter) lift *= 1.5;
  else if (before) lift *= 0.7;
  return lift;
}

const rate = (t: Tally | undefined) => t ?? { n: 0, s: 0 };

/** Shrinks an observed lift towards its prior: with few observations the prior dominates. */
function blendLift(
  observed: Tally | undefined,
  familyRate: number,
  prior: number,
  weight = pseudoCount,
): number {
  const t = rate(observed);
  if (familyRate <= 0) return prior;
  return (t.s + weight * prior * familyRate) / (t.n + weight) / familyRate;
}

/**
 * How many observations the prior of a day-of-month lift is worth. A lift that makes the planner wait must
 * beat the best of many noisy estimates, and the 31 days of the month are many; worse, a date falls on a
 * different weekday each month, so the spread of its observed lifts is partly weekdays and paydays that
 * will not recur on it, and is not learned from (below) but held at this.
 */
const dayEvidence = 150;
/**
 * The evidence of an hour or weekday prior: learned within `min`–`max`, `start` until the table has both a
 * success and a failure to learn from.
 */
const evidenceRange = { min: 10, start: 50, max: 1000 } as const;

/**
 * How many observations the prior of a family's hour or weekday lift is worth, learned from the table
 * itself (empirical Bayes by the method of moments): how far its buckets' observed lifts stray from their
 * priors beyond what sampling explains estimates how much the true lifts vary (τ²), and a bucket's own
 * count then weighs against its prior as sampling noise against that variation, (1 − r) / (r τ²)
 * observations. Where an account's hours or weekdays differ little, a bucket's lucky run is mostly noise
 * and the planner does not wait for it; where they differ a lot, the data wins quickly.
 */
export function learnedEvidence(
  table: Record<string, Tally>,
  family: Family,
  priorOf: (bucket: number) => number,
): number {
  const buckets: Array<{ bucket: number; t: Tally }> = [];
  for (const [key, t] of Object.entries(table)) {
    const bar = key.indexOf('|');
    if (key.slice(0, bar) === family && t.n > 0) buckets.push({ bucket: Number(key.slice(bar + 1)), t });
  }
  // Summed in bucket order, not in the order the database returns the keys: the same bits on every reader.
  buckets.sort((a, b) => a.bucket - b.bucket);
  let n = 0;
  let s = 0;
  for (const { t } of buckets) {
    n += t.n;
    s += t.s;
  }
  if (s <= 0 || s >= n) return evidenceRange.start;
  const r = s / n;
  let spread = 0;
  for (const { bucket, t } of buckets) spread += t.n * (t.s / t.n / r - priorOf(bucket)) ** 2;
  const variation = (spread - (buckets.length * (1 - r)) / r) / n;
  if (variation <= 0) return evidenceRange.max;
  return Math.min(evidenceRange.max, Math.max(evidenceRange.min, (1 - r) / r / variation));
}

const priorRate = (code: string) =>
  code === freshTokenCode ? freshTokenPrior : basePrior[declineFamily(code)];

/** First-retry success rate for a code, blended from its prior and the account's outcomes. */
export function baseRate(stats: OutcomeStats, code: string): { rate: number; observed: number } {
  const t = rate(own(stats.byCode, code));
  return { rate: (t.s + pseudoCount * priorRate(code)) / (t.n + pseudoCount), observed: t.n };
}

/**
 * What is left of a card's chance after `depth` failed retries, relative to its first retry: learned per
 * decline family, starting from the fatigue prior. Cards that can be recovered tend to be recovered early,
 * so the learned fall is usually steeper than fatigue alone.
 */
export function depthFactor(stats: OutcomeStats, code: string, depth: number): number {
  if (depth <= 0) return 1;
  const f = declineFamily(code);
  const d = Math.min(depth, maxDepth);
  const first = rate(stats.byDepth[`${f}|0`]);
  const firstRate = (first.s + pseudoCount * priorRate(code)) / (first.n + pseudoCount);
  const learned = blendLift(stats.byDepth[`${f}|${d}`], firstRate, fatiguePrior ** d);
  return Math.min(1, learned) * fatiguePrior ** (depth - d);
}

/**
 * What is left of a first retry's chance when the card was charged less than 24 h before, learned per
 * family: the rate of first retries made soon over the rate of those made later, shrunk towards the prior.
 * The prior: an issuer that just declined a card rarely changes its mind the same day (research §9, ×0.5),
 * while a technical failure may clear at once. The later rate starts from the family's prior rate, so a
 * family retried at once that fails more often than that looks better later, and gets tried later, which
 * then teaches the later rate. Deeper retries keep the prior: a card that failed a retry has met its issuer.
 */
export function sameDayFactor(stats: OutcomeStats, code: string, depth: number): number {
  const f = declineFamily(code);
  const prior = f === 'technical' && depth === 0 ? 1 : sameDayPrior;
  if (depth > 0 || code === freshTokenCode) return prior;
  const later = rate(stats.byRepeat[repeatKey(code, false)]);
  const laterRate = (later.s + pseudoCount * priorRate(code)) / (later.n + pseudoCount);
  return blendLift(stats.byRepeat[repeatKey(code, true)], laterRate, prior);
}

/** The four factors of a context lift, for one code and gateway; each depends on a part of the local time. */
function liftFactors(
  stats: OutcomeStats,
  code: string,
  gateway: string,
  billingCycleDay: number | null,
  lastDayBills: boolean,
) {
  const f = declineFamily(code);
  const familyRate = baseRate(stats, code).rate;
  // Technical failures clear with time, not with the cardholder's daily rhythm.
  const hourPriorOf = (b: number) => (f === 'technical' ? 1 : (hourPrior[b] ?? 1));
  const evidence = {
    hour: learnedEvidence(stats.byHour, f, hourPriorOf),
    weekday: learnedEvidence(stats.byWeekday, f, () => 1),
  };
  return {
    hour: (local: LocalParts) => {
      const bucket = (b: number) =>
        blendLift(stats.byHour[hourKey(f, b)], familyRate, hourPriorOf(b), evidence.hour);
      // Between the middles of two 3-hour buckets the lift moves linearly: the hours of one bucket are not
      // all alike, and a flat bucket would make the planner take its first hour, where it meets the last one.
      const x = (local.hour - 1 + 24) / 3;
      const b0 = Math.floor(x);
      const frac = x - b0;
      return (1 - frac) * bucket(b0 % 8) + frac * bucket((b0 + 1) % 8);
    },
    weekday: (local: LocalParts) =>
      blendLift(stats.byWeekday[statKeys(code, local, gateway).weekday], familyRate, 1, evidence.weekday),
    day: (local: LocalParts) =>
      blendLift(
        stats.byDay[statKeys(code, local, gateway).day],
        familyRate,
        paydayPrior(f, local, billingCycleDay, lastDayBills),
        dayEvidence,
      ),
    gateway: (local: LocalParts) =>
      blendLift(stats.byGateway[statKeys(code, local, gateway).gateway], familyRate, 1),
  };
}

/**
 * A gateway's lift for `code` with the benefit of the doubt: the learned lift plus one standard error of
 * its estimate. A route tried little looks as good as it might be, so each gateway of an account gets
 * tried on first retries until the evidence tells them apart; the better one then takes the traffic.
 */
export function optimisticRouteLift(stats: OutcomeStats, code: string, gateway: string): number {
  const familyRate = baseRate(stats, code).rate;
  const observed = rate(stats.byGateway[statKeys(code, emptyLocal, gateway).gateway]);
  const lift = blendLift(observed, familyRate, 1);
  const spread = Math.sqrt(
    Math.max(0, 1 - familyRate) / Math.max(1e-6, familyRate) / (observed.n + pseudoCount),
  );
  return lift * (1 + spread);
}

/** Local time does not enter a gateway's key. */
const emptyLocal: LocalParts = { hour: 0, dayOfMonth: 1, weekday: 0, daysInMonth: 31 };

/** The time-and-route part of a prediction: multiplier for trying `code` at `local` through `gateway`. */
export function contextLift(
  stats: OutcomeStats,
  code: string,
  local: LocalParts,
  gateway: string,
  billingCycleDay: number | null,
  lastDayBills = true,
): number {
  const lift = liftFactors(stats, code, gateway, billingCycleDay, lastDayBills);
  return lift.hour(local) * lift.weekday(local) * lift.day(local) * lift.gateway(local);
}

/**
 * `contextLift` for one code and gateway at many times, as the planner scans the hours of a window: each
 * factor is computed once per value of the part of the local time it depends on. Same numbers, bit for bit.
 */
export function contextLiftAt(
  stats: OutcomeStats,
  code: string,
  gateway: string,
  billingCycleDay: number | null,
  lastDayBills = true,
): (local: LocalParts) => number {
  const lift = liftFactors(stats, code, gateway, billingCycleDay, lastDayBills);
  const hours = new Map<number, number>();
  const weekdays = new Map<number, number>();
  const days = new Map<number, number>();
  let route: number | undefined;
  const memo = (cache: Map<number, number>, key: number, factor: () => number) => {
    let v = cache.get(key);
    if (v === undefined) cache.set(key, (v = factor()));
    return v;
  };
  return (local) => {
    const h = memo(hours, local.hour, () => lift.hour(local));
    const w = memo(weekdays, local.weekday, () => lift.weekday(local));
    // A day's payday prior depends on its date, weekday and month length.
    const d = memo(days, (local.dayOfMonth * 7 + local.weekday) * 32 + local.daysInMonth, () =>
      lift.day(local),
    );
    route ??= lift.gateway(local);
    return h * w * d * route;
  };
}
