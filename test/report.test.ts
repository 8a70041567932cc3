import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { summaryReport, type ReportedRecovery, type ReportInput } from '../domain/report.js';
import { clusteredGroup, compareProportions, type Group } from '../domain/two-proportions.js';

const day = 86_400_000;
const t0 = new Date('2026-10-01T00:00:00Z');
const at = (days: number) => new Date(t0.getTime() + days * day);
const email = 'customer@example.com';

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

  it('rates are given to four decimals, as the report’s others; the uplift comes from the unrounded rates', () => {
    expect(compareProportions({ trials: 3, successes: 2 }, { trials: 3, successes: 1 })).toMatchObject({
      treatmentRate: 0.6667,
      controlRate: 0.3333,
      upliftPoints: 33.33,
    });
    expect(compareProportions({ trials: 7, successes: 1 }, { trials: 0, successes: 0 })).toMatchObject({
      treatmentRate: 0.1429,
      controlRate: null,
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
    [
      { trials: 50, successes: 4 },
      { trials: 50, successes: 5 },
    ],
  ])('%j against %j is flagged insufficient data', (treatment, control) => {
    expect(compareProportions(treatment, control).insufficientData).toBe(true);
  });

  it.each([
    [
      { trials: 30, successes: 15 },
      { trials: 30, successes: 10 },
    ],
    [
      { trials: 50, successes: 4 },
      { trials: 50, successes: 6 },
    ],
  ])('%j against %j is enough data: 30 payments a group and 5 expected each way', (treatment, control) => {
    expect(compareProportions(treatment, control).insufficientData).toBe(false);
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

/** `n` customers of `payments` payments each, the first `paying` of them paying every one, the rest none. */
const customers = (n: number, paying: number, payments: number): Group[] =>
  Array.from({ length: n }, (_, i) => ({ trials: payments, successes: i < paying ? payments : 0 }));

/** A seeded uniform draw in [0, 1) (mulberry32), so the simulation below is the same on every run. */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('Proof Mode draws customers: one customer’s payments are one cluster', () => {
  it('one payment per customer changes nothing: 60 of 100 against 40 of 100 is still p = 0.0047', () => {
    expect(
      compareProportions(clusteredGroup(customers(100, 60, 1)), clusteredGroup(customers(100, 40, 1))),
    ).toEqual(compareProportions({ trials: 100, successes: 60 }, { trials: 100, successes: 40 }));
  });

  it('customers paying all or none of their 5 payments count as 5 times fewer trials', () => {
    expect(clusteredGroup(customers(100, 60, 5))).toEqual({ trials: 100, successes: 60 });
    expect(
      compareProportions(clusteredGroup(customers(40, 24, 5)), clusteredGroup(customers(40, 16, 5))),
    ).toEqual(compareProportions({ trials: 40, successes: 24 }, { trials: 40, successes: 16 }));
  });

  it('with no true difference, p < 0.05 about 5% of the time, however correlated a customer’s payments are', () => {
    // 100 customers a group, 5 payments each, every customer paying all of theirs or none (half do): with
    // each payment a trial, the test rejects about 4 times in 10.
    const random = seeded(20261127);
    const group = () =>
      clusteredGroup(Array.from({ length: 100 }, () => ({ trials: 5, successes: random() < 0.5 ? 5 : 0 })));
    const runs = 2000;
    let rejected = 0;
    for (let i = 0; i < runs; i += 1)
      if ((compareProportions(group(), group()).pValue ?? 1) < 0.05) rejected += 1;
    expect(rejected / runs).toBeGreaterThan(0.03);
    expect(rejected / runs).toBeLessThan(0.07);
  });
});

const recovery = (r: Partial<ReportedRecovery>): ReportedRecovery => ({
  _id: randomUUID(),
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
    earlierRecoveries: [],
    pulses: 0,
    namedPulses: [],
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
      pulses: 15,
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

  it('lift is the share of all payments Recoup recovered, rounded once: not the difference of rounded rates', () => {
    // 1 organic and 2 failures, 1 recovered: 1/3 and 2/3 round to 0.3333 and 0.6667, 0.3334 apart.
    const summary = report({
      recoveries: [recovery({ state: 'succeeded', recoveredAt: at(1) }), recovery({ state: 'failed' })],
      pulses: 1,
    });
    expect(summary).toMatchObject({
      organicSuccessRate: 0.3333,
      successRateWithRecoup: 0.6667,
      liftPoints: 33.33,
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
        recovery({ state: 'holdout', inProofMode: true, customerEmail: 'paid@example.com' }),
        recovery({ state: 'holdout', inProofMode: true, customerEmail: 'late@example.com' }),
        recovery({
          state: 'holdout',
          inProofMode: true,
          customerEmail: 'open@example.com',
          createdAt: at(20),
        }),
        recovery({
          state: 'succeeded',
          inProofMode: true,
          customerEmail: 't1@example.com',
          recoveredAt: at(3),
        }),
        recovery({
          state: 'succeeded',
          inProofMode: true,
          customerEmail: 't2@example.com',
          recoveredAt: at(35),
        }),
        recovery({ state: 'queued', inProofMode: true, customerEmail: 't3@example.com', createdAt: at(25) }),
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

  it('the comparison takes each customer’s payments as one cluster: 3 payments each, paid all or none, weigh as one', () => {
    // 40 customers a group, 3 failures each (days 0, 1, 2): 24 treated customers Recoup recovered every
    // time, 16 controls who paid on their own every time. Counted as 120 independent payments a group, the
    // p-value would be 0.002; the customers are 40 a group, as if each had failed once (p = 0.074).
    const drawn = (group: 'treated' | 'control', i: number, collected: boolean, failedOn: number) =>
      recovery({
        inProofMode: true,
        customerEmail: `${group}-${i}@example.com`,
        createdAt: at(failedOn),
        ...(group === 'control'
          ? { state: 'holdout' }
          : collected
            ? { state: 'succeeded', recoveredAt: at(failedOn + 1) }
            : { state: 'failed' }),
      });
    const recoveries = [0, 1, 2].flatMap((failedOn) =>
      Array.from({ length: 40 }, (_, i) => [
        drawn('treated', i, i < 24, failedOn),
        drawn('control', i, i < 16, failedOn),
      ]).flat(),
    );
    const paidOnTheirOwn = new Map(
      Array.from({ length: 16 }, (_, i) => [`control-${i}@example.com`, [at(5), at(6), at(7)]]),
    );
    const summary = report({ to: at(3), now: at(40), recoveries, paidOnTheirOwn });
    const asCustomers = compareProportions({ trials: 40, successes: 24 }, { trials: 40, successes: 16 });
    expect(summary.proofMode).toEqual({ treatment: 120, control: 120, ...asCustomers });
    expect(asCustomers.pValue).toBeCloseTo(0.0736, 3);
    expect(
      compareProportions({ trials: 120, successes: 72 }, { trials: 120, successes: 48 }).pValue,
    ).toBeLessThan(0.003);
  });

  it('a payment counts once its 30 days are over, collected or not: one recovered early is not counted sooner', () => {
    const treated = { state: 'succeeded', inProofMode: true } as const;
    const summary = report({
      to: at(40),
      now: at(40),
      recoveries: [
        // Failed 5 days before now, recovered on its day 2: its window is still open.
        recovery({ ...treated, customerEmail: 'fresh@example.com', createdAt: at(35), recoveredAt: at(37) }),
        // Failed 31 days before now, recovered on its day 2: decided.
        recovery({ ...treated, customerEmail: 'old@example.com', createdAt: at(9), recoveredAt: at(11) }),
      ],
    });
    expect(summary.proofMode).toMatchObject({ treatment: 1, control: 0, treatmentRate: 1 });
  });

  it('10 organic pulses and 10 controls of which 5 paid on their own (pulsed): 10 organic successes of 20 payments', () => {
    const controls = Array.from({ length: 10 }, (_, i) =>
      recovery({ state: 'holdout', inProofMode: true, customerEmail: `c${i}@example.com`, createdAt: at(i) }),
    );
    const paidOnTheirOwn = new Map(controls.slice(0, 5).map((c, i) => [c.customerEmail ?? '', [at(i + 3)]]));
    const summary = report({ recoveries: controls, pulses: 15, paidOnTheirOwn });
    expect(summary).toMatchObject({ failedPayments: 10, organicSuccesses: 10, organicSuccessRate: 0.5 });
  });

  it('without controls there is no Proof Mode section, and nothing to divide gives nulls', () => {
    expect(report({})).toMatchObject({
      recoveryRate: null,
      organicSuccessRate: null,
      liftPoints: null,
      proofMode: null,
    });
  });

  it('the Proof Mode section is there once a payment was drawn into a group, not for holdouts before the mark', () => {
    const unmarked = recovery({ state: 'holdout', customerEmail: email });
    expect(report({ recoveries: [unmarked] }).proofMode).toBeNull();
    const treated = recovery({ state: 'failed', inProofMode: true, customerEmail: email });
    expect(report({ recoveries: [unmarked, treated] }).proofMode).toMatchObject({ treatment: 1, control: 0 });
  });
});

/**
 * How the Proof Mode comparison counts one payment (failed on day 0 unless given), its customer having paid
 * on their own on `paidOn` days, in a report as of day 60: next to one decided, unpaid control of another
 * customer, so that the section is there whatever the payment is.
 */
function countedAs(r: Partial<ReportedRecovery>, paidOn: number[] = []): string {
  const other = recovery({ state: 'holdout', inProofMode: true, customerEmail: 'other@example.com' });
  const proof = report({
    to: at(60),
    now: at(60),
    recoveries: [recovery(r), other],
    paidOnTheirOwn: new Map([[email, paidOn.map(at)]]),
  }).proofMode;
  if (proof === null) throw new Error('No Proof Mode section');
  if (proof.treatment === 1) return `treatment: ${proof.treatmentRate === 1 ? 'collected' : 'not collected'}`;
  if (proof.control === 2) return `control: ${proof.controlRate === 0.5 ? 'collected' : 'not collected'}`;
  return 'not counted';
}

describe('who the Proof Mode comparison counts, and how', () => {
  const drawn = { inProofMode: true, customerEmail: email } as const;
  it.each<[string, string, Partial<ReportedRecovery>, number[]]>([
    ['a control paid on their own on day 12', 'control: collected', { ...drawn, state: 'holdout' }, [12]],
    [
      'a control paid on day 31, after its window',
      'control: not collected',
      { ...drawn, state: 'holdout' },
      [31],
    ],
    [
      'a control still watched (failed on day 45)',
      'not counted',
      { ...drawn, state: 'holdout', createdAt: at(45) },
      [],
    ],
    [
      'a control still watched that paid on its day 1 (failed on day 45)',
      'not counted',
      { ...drawn, state: 'holdout', createdAt: at(45) },
      [46],
    ],
    [
      'a treated payment still watched that Recoup recovered on its day 2 (failed on day 45)',
      'not counted',
      { ...drawn, state: 'succeeded', createdAt: at(45), recoveredAt: at(47) },
      [],
    ],
    [
      'a control its billing platform reports paid on day 6',
      'control: collected',
      { ...drawn, state: 'holdout', paidOnTheirOwnAt: at(6) },
      [],
    ],
    [
      'a control its billing platform reports paid on day 33, after its window',
      'control: not collected',
      { ...drawn, state: 'holdout', paidOnTheirOwnAt: at(33) },
      [],
    ],
    [
      'a treated payment that failed, its billing platform reporting it paid on day 9',
      'treatment: collected',
      { ...drawn, state: 'failed', paidOnTheirOwnAt: at(9) },
      [],
    ],
    [
      'a control without an email (its own payment cannot be seen)',
      'not counted',
      { state: 'holdout', inProofMode: true },
      [],
    ],
    [
      'a treated payment without an email, left out like the controls',
      'not counted',
      { state: 'succeeded', inProofMode: true, recoveredAt: at(1) },
      [],
    ],
    [
      'a treated payment Recoup recovered on day 3',
      'treatment: collected',
      { ...drawn, state: 'succeeded', recoveredAt: at(3) },
      [],
    ],
    [
      'a treated payment Recoup recovered on day 35',
      'treatment: not collected',
      { ...drawn, state: 'succeeded', recoveredAt: at(35) },
      [],
    ],
    [
      'a treated payment stopped as paid elsewhere on day 5',
      'treatment: collected',
      { ...drawn, state: 'paid_elsewhere', endedAt: at(5) },
      [],
    ],
    [
      'a treated payment stopped as paid elsewhere on day 40',
      'treatment: not collected',
      { ...drawn, state: 'paid_elsewhere', endedAt: at(40) },
      [],
    ],
    [
      'a treated payment that failed, its customer paying on their own on day 12',
      'treatment: collected',
      { ...drawn, state: 'failed' },
      [12],
    ],
    [
      'a treated payment stopped as no longer owed',
      'treatment: not collected',
      { ...drawn, state: 'stopped', endedAt: at(5) },
      [],
    ],
    [
      'a treated payment blocked after an attempt',
      'treatment: not collected',
      { ...drawn, state: 'blocked' },
      [],
    ],
    [
      'a payment blocked at intake (no group is drawn for it)',
      'not counted',
      { state: 'blocked', customerEmail: email },
      [],
    ],
    [
      'a payment from before Proof Mode was on',
      'not counted',
      { state: 'succeeded', customerEmail: email, recoveredAt: at(1) },
      [],
    ],
    ['a holdout recorded before the mark', 'not counted', { state: 'holdout', customerEmail: email }, [12]],
  ])('%s: %s', (_, expected, r, paidOn) => {
    expect(countedAs(r, paidOn)).toBe(expected);
  });
});

/**
 * The organic successes of a report over days 0–40 as of day 70 with these recoveries (and these of the 30
 * days before it), `email`'s customer having logged pulses on `pulsedOn` days (the range's pulses are all
 * of theirs).
 */
function organicWith(
  recoveries: ReportedRecovery[],
  pulsedOn: number[],
  earlierRecoveries: ReportedRecovery[] = [],
): number {
  return report({
    to: at(40),
    now: at(70),
    recoveries,
    earlierRecoveries,
    pulses: pulsedOn.filter((d) => d >= 0 && d < 40).length,
    paidOnTheirOwn: new Map([[email, pulsedOn.map(at)]]),
  }).organicSuccesses;
}

const control = (failedOn: number, r: Partial<ReportedRecovery> = {}) =>
  recovery({ state: 'holdout', inProofMode: true, customerEmail: email, createdAt: at(failedOn), ...r });

describe('a pulse that is a compared payment’s own (a control’s, or a treated one Recoup did not collect) is not also an organic success', () => {
  it.each<[string, ReportedRecovery[], number[], number]>([
    [
      'the first pulse within the control’s 30 days is its payment; a later one is organic',
      [control(0)],
      [3, 8],
      1,
    ],
    ['a pulse before the failure is organic', [control(10)], [4, 12], 1],
    ['a pulse after the control’s 30 days is organic', [control(0)], [35], 1],
    [
      'one pulse that is the first for two controls of the customer is one payment',
      [control(0), control(2)],
      [5],
      0,
    ],
    [
      'a control’s payment pulsed after the report’s range was never among its pulses',
      [control(35)],
      [45],
      0,
    ],
    [
      'a treated payment Recoup did not collect, paid on the customer’s own, likewise',
      [recovery({ state: 'failed', inProofMode: true, customerEmail: email, createdAt: at(0) })],
      [3, 8],
      1,
    ],
    [
      'a treated payment Recoup recovered: the customer’s pulses are organic',
      [
        recovery({
          state: 'succeeded',
          inProofMode: true,
          customerEmail: email,
          createdAt: at(0),
          recoveredAt: at(1),
        }),
      ],
      [3, 8],
      2,
    ],
    [
      'a control its billing platform reported paid: the customer’s pulse is organic',
      [control(0, { paidOnTheirOwnAt: at(2) })],
      [3],
      1,
    ],
    [
      'a holdout from before the Proof Mode mark is not compared: its pulse stays organic',
      [control(0, { inProofMode: undefined })],
      [3],
      1,
    ],
  ])('%s', (_, recoveries, pulsedOn, organic) => {
    expect(organicWith(recoveries, pulsedOn)).toBe(organic);
  });
});

describe('one pulse is one payment: each compared payment, oldest first, takes the earliest pulse of its customer in its 30 days that no older one took', () => {
  it.each<[string, ReportedRecovery[], number[], number]>([
    [
      'two controls (days 0 and 5) and pulses on days 8 and 9: both are their payments',
      [control(0), control(5)],
      [8, 9],
      0,
    ],
    [
      'controls of days 0 and 10, pulses on days 12 and 35: the day-10 one takes the next pulse',
      [control(0), control(10)],
      [12, 35],
      0,
    ],
    [
      'two controls (days 0 and 5) and pulses on days 8, 9 and 20: the third is organic',
      [control(0), control(5)],
      [8, 9, 20],
      1,
    ],
  ])('%s (organic successes)', (_, recoveries, pulsedOn, organic) => {
    expect(organicWith(recoveries, pulsedOn)).toBe(organic);
  });

  it.each<[string, number[], ReportedRecovery[], number]>([
    ['two controls (days 0 and 5) and one pulse on day 8: one is collected', [8], [], 0.5],
    ['two controls (days 0 and 5) and pulses on days 8 and 9: both are collected', [8, 9], [], 1],
    [
      'a control of 10 days before the range took the day-8 pulse: neither in the range is collected',
      [8],
      [control(-10)],
      0,
    ],
    [
      'a control of 10 days before the range paid on day -3: the day-8 pulse is the day-0 control’s',
      [-3, 8],
      [control(-10)],
      0.5,
    ],
  ])('%s (control rate)', (_, pulsedOn, earlierRecoveries, controlRate) => {
    const summary = report({
      to: at(40),
      now: at(70),
      recoveries: [control(0), control(5)],
      earlierRecoveries,
      paidOnTheirOwn: new Map([[email, pulsedOn.map(at)]]),
    });
    expect(summary.proofMode).toMatchObject({ control: 2, controlRate });
  });
});

describe('a payment that failed in the 30 days before the range is watched into it: its own pulse there is not organic', () => {
  it.each<[string, ReportedRecovery[], number[], number]>([
    ['a control of day -10 paid on day 5: not organic', [control(-10)], [5], 0],
    ['a control of day -10 paid on days -4 and 5: the day-5 pulse is organic', [control(-10)], [-4, 5], 1],
    ['a control of day -10 paid on day 25, after its 30 days: organic', [control(-10)], [25], 1],
    ['a control of day -30 paid on day 0, the last of its 30 days: not organic', [control(-30)], [0], 0],
    [
      'a treated payment of day -10 Recoup recovered: its customer’s pulse is organic',
      [
        recovery({
          state: 'succeeded',
          inProofMode: true,
          customerEmail: email,
          createdAt: at(-10),
          recoveredAt: at(-9),
        }),
      ],
      [5],
      1,
    ],
    [
      'a treated payment of day -10 Recoup did not collect, paid on day 5: not organic',
      [recovery({ state: 'failed', inProofMode: true, customerEmail: email, createdAt: at(-10) })],
      [5],
      0,
    ],
    [
      'a holdout of day -10 from before the Proof Mode mark: organic',
      [control(-10, { inProofMode: undefined })],
      [5],
      1,
    ],
  ])('%s', (_, earlier, pulsedOn, organic) => {
    expect(organicWith([], pulsedOn, earlier)).toBe(organic);
  });

  it('an earlier control and its own payment in the range take no part in the failures, the rates or the groups', () => {
    const summary = report({
      earlierRecoveries: [control(-10)],
      pulses: 1,
      paidOnTheirOwn: new Map([[email, [at(5)]]]),
    });
    expect(summary).toMatchObject({
      failedPayments: 0,
      organicSuccesses: 0,
      organicSuccessRate: null,
      proofMode: null,
    });
  });
});

/**
 * A report over days 0–40 as of day 70 of these recoveries, with pulses that name the failure they pay
 * (`named`: [id, day]) and pulses of `email`'s customer that name none (`unnamedOn`: days); every pulse is
 * in the range unless its day says otherwise.
 */
function withNamed(
  recoveries: ReportedRecovery[],
  named: Array<[string, number]>,
  unnamedOn: number[] = [],
  earlierRecoveries: ReportedRecovery[] = [],
) {
  const days = [...named.map(([, d]) => d), ...unnamedOn];
  return report({
    to: at(40),
    now: at(70),
    recoveries,
    earlierRecoveries,
    pulses: days.filter((d) => d >= 0 && d < 40).length,
    namedPulses: named.map(([pays, d]) => ({ pays, at: at(d) })),
    paidOnTheirOwn: new Map([[email, unnamedOn.map(at)]]),
  });
}

describe('a pulse that names the failure it pays (paysTransactionId)', () => {
  const named = (id: string, failedOn: number, r: Partial<ReportedRecovery> = {}) =>
    control(failedOn, { _id: id, ...r });

  it('collects that failure alone, and is not organic', () => {
    // Another customer's email: the name decides, not the email.
    const summary = withNamed(
      [named('a', 0, { customerEmail: 'other@example.com' }), control(5)],
      [['a', 3]],
    );
    expect(summary).toMatchObject({ organicSuccesses: 0, proofMode: { control: 2, controlRate: 0.5 } });
  });

  it('a renewal the merchant says pays no failure (null) does not collect the customer’s unpaid control: it is organic', () => {
    // Named nothing, the day-20 renewal is taken as the day-0 control's payment (the rule for such pulses).
    expect(withNamed([named('a', 0)], [], [20])).toMatchObject({
      organicSuccesses: 0,
      proofMode: { controlRate: 1 },
    });
    // Said to pay none, it is among the range's pulses and nothing else.
    const summary = report({ to: at(40), now: at(70), recoveries: [named('a', 0)], pulses: 1 });
    expect(summary).toMatchObject({ organicSuccesses: 1, proofMode: { control: 1, controlRate: 0 } });
  });

  it.each<[string, ReportedRecovery[], Array<[string, number]>, number[], number, number]>([
    // [case, recoveries, named pulses, unnamed pulse days, organic successes, control rate]
    ['named after its failure’s 30 days: collects nothing', [named('a', 0)], [['a', 31]], [], 0, 0],
    ['named before its failure: collects nothing', [named('a', 10)], [['a', 5]], [], 0, 0],
    [
      'two pulses naming one failure: one payment collects it',
      [named('a', 0)],
      [
        ['a', 3],
        ['a', 4],
      ],
      [],
      0,
      1,
    ],
    [
      'an unnamed pulse goes to the customer’s other failure, not the named one',
      [named('a', 0), named('b', 5)],
      [['b', 8]],
      [9],
      0,
      1,
    ],
    [
      'an unnamed pulse left over once the named one collected its failure is organic',
      [named('a', 0)],
      [['a', 8]],
      [9],
      1,
      1,
    ],
    [
      'naming a failure outside Proof Mode: collects nothing and is not organic',
      [named('a', 0), recovery({ _id: 'x', state: 'failed', customerEmail: email })],
      [['x', 3]],
      [],
      0,
      0,
    ],
    [
      'naming a failure of before the 30 days before the range (not loaded): not organic',
      [named('a', 0)],
      [['long-ago', 3]],
      [],
      0,
      0,
    ],
  ])('%s', (_, recoveries, namedPulses, unnamedOn, organic, controlRate) => {
    expect(withNamed(recoveries, namedPulses, unnamedOn)).toMatchObject({
      organicSuccesses: organic,
      proofMode: { controlRate },
    });
  });

  it('naming a treated payment Recoup recovered: not organic, and it counts once', () => {
    const recovered = recovery({
      _id: 't',
      state: 'succeeded',
      inProofMode: true,
      customerEmail: email,
      recoveredAt: at(1),
    });
    expect(withNamed([recovered], [['t', 2]])).toMatchObject({
      organicSuccesses: 0,
      proofMode: { treatment: 1, treatmentRate: 1 },
    });
  });
});
