import { lastBusinessDay, localParts } from '../../domain/local-time.js';
import type { Payday, World } from './world.js';

const hour = 3_600_000;
const day = 24 * hour;
/** 1970-01-01 was a Thursday: weekday 3 when Monday is 0. */
const epochWeekday = 3;
/** The code a fresh card (fallback or updated) declines with. */
export const freshCardDecline = 'generic_decline';
/** Gateway multiplier key for a card that has not declined before. */
export const freshCardKey = 'fresh';

/** What the world knows about one card while a strategy works on a payment. */
export interface CardTruth {
  token: string;
  kind: 'primary' | 'fallback' | 'updated';
  brand: 'visa' | 'mastercard' | 'amex' | 'discover' | 'unknown';
  /** Whether charges of this card can succeed at all (the latent draw; fresh cards always can). */
  recoverable: boolean;
  /** Latest decline on this card, null for a card never declined. */
  code: string | null;
  /** Every charge of this card, the merchant's original one included. */
  charges: number[];
  /** Retries of this card so far (the merchant's original charge not counted). */
  retries: number;
  advice: string | null;
  adviceAt: number | null;
}

/**
 * The ground truth of a world: the probability that one attempt succeeds, exactly as the issue states it —
 * baseSuccess × hourOfDay × dayOfWeek × payday lift × decayPerDay^days × fatiguePerAttempt^previousAttempts ×
 * gateway multiplier, capped at 1, zero for an unrecoverable card — times the optional extras (billing-cycle
 * day, same-day repeat) that default to 1.
 */
export class WorldModel {
  private readonly paydayCache = new Map<number, number>();
  private readonly dayOfMonthCache = new Map<number, number>();
  private readonly codeIndex: Map<string, number>;
  private readonly multipliers: Map<string, Readonly<Record<string, number>>>;

  constructor(readonly world: World) {
    this.codeIndex = new Map(Object.keys(world.declines).map((c, i) => [c, i]));
    this.multipliers = new Map(world.gateways.map((g) => [g.name, g.multiplier]));
  }

  /** Success probability of charging `card` through `gateway` at `t` for a payment that failed at `failedAt`. */
  probability(
    card: CardTruth,
    gateway: string,
    t: number,
    p: { failedAt: number; offsetMinutes: number; billingCycleDay: number | null },
  ): number {
    const w = this.world;
    if (!card.recoverable) return 0;
    const local = t + p.offsetMinutes * 60_000;
    const dayNo = Math.floor(local / day);
    const timing =
      w.hourOfDay[Math.floor((local - dayNo * day) / hour)]! * w.dayOfWeek[(dayNo + epochWeekday) % 7]!;
    const last = card.charges.length ? card.charges[card.charges.length - 1]! : Number.NEGATIVE_INFINITY;
    const repeat = t - last < day ? w.sameDayRepeat : 1;
    const fatigue = w.fatiguePerAttempt ** card.retries;
    const multipliers = this.multipliers.get(gateway) ?? {};
    let q: number;
    if (card.kind === 'primary' && card.code !== null) {
      const code = card.code;
      q =
        (w.declines[code]?.baseSuccess ?? 0) *
        timing *
        this.paydayLift(code, dayNo) *
        (p.billingCycleDay !== null && this.dayOfMonth(dayNo) === p.billingCycleDay
          ? w.billingCycleLift
          : 1) *
        w.decayPerDay ** Math.max(0, (t - p.failedAt) / day) *
        fatigue *
        repeat *
        (multipliers[code] ?? 1);
    } else {
      const base = card.kind === 'updated' ? (w.accountUpdater?.success ?? 0) : w.fallbackSuccess;
      q = base * timing * fatigue * repeat * (multipliers[freshCardKey] ?? 1);
    }
    return Math.min(1, q);
  }

