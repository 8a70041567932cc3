import { breakdownReport } from '../domain/report-breakdown.js';
import { summaryReport, type ReportedRecovery } from '../domain/report.js';
import { isCompared, observationDays } from '../domain/report-matching.js';
import { rangeOf, type ReportWindow } from '../domain/report-window.js';
import type { Stores } from '../store/index.js';

const day = 86_400_000;

/** The emails of the customers whose payments are in the Proof Mode comparison. */
const comparedEmailsOf = (recoveries: ReportedRecovery[]) => [
  ...new Set(recoveries.filter(isCompared).flatMap((r) => (r.customerEmail ? [r.customerEmail] : []))),
];

/**
 * Whether the account's reports read its sandbox recoveries: in test mode (its primary gateway is a test
 * gateway) they show the sandbox's, once live only live ones. An account gone is read as live.
 */
const inTestMode = async (stores: Stores, accountId: string) =>
  (await stores.accounts.find(accountId))?.testMode ?? false;

/**
 * The summary report of an account (recovery rate, revenue, the organic baseline, lift, Proof Mode) over
 * the recoveries of its current mode: what the merchant's GET /api/reports/summary and the operator's
 * `recoup reports summary` show.
 */
export async function summaryOf(stores: Stores, accountId: string, window: ReportWindow, now: Date) {
  const { from, to } = rangeOf(window, now);
  const watched = observationDays * day;
  // From the earliest failure watched (an older payment takes its pulse first) until the last one's window
  // closes.
  const span = [new Date(from.getTime() - watched), new Date(to.getTime() + watched)] as const;
  const simulated = await inTestMode(stores, accountId);
  const [recoveries, earlierRecoveries, pulses, namedPulses] = await Promise.all([
    stores.recoveries.createdBetween(accountId, simulated, from, to),
    // Failures of the 30 days before the range are still watched in it: a pulse in the range may be their
    // payment, not an organic one.
    stores.recoveries.createdBetween(accountId, simulated, span[0], from),
    stores.pulses.countBetween(accountId, simulated, from, to),
    stores.pulses.namedBetween(accountId, simulated, ...span),
  ]);
  // Either group's customer may pay on their own: the comparison reads both the same way. The pulses of
  // compared customers also tell which pulses in the range are a compared payment's own, not organic.
  const paidOnTheirOwn = await stores.pulses.paidBy(
    accountId,
    simulated,
    comparedEmailsOf([...earlierRecoveries, ...recoveries]),
    ...span,
  );
  return summaryReport({
    from,
    to,
    now,
    recoveries,
    earlierRecoveries,
    pulses,
    namedPulses,
    paidOnTheirOwn,
  });
}

/**
 * Where an account's recovered revenue came from (by decline code, strategy, charges and days to recover,
 * gateway), over the recoveries of its current mode: what GET /api/reports/breakdown and `recoup reports
 * breakdown` show.
 */
export async function breakdownOf(stores: Stores, accountId: string, window: ReportWindow, now: Date) {
  const { from, to } = rangeOf(window, now);
  return breakdownReport({
    from,
    to,
    recoveries: await stores.recoveries.brokenDownBetween(
      accountId,
      await inTestMode(stores, accountId),
      from,
      to,
    ),
  });
}
