import { utcOffsetMinutes } from './local-time.js';

const dayMs = 86_400_000;

/** The hour (UTC) at which the daily card health sweep runs. */
export const sweepHourUtc = 6;

/** A card's expiry as printed on it: valid through the last day of `expMonth` of `expYear`. */
export interface CardExpiry {
  expMonth: number; // 1-12
  expYear: number; // four digits
}

/**
 * Days from the local date of `atMs` in `timeZone` to the card's last valid day: 0 on that day, negative
 * once it has expired.
 */
export function daysUntilExpiry(card: CardExpiry, atMs: number, timeZone: string): number {
  const today = Math.floor((atMs + utcOffsetMinutes(timeZone, atMs) * 60_000) / dayMs);
  // Day 0 of the next month is the last day of the expiry month.
  const lastValidDay = Math.floor(Date.UTC(card.expYear, card.expMonth, 0) / dayMs);
  return lastValidDay - today;
}

/** Whether the sweep warns about a card `days` before its expiry: still valid, and within the window. */
export function expiresSoon(days: number, daysBeforeExpiry: number): boolean {
  return days >= 0 && days <= daysBeforeExpiry;
}

/** The next daily sweep after `nowMs`: the next `sweepHourUtc`:00 UTC. */
export function nextSweepAt(nowMs: number): number {
  const today = Math.floor(nowMs / dayMs) * dayMs + sweepHourUtc * 3_600_000;
  return today > nowMs ? today : today + dayMs;
}

/** The UTC date (YYYY-MM-DD) of an instant: names a day's sweep of one account. */
export function sweepDay(atMs: number): string {
  return new Date(atMs).toISOString().slice(0, 10);
}

/** The deployment's one daily sweep workflow; its task queue keeps deployments sharing a cluster apart. */
export function cardHealthSweepWorkflowId(taskQueue: string): string {
  return `card-health-sweep-${taskQueue}`;
}

/** The deployment's one daily data retention workflow (same hour, same task queue as the sweep). */
export function dataRetentionWorkflowId(taskQueue: string): string {
  return `data-retention-${taskQueue}`;
}

/** One account's sweep: one per day from the daily workflow (`run` = its date), or one per operator run. */
export function cardSweepWorkflowId(accountId: string, run: string): string {
  return `card-sweep-${accountId}-${run}`;
}
