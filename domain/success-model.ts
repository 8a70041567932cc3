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
  return code === freshTokenCode ? 'technical' : (familyOf[code] ?? 'unknown');
}

/** An account's outcomes of earlier attempts, aggregated from the attempts log. */
export interface OutcomeStats {
  byCode: Record<string, Tally>;
  /** Keys `${family}|${bucket}`: hour bucket (3 h), weekday (0 = Monday), day of month, gateway name. */
  byHour: Record<string, Tally>;
  byWeekday: Record<string, Tally>;
  byDay: Record<string, Tally>;
  byGateway: Record<string, Tally>;
}

export const emptyStats = (): OutcomeStats => ({
  byCode: {},
  byHour: {},
  byWeekday: {},
  byDay: {},
  byGateway: {},
});

/** Dimension keys under which one attempt is counted; shared by the recorder and the model. */
export function statKeys(code: string, local: LocalParts, gateway: string) {
  const f = declineFamily(code);
  return {
    code,
    hour: `${f}|${Math.floor(local.hour / 3)}`,
    weekday: `${f}|${local.weekday}`,
    day: `${f}|${local.dayOfMonth}`,
    gateway: `${f}|${gateway}`,
  };
}

/** Counts one attempt outcome into the statistics: the engine's learning step, shared by store and benchmark. */
export function tallyOutcome(
  stats: OutcomeStats,
  row: { fromCode: string; local: LocalParts; gateway: string; approved: boolean },
): void {
  const k = statKeys(row.fromCode, row.local, row.gateway);
  const add = (table: Record<string, Tally>, key: string) => {
    const t = (table[key] ??= { n: 0, s: 0 });
    t.n += 1;
    t.s += row.approved ? 1 : 0;
  };
  add(stats.byCode, k.code);
  add(stats.byHour, k.hour);
  add(stats.byWeekday, k.weekday);
  add(stats.byDay, k.day);
  add(stats.byGateway, k.gateway);
}

/**
 * Static priors (research/recovery-economics.md §2–3, §9): per-attempt success at a neutral time for a
 * first retry, and how time of day and paydays move it. They are where learning starts, not where it ends.
 */
const basePrior: Record<Family, number> = { funds: 0.22, issuer: 0.18, technical: 0.5, unknown: 0.2 };
/** Most fresh cards charge. */
const freshTokenPrior = 0.45;
const hourPrior = [0.88, 0.92, 1.0, 1.05, 1.05, 1.03, 1.0, 0.97]; // 3-hour buckets, customer local time
const pseudoCount = 25; // how many observations a prior is worth

/** The customer's payday effect on a day: lift on paydays and the day after, a dip in the days before. */
export function paydayPrior(family: Family, local: LocalParts, billingCycleDay: number | null): number {
  const day = local.dayOfMonth;
  const paydays = [1, 15, lastBusinessDay(local)];
  let lift = billingCycleDay === day ? 1.1 : 1;
  if (family !== 'funds') return lift;
  const onOrAfter = paydays.some((p) => day === p || day === p + 1);
  const before = paydays.some((p) => p - day >= 1 && p - day <= 3) || day >= local.daysInMonth - 2;
  if (onOrAfter) lift *= 1.5;
  else if (before) lift *= 0.7;
  return lift;
}

const rate = (t: Tally | undefined) => t ?? { n: 0, s: 0 };

/** Shrinks an observed lift towards its prior: with few observations the prior dominates. */
function blendLift(observed: Tally | undefined, familyRate: number, prior: number): number {
  const t = rate(observed);
  if (familyRate <= 0) return prior;
  return (t.s + pseudoCount * prior * familyRate) / (t.n + pseudoCount) / familyRate;
}

/** Success rate for a code, blended from its prior and the account's outcomes. */
export function baseRate(stats: OutcomeStats, code: string): { rate: number; observed: number } {
  const t = rate(stats.byCode[code]);
  const prior = code === freshTokenCode ? freshTokenPrior : basePrior[declineFamily(code)];
  return { rate: (t.s + pseudoCount * prior) / (t.n + pseudoCount), observed: t.n };
}

/** The four factors of a context lift, for one code and gateway; each depends on a part of the local time. */
function liftFactors(stats: OutcomeStats, code: string, gateway: string, billingCycleDay: number | null) {
  const f = declineFamily(code);
  const familyRate = baseRate(stats, code).rate;
  return {
    // Technical failures clear with time, not with the cardholder's daily rhythm.
    hour: (local: LocalParts) =>
      blendLift(
        stats.byHour[statKeys(code, local, gateway).hour],
        familyRate,
        f === 'technical' ? 1 : (hourPrior[Math.floor(local.hour / 3)] ?? 1),
      ),
    weekday: (local: LocalParts) =>
      blendLift(stats.byWeekday[statKeys(code, local, gateway).weekday], familyRate, 1),
    day: (local: LocalParts) =>
      blendLift(
        stats.byDay[statKeys(code, local, gateway).day],
        familyRate,
        paydayPrior(f, local, billingCycleDay),
      ),
    gateway: (local: LocalParts) =>
      blendLift(stats.byGateway[statKeys(code, local, gateway).gateway], familyRate, 1),
  };
}

/** The time-and-route part of a prediction: multiplier for trying `code` at `local` through `gateway`. */
export function contextLift(
  stats: OutcomeStats,
  code: string,
  local: LocalParts,
  gateway: string,
  billingCycleDay: number | null,
): number {
  const lift = liftFactors(stats, code, gateway, billingCycleDay);
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
): (local: LocalParts) => number {
  const lift = liftFactors(stats, code, gateway, billingCycleDay);
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
    const h = memo(hours, Math.floor(local.hour / 3), () => lift.hour(local));
    const w = memo(weekdays, local.weekday, () => lift.weekday(local));
    // A day's payday prior depends on its date, weekday and month length.
    const d = memo(days, (local.dayOfMonth * 7 + local.weekday) * 32 + local.daysInMonth, () =>
      lift.day(local),
    );
    route ??= lift.gateway(local);
    return h * w * d * route;
  };
}
