import { describe, expect, it } from 'vitest';
import { summaryReport, type ReportedRecovery, type ReportInput } from '../domain/report.js';
import { compareProportions } from '../domain/two-proportions.js';

const day = 86_400_000;
const t0 = new Date('2026-10-01T00:00:00Z');
const at = (days: number) => new Date(t0.getTime() + days * day);

describe('two-proportion comparison (Proof Mode)', () => {
  it('60 of 100 treated against 40 of 100 controls: +20 points, 95% CI 6.4–33.6, p = 0.0047', () => {
    expect(compareProportions({ trials: 100, successes: 60 }, { trials: 100, successes: 40 })).toEqual({
      treatmentRate: 0.6,
      controlRate: 0.4,
      upliftPoints: 20,
      confidenceInterval95: [6.42, 33.58],
      pValue: 0.004678,
      insufficientData: false,
    });
  });

  it('no difference has a p-value of 1', () => {
    expect(compareProportions({ trials: 50, successes: 25 }, { trials: 50, successes: 25 }).pValue).toBe(1);
  });

  it.each([
    [
      { trials: 29, successes: 10 },
      { trials: 100, successes: 40 },
    ],
    [
      { trials: 100, successes: 2 },
      { trials: 100, successes: 1 },
    ],
  ])('%j against %j is flagged insufficient data', (treatment, control) => {
    expect(compareProportions(treatment, control).insufficientData).toBe(true);
  });

  it('an empty group gives no figures, and says so', () => {
    expect(compareProportions({ trials: 40, successes: 10 }, { trials: 0, successes: 0 })).toMatchObject({
      controlRate: null,
      upliftPoints: null,
      pValue: null,
      insufficientData: true,
    });
  });
});

const recovery = (r: Partial<ReportedRecovery>): ReportedRecovery => ({
  state: 'failed',
  amount: 1000,
  currency: 'USD',
  customerEmail: null,
  createdAt: at(0),
  recoveredAt: null,
  ...r,
});

/** A 30-day report as of its end, with nothing in it unless given. */
const report = (input: Partial<ReportInput>) =>
  summaryReport({
    from: t0,
    to: at(30),
    now: at(30),
    recoveries: [],
    organicSuccesses: 0,
    paidOnTheirOwn: new Map(),
    ...input,
  });

describe('summary report', () => {
  it('recovery rate and revenue count what Recoup worked on; lift is over the organic baseline', () => {
    const summary = report({
      recoveries: [
        recovery({ state: 'succeeded', recoveredAt: at(2), amount: 2500 }),
        recovery({ state: 'succeeded', recoveredAt: at(1), currency: 'EUR', amount: 900 }),
        recovery({ state: 'failed' }),
        recovery({ state: 'queued' }),
        recovery({ state: 'holdout', customerEmail: 'c@example.com' }),
      ],
      organicSuccesses: 15,
    });
    expect(summary).toMatchObject({
      failedPayments: 5,
      recovered: 2,
      inProgress: 1,
      recoveryRate: 0.5,
      revenueByCurrency: { USD: { failed: 4500, recovered: 2500 }, EUR: { failed: 900, recovered: 900 } },
      organicSuccesses: 15,
      organicSuccessRate: 0.75,
      successRateWithRecoup: 0.85,
      liftPoints: 10,
    });
  });

  it('an invoice its billing platform collected (paid_elsewhere) is neither recovered by Recoup nor in progress', () => {
    const summary = report({
      recoveries: [
        recovery({ state: 'succeeded', recoveredAt: at(2), amount: 2500 }),
        recovery({ state: 'paid_elsewhere', amount: 700 }),
      ],
    });
    expect(summary).toMatchObject({
      failedPayments: 2,
      recovered: 1,
      inProgress: 0,
      recoveryRate: 0.5,
      revenueByCurrency: { USD: { failed: 3200, recovered: 2500 } },
    });
  });

  it('a control counts as recovered when its customer paid on their own within 30 days, and once decided', () => {
    const summary = report({
      to: at(40),
      now: at(40),
      recoveries: [
        recovery({ state: 'holdout', customerEmail: 'paid@example.com' }),
        recovery({ state: 'holdout', customerEmail: 'late@example.com' }),
        recovery({ state: 'holdout', customerEmail: 'open@example.com', createdAt: at(20) }),
        recovery({ state: 'succeeded', recoveredAt: at(3) }),
        recovery({ state: 'succeeded', recoveredAt: at(35) }),
        recovery({ state: 'queued', createdAt: at(25) }),
      ],
      paidOnTheirOwn: new Map([
        ['paid@example.com', [at(12)]],
        ['late@example.com', [at(31)]],
      ]),
    });
    // Controls: paid (in window), late (window closed, not paid in it); open is still being watched.
    // Treatment: recovered on day 3; recovered on day 35, after its window (decided, not recovered); the
    // queued one is still being watched.
    expect(summary.proofMode).toMatchObject({
      treatment: 2,
      control: 2,
      treatmentRate: 0.5,
      controlRate: 0.5,
      upliftPoints: 0,
      insufficientData: true,
    });
  });

  it('without controls there is no Proof Mode section, and nothing to divide gives nulls', () => {
    expect(report({})).toMatchObject({
      recoveryRate: null,
      organicSuccessRate: null,
      liftPoints: null,
      proofMode: null,
    });
  });
});
