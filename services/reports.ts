import { breakdownReport } from '../domain/report-breakdown.js';
import { isCompared, observationDays, summaryReport } from '../domain/report.js';
import { rangeOf, type ReportWindow } from '../domain/report-window.js';
import type { Stores } from '../store/index.js';

const day = 86_400_000;

/**
 * The summary report of an account (recovery rate, revenue, the organic baseline, lift, Proof Mode): what
 * the merchant's GET /api/reports/summary and the operator's `recoup reports summary` show.
 */
export async function summaryOf(stores: Stores, accountId: string, window: ReportWindow, now: Date) {
  const { from, to } = rangeOf(window, now);
  const [recoveries, pulses] = await Promise.all([
    stores.recoveries.createdBetween(accountId, from, to),
    stores.pulses.countBetween(accountId, from, to),
  ]);
  // Either group's customer may pay on their own: the comparison reads both the same way. The pulses of
  // controls' customers also tell which pulses in the range are a control's payment, not organic.
  const comparedEmails = [
    ...new Set(recoveries.filter(isCompared).flatMap((r) => (r.customerEmail ? [r.customerEmail] : []))),
  ];
  const paidOnTheirOwn = await stores.pulses.paidBy(
    accountId,
    comparedEmails,
    from,
    new Date(to.getTime() + observationDays * day),
  );
  return summaryReport({ from, to, now, recoveries, pulses, paidOnTheirOwn });
}

/**
 * Where an account's recovered revenue came from (by decline code, strategy, charges and days to recover,
 * gateway): what GET /api/reports/breakdown and `recoup reports breakdown` show.
 */
export async function breakdownOf(stores: Stores, accountId: string, window: ReportWindow, now: Date) {
  const { from, to } = rangeOf(window, now);
  return breakdownReport({
    from,
    to,
    recoveries: await stores.recoveries.brokenDownBetween(accountId, from, to),
  });
}
