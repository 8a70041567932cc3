import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  breakdownReport,
  type BrokenDownRecovery,
  type ReportedAttempt,
} from '../domain/report-breakdown.js';

const day = 86_400_000;
const t0 = new Date('2026-10-01T00:00:00Z');
const at = (days: number) => new Date(t0.getTime() + days * day);

const declined = (gateway = 'stripe'): ReportedAttempt => ({ gateway, outcome: 'declined' });
const approved = (gateway = 'stripe'): ReportedAttempt => ({ gateway, outcome: 'approved' });

const recovery = (r: Partial<BrokenDownRecovery>): BrokenDownRecovery => ({
  _id: randomUUID(),
  state: 'failed',
  amount: 1000,
  currency: 'USD',
  customerEmail: null,
  createdAt: at(0),
  recoveredAt: null,
  originalDeclineCode: 'insufficient_funds',
  strategyUsed: 'all_failed',
  attempts: [],
  ...r,
});

const recovered = (days: number, r: Partial<BrokenDownRecovery> = {}) =>
  recovery({
    state: 'succeeded',
    strategyUsed: 'smart_retry',
    recoveredAt: at(days),
    attempts: [declined(), approved()],
    ...r,
  });

const breakdown = (recoveries: BrokenDownRecovery[]) => breakdownReport({ from: t0, to: at(30), recoveries });

describe('breakdown report', () => {
  it('files failures under the canonical decline code, most frequent first, without a code last', () => {
    const report = breakdown([
      recovered(2, { originalDeclineCode: 'Insufficient Funds', amount: 2500 }),
      recovery({ originalDeclineCode: '51', attempts: [declined(), declined()] }),
      recovery({ originalDeclineCode: 'insufficient_funds', state: 'queued', attempts: [declined()] }),
      recovery({
        originalDeclineCode: null,
        state: 'succeeded',
        strategyUsed: 'primary',
        recoveredAt: at(0),
      }),
      recovery({ originalDeclineCode: 'fraudulent', state: 'blocked', strategyUsed: null }),
      recovery({ originalDeclineCode: 'expired_card', currency: 'EUR', amount: 700 }),
      recovery({ state: 'holdout', strategyUsed: 'holdout' }),
    ]);
    expect(report.byDeclineCode).toEqual([
      {
        declineCode: 'insufficient_funds',
        group: 'recoverable',
        failedPayments: 3,
        recovered: 1,
        inProgress: 1,
        recoveryRate: 0.3333,
        revenueByCurrency: { USD: { failed: 4500, recovered: 2500 } },
      },
      {
        declineCode: 'expired_card',
        group: 'expired',
        failedPayments: 1,
        recovered: 0,
        inProgress: 0,
        recoveryRate: 0,
        revenueByCurrency: { EUR: { failed: 700, recovered: 0 } },
      },
      {
        declineCode: 'fraudulent',
        group: 'blocked',
        failedPayments: 1,
        recovered: 0,
        inProgress: 0,
        recoveryRate: 0,
        revenueByCurrency: { USD: { failed: 1000, recovered: 0 } },
      },
      {
        declineCode: null,
        group: 'unknown',
        failedPayments: 1,
        recovered: 1,
        inProgress: 0,
        recoveryRate: 1,
        revenueByCurrency: { USD: { failed: 1000, recovered: 1000 } },
      },
    ]);
  });

  it('credits each recovered payment to the strategy that recovered it, per currency', () => {
    const report = breakdown([
      recovered(3, { amount: 2000 }),
      recovered(4, { amount: 3000, currency: 'EUR' }),
      recovered(1, { strategyUsed: 'backup_gateway', amount: 500 }),
      recovered(5, { amount: 1000 }),
      recovery({ state: 'failed', strategyUsed: 'all_failed' }),
    ]);
    expect(report.byStrategy).toEqual([
      { strategyUsed: 'smart_retry', recovered: 3, recoveredByCurrency: { USD: 3000, EUR: 3000 } },
      { strategyUsed: 'backup_gateway', recovered: 1, recoveredByCurrency: { USD: 500 } },
    ]);
  });

  it('counts the charges a recovery took, a request the gateway never got not among them', () => {
    const report = breakdown([
      recovered(1, { attempts: [approved()] }),
      recovered(2, { attempts: [declined(), approved()] }),
      recovered(3, { attempts: [declined(), { gateway: 'stripe', outcome: 'not_charged' }, approved()] }),
      recovered(4, { attempts: [declined(), declined(), declined(), approved()] }),
      recovery({ attempts: [declined(), declined()] }),
    ]);
    expect(report.chargesToRecover).toEqual([
      { attempts: 1, recovered: 1 },
      { attempts: 2, recovered: 2 },
      { attempts: 4, recovered: 1 },
    ]);
  });

  it('gives the median, 90th percentile (interpolated) and mean of the days from failure to recovery', () => {
    const days = [0.5, 1, 2, 3, 4, 5, 6, 7, 8, 20];
    const report = breakdown(days.map((d) => recovered(d)));
    expect(report.daysToRecover).toEqual({ recovered: 10, p50: 4.5, p90: 9.2, mean: 5.65 });
    expect(breakdown([recovery({})]).daysToRecover).toBeNull();
  });

  it("rates each gateway's approvals over its definite answers", () => {
    const report = breakdown([
      recovered(1, { attempts: [declined('stripe'), approved('adyen')] }),
      recovery({
        attempts: [
          declined('stripe'),
          { gateway: 'stripe', outcome: 'ambiguous' },
          { gateway: 'adyen', outcome: 'not_charged' },
          declined('adyen'),
        ],
      }),
      recovered(2, { attempts: [approved('stripe')] }),
    ]);
    expect(report.byGateway).toEqual([
      {
        gateway: 'stripe',
        attempts: 4,
        approved: 1,
        declined: 2,
        ambiguous: 1,
        notCharged: 0,
        approvalRate: 0.3333,
      },
      {
        gateway: 'adyen',
        attempts: 3,
        approved: 1,
        declined: 1,
        ambiguous: 0,
        notCharged: 1,
        approvalRate: 0.5,
      },
    ]);
  });

  it('leaves Proof Mode controls out and reports an empty window as empty', () => {
    const report = breakdown([recovery({ state: 'holdout', strategyUsed: 'holdout' })]);
    expect(report).toEqual({
      from: t0.toISOString(),
      to: at(30).toISOString(),
      byDeclineCode: [],
      byStrategy: [],
      chargesToRecover: [],
      daysToRecover: null,
      byGateway: [],
    });
  });
});
