import { quantileSorted } from 'simple-statistics';
import { classifyDecline, type DeclineGroup } from './declines.js';
import { statusOf, type Strategy } from './recovery.js';
import { share } from './rates.js';
import { addRevenue, treatedOf, type ReportedRecovery, type Revenue } from './report.js';

const day = 86_400_000;

/** One attempt as the breakdown reads it (the read model's attempt record has more). */
export interface ReportedAttempt {
  gateway: string;
  outcome: 'approved' | 'declined' | 'ambiguous' | 'not_charged';
}

/** A recovery as the breakdown reads it. */
export interface BrokenDownRecovery extends ReportedRecovery {
  originalDeclineCode: string | null;
  strategyUsed: Strategy | null;
  attempts: ReportedAttempt[];
}

interface CodeRow {
  declineCode: string | null;
  group: DeclineGroup;
  failedPayments: number;
  recovered: number;
  inProgress: number;
  recoveryRate: number | null;
  revenueByCurrency: Revenue;
}

interface StrategyRow {
  strategyUsed: Strategy | null;
  recovered: number;
  recoveredByCurrency: Record<string, number>;
}

interface GatewayRow {
  gateway: string;
  attempts: number;
  approved: number;
  declined: number;
  ambiguous: number;
  notCharged: number;
  approvalRate: number | null;
}

/** Counts by key, created on first use, listed in the order `order` gives. */
function tally<K, R>(make: (key: K) => R) {
  const rows = new Map<K, R>();
  return {
    row(key: K): R {
      let row = rows.get(key);
      if (!row) rows.set(key, (row = make(key)));
      return row;
    },
    list(order: (a: R, b: R) => number): R[] {
      return [...rows.values()].sort(order);
    },
  };
}

/** The decline code a failure is filed under: the canonical form of the merchant's, null when none was given. */
function codeOf(r: BrokenDownRecovery): string | null {
  return r.originalDeclineCode ? classifyDecline(r.originalDeclineCode).code : null;
}

const charged = (a: ReportedAttempt) => a.outcome !== 'not_charged';
const roundTo = (value: number, decimals: number) => Math.round(value * 10 ** decimals) / 10 ** decimals;

/** Days from failure to recovery: median, 90th percentile and mean (null without recoveries). */
function daysToRecover(recovered: BrokenDownRecovery[]) {
  const days = recovered
    .flatMap((r) => (r.recoveredAt ? [(r.recoveredAt.getTime() - r.createdAt.getTime()) / day] : []))
    .sort((a, b) => a - b);
  if (days.length === 0) return null;
  return {
    recovered: days.length,
    p50: roundTo(quantileSorted(days, 0.5), 2),
    p90: roundTo(quantileSorted(days, 0.9), 2),
    mean: roundTo(days.reduce((sum, d) => sum + d, 0) / days.length, 2),
  };
}

/**
 * Where the recovered revenue came from, for the failures whose recovery started in the range (Proof Mode
 * controls left out, as in the summary): by the merchant's decline code, by the strategy that recovered
 * each payment, by how many charges it took and how many days, and each gateway's approvals.
 */
export function breakdownReport(input: { from: Date; to: Date; recoveries: BrokenDownRecovery[] }) {
  const treated = treatedOf(input.recoveries);
  const codes = tally<string | null, CodeRow>((declineCode) => ({
    declineCode,
    group: classifyDecline(declineCode).group,
    failedPayments: 0,
    recovered: 0,
    inProgress: 0,
    recoveryRate: null,
    revenueByCurrency: {},
  }));
  const strategies = tally<Strategy | null, StrategyRow>((strategyUsed) => ({
    strategyUsed,
    recovered: 0,
    recoveredByCurrency: {},
  }));
  const charges = tally<number, { attempts: number; recovered: number }>((attempts) => ({
    attempts,
    recovered: 0,
  }));
  const gateways = tally<string, GatewayRow>((gateway) => ({
    gateway,
    attempts: 0,
    approved: 0,
    declined: 0,
    ambiguous: 0,
    notCharged: 0,
    approvalRate: null,
  }));
  for (const r of treated) {
    const recovered = r.state === 'succeeded';
    const code = codes.row(codeOf(r));
    code.failedPayments += 1;
    if (recovered) code.recovered += 1;
    if (statusOf(r.state) === 'unknown') code.inProgress += 1;
    addRevenue(code.revenueByCurrency, r);
    if (recovered) {
      const strategy = strategies.row(r.strategyUsed);
      strategy.recovered += 1;
      strategy.recoveredByCurrency[r.currency] = (strategy.recoveredByCurrency[r.currency] ?? 0) + r.amount;
      charges.row(r.attempts.filter(charged).length).recovered += 1;
    }
    for (const attempt of r.attempts) {
      const gateway = gateways.row(attempt.gateway);
      gateway.attempts += 1;
      if (attempt.outcome === 'not_charged') gateway.notCharged += 1;
      else gateway[attempt.outcome] += 1;
    }
  }
  return {
    from: input.from.toISOString(),
    to: input.to.toISOString(),
    byDeclineCode: codes
      .list(
        (a, b) =>
          b.failedPayments - a.failedPayments ||
          Number(a.declineCode === null) - Number(b.declineCode === null) ||
          (a.declineCode ?? '').localeCompare(b.declineCode ?? ''),
      )
      .map((row) => ({ ...row, recoveryRate: share(row.recovered, row.failedPayments) })),
    byStrategy: strategies.list(
      (a, b) => b.recovered - a.recovered || (a.strategyUsed ?? '').localeCompare(b.strategyUsed ?? ''),
    ),
    chargesToRecover: charges.list((a, b) => a.attempts - b.attempts),
    daysToRecover: daysToRecover(treated.filter((r) => r.state === 'succeeded')),
    byGateway: gateways
      .list((a, b) => b.attempts - a.attempts || a.gateway.localeCompare(b.gateway))
      .map((row) => ({ ...row, approvalRate: share(row.approved, row.approved + row.declined) })),
  };
}