  /**
   * `probability` of a first retry (no earlier charge, no fatigue) at each of `n` whole hours from `start`,
   * computed a day at a time: the oracle's view of a card.
   */
  hourly(
    card: CardTruth,
    gateway: string,
    start: number,
    n: number,
    p: { failedAt: number; offsetMinutes: number; billingCycleDay: number | null },
  ): Float64Array {
    const w = this.world;
    const out = new Float64Array(n);
    if (!card.recoverable) return out;
    const multipliers = this.multipliers.get(gateway) ?? {};
    const primary = card.kind === 'primary' && card.code !== null;
    const code = card.code ?? '';
    const base = primary
      ? (w.declines[code]?.baseSuccess ?? 0) * (multipliers[code] ?? 1)
      : (card.kind === 'updated' ? (w.accountUpdater?.success ?? 0) : w.fallbackSuccess) *
        (multipliers[freshCardKey] ?? 1);
    let dayNo = Number.NaN;
    let dayFactor = 1;
    for (let j = 0; j < n; j += 1) {
      const t = start + j * hour;
      const local = t + p.offsetMinutes * 60_000;
      const d = Math.floor(local / day);
      if (d !== dayNo) {
        dayNo = d;
        dayFactor = w.dayOfWeek[(d + epochWeekday) % 7]!;
        if (primary) {
          dayFactor *= this.paydayLift(code, d);
          if (p.billingCycleDay !== null && this.dayOfMonth(d) === p.billingCycleDay)
            dayFactor *= w.billingCycleLift;
        }
      }
      const decay = primary ? w.decayPerDay ** Math.max(0, (t - p.failedAt) / day) : 1;
      out[j] = Math.min(1, base * w.hourOfDay[Math.floor((local - d * day) / hour)]! * dayFactor * decay);
    }
    return out;
  }

  /**
   * The payday effect on the customer's day `dayNo` for decline `code`: the product of the lifts (≥ 1) of the
   * payday windows covering the day; on a day no payday window covers, the deepest dip (a window whose lift
   * is below 1) covering it. A payday wins over a dip before another payday, and dips do not compound —
   * research §9's "×1.5 on payday and the next day, ×0.7 in the 3 days before", as the engine's prior reads it.
   */
  paydayLift(code: string, dayNo: number): number {
    const key = dayNo * 1024 + (this.codeIndex.get(code) ?? 1023);
    const cached = this.paydayCache.get(key);
    if (cached !== undefined) return cached;
    let lift = 1;
    let payday = false;
    let dip = 1;
    for (const rule of this.world.paydays) {
      if (!rule.appliesTo.includes(code)) continue;
      for (let k = 0; k < rule.windowDays; k += 1) {
        if (isPayday(rule, dayNo - rule.offsetDays - k)) {
          if (rule.lift >= 1) {
            lift *= rule.lift;
            payday = true;
          } else dip = Math.min(dip, rule.lift);
          break;
        }
      }
    }
    if (!payday) lift = dip;
    this.paydayCache.set(key, lift);
    return lift;
  }

  private dayOfMonth(dayNo: number): number {
    let d = this.dayOfMonthCache.get(dayNo);
    if (d === undefined) this.dayOfMonthCache.set(dayNo, (d = new Date(dayNo * day).getUTCDate()));
    return d;
  }
}

/** Whether the customer's day `dayNo` (days since 1970-01-01) is a payday under `rule`. */
export function isPayday(rule: Payday, dayNo: number): boolean {
  const parts = localParts(dayNo * day, 0);
  switch (rule.rule) {
    case 'dayOfMonth':
      return (rule.days ?? []).some((d) => Math.min(d, parts.daysInMonth) === parts.dayOfMonth);
    case 'lastBusinessDay':
      return lastBusinessDay(parts) === parts.dayOfMonth;
    case 'everyFriday':
      return parts.weekday === 4;
    case 'everyOtherFriday': {
      const anchor = Math.floor(Date.parse(`${rule.anchor ?? '1970-01-02'}T00:00:00Z`) / day);
      return parts.weekday === 4 && (((dayNo - anchor) % 14) + 14) % 14 === 0;
    }
  }
}
