import { describe, expect, it } from 'vitest';
import { localParts, type LocalParts } from '../domain/local-time.js';
import { planNextAttempt } from '../domain/plan.js';
import {
  contextLift,
  depthFactor,
  emptyStats,
  fatiguePrior,
  learnedEvidence,
  optimisticRouteLift,
  outcomeCounts,
  paydayPrior,
  sameDayFactor,
  tallyOutcome,
  type OutcomeStats,
  type Tally,
} from '../domain/success-model.js';
import { planFacts, primaryOption } from './support/plan-facts.js';

const day = 86_400_000;
const now = Date.parse('2026-03-10T10:00:00Z');
const local = localParts(now, 0);

/** `count` first retries of a do_not_honor decline through the main gateway at `at`, the i-th approved if `approved(i)`. */
function firstRetries(stats: OutcomeStats, count: number, at: LocalParts, approved: (i: number) => boolean) {
  for (let i = 0; i < count; i += 1)
    tallyOutcome(stats, {
      fromCode: 'do_not_honor',
      local: at,
      gateway: 'main',
      approved: approved(i),
      depth: 0,
    });
}

describe('what one attempt teaches the engine', () => {
  it('a first retry counts, for its exposure, towards the code, the time lifts, the gateway and depth 0', () => {
    const counts = outcomeCounts({
      fromCode: 'do_not_honor',
      local,
      gateway: 'main',
      approved: true,
      depth: 0,
      exposure: 0.5,
    });
    expect(counts.map(([table]) => table).sort()).toEqual([
      'byCode',
      'byDay',
      'byDepth',
      'byGateway',
      'byHour',
      'byRepeat',
      'byWeekday',
    ]);
    expect(counts.every(([, , n, s]) => n === 0.5 && s === 1)).toBe(true);
    expect(counts.find(([table]) => table === 'byDepth')?.[1]).toBe('issuer|0');
    expect(counts.find(([table]) => table === 'byRepeat')?.[1]).toBe('issuer|later');
  });

  it("a first retry within 24 h of the card's last charge counts as soon, for its decay alone", () => {
    const counts = outcomeCounts({
      fromCode: 'processing_error',
      local,
      gateway: 'main',
      approved: false,
      depth: 0,
      exposure: 0.4,
      sameDay: 0.5,
    });
    expect(counts.find(([table]) => table === 'byRepeat')).toEqual(['byRepeat', 'technical|soon', 0.8, 0]);
    expect(counts.find(([table]) => table === 'byCode')).toEqual(['byCode', 'processing_error', 0.4, 0]);
  });

  it("a fresh card's first charge teaches nothing about repeating a charge", () => {
    const counts = outcomeCounts({
      fromCode: 'fresh_token',
      local,
      gateway: 'main',
      approved: true,
      depth: 0,
    });
    expect(counts.map(([table]) => table)).not.toContain('byRepeat');
  });

  it('a deeper retry only teaches how much each retry loses', () => {
    const counts = outcomeCounts({
      fromCode: 'insufficient_funds',
      local,
      gateway: 'main',
      approved: false,
      depth: 3,
    });
    expect(counts).toEqual([['byDepth', 'funds|3', 1, 0]]);
  });

  it('a row of an older log (no depth, no exposure) counts as a first retry of weight 1', () => {
    const stats = emptyStats();
    tallyOutcome(stats, { fromCode: 'do_not_honor', local, gateway: 'main', approved: false });
    expect(stats.byCode.do_not_honor).toEqual({ n: 1, s: 0 });
  });
});

describe('how success falls with each retry of a card', () => {
  it('starts from the fatigue prior', () => {
    expect(depthFactor(emptyStats(), 'do_not_honor', 0)).toBe(1);
    expect(depthFactor(emptyStats(), 'do_not_honor', 2)).toBeCloseTo(fatiguePrior ** 2, 10);
  });

  it('learns a steeper fall when recoverable cards are recovered early', () => {
    const stats = emptyStats();
    for (let i = 0; i < 1_000; i += 1) {
      tallyOutcome(stats, {
        fromCode: 'do_not_honor',
        local,
        gateway: 'main',
        approved: i % 5 === 0,
        depth: 0,
      });
      tallyOutcome(stats, {
        fromCode: 'do_not_honor',
        local,
        gateway: 'main',
        approved: i % 25 === 0,
        depth: 2,
      });
    }
    expect(depthFactor(stats, 'do_not_honor', 2)).toBeCloseTo(0.2, 1);
    expect(depthFactor(stats, 'generic_decline', 2)).toBeCloseTo(0.2, 1); // the issuer family pools
    expect(depthFactor(stats, 'insufficient_funds', 2)).toBeCloseTo(fatiguePrior ** 2, 10);
  });
});

describe('how much a retry within 24 h of the last charge loses', () => {
  /** A technical failure's first retries: `soon` ones at once, the rest a day later. */
  const retried = (o: { soon: number; soonEvery: number; later: number; laterEvery: number }) => {
    const stats = emptyStats();
    for (let i = 0; i < o.soon; i += 1)
      tallyOutcome(stats, {
        fromCode: 'processing_error',
        local,
        gateway: 'main',
        approved: i % o.soonEvery === 0,
        depth: 0,
        exposure: sameDayFactor(stats, 'processing_error', 0),
        sameDay: sameDayFactor(stats, 'processing_error', 0),
      });
    for (let i = 0; i < o.later; i += 1)
      tallyOutcome(stats, {
        fromCode: 'processing_error',
        local,
        gateway: 'main',
        approved: i % o.laterEvery === 0,
        depth: 0,
      });
    return stats;
  };

  it('starts from the priors: an issuer rarely changes its mind the same day, a technical failure may clear', () => {
    expect(sameDayFactor(emptyStats(), 'do_not_honor', 0)).toBe(0.5);
    expect(sameDayFactor(emptyStats(), 'insufficient_funds', 0)).toBe(0.5);
    expect(sameDayFactor(emptyStats(), 'processing_error', 0)).toBe(1);
    expect(sameDayFactor(emptyStats(), 'processing_error', 1)).toBe(0.5);
  });

  it('learns that retrying a technical failure at once works less often than the prior says', () => {
    // Half the prior rate at once, nothing yet later: the later rate stays at its prior.
    expect(
      sameDayFactor(retried({ soon: 400, soonEvery: 4, later: 0, laterEvery: 1 }), 'processing_error', 0),
    ).toBeCloseTo(0.5, 1);
  });

  it('learns the ratio of soon to later once both are seen', () => {
    const stats = retried({ soon: 400, soonEvery: 4, later: 400, laterEvery: 3 });
    expect(sameDayFactor(stats, 'processing_error', 0)).toBeCloseTo(0.75, 1);
    expect(sameDayFactor(stats, 'try_again_later', 0)).toBeCloseTo(0.75, 1); // the technical family pools
    expect(sameDayFactor(stats, 'do_not_honor', 0)).toBe(0.5);
  });

  it('stays near 1 where technical failures clear at once as often as later', () => {
    const stats = retried({ soon: 400, soonEvery: 2, later: 400, laterEvery: 2 });
    expect(sameDayFactor(stats, 'processing_error', 0)).toBeCloseTo(1, 1);
  });

  it('sends a technical failure through every gateway at once only while that is what works', () => {
    const facts = (stats: OutcomeStats) =>
      planFacts(now, 'processing_error', {
        options: [primaryOption, { gateway: 'backup', token: 'tok_a', role: 'backup_gateway' }],
        stats,
      });
    expect(planNextAttempt(facts(emptyStats()))).toMatchObject({ kind: 'attempt', at: now });
    expect((planNextAttempt(facts(emptyStats())) as { options: unknown[] }).options).toHaveLength(2);
    const learned = planNextAttempt(facts(retried({ soon: 400, soonEvery: 5, later: 400, laterEvery: 2 })));
    expect(learned.kind).toBe('attempt');
    if (learned.kind !== 'attempt') return;
    expect(learned.at).toBeGreaterThanOrEqual(now + day);
    expect(learned.options).toHaveLength(1);
  });
});

describe('the hour of day', () => {
  it('moves linearly between the middles of the 3-hour buckets it is learned in', () => {
    const stats = emptyStats();
    // Issuer first retries succeed twice as often from 06:00 to 09:00 as at other hours.
    for (let h = 0; h < 24; h += 1)
      firstRetries(stats, 300, { ...local, hour: h }, (i) => i % (h >= 6 && h < 9 ? 3 : 6) === 0);
    const at = (hour: number) => contextLift(stats, 'do_not_honor', { ...local, hour }, 'main', null);
    expect(at(7)).toBeGreaterThan(1.5 * at(4));
    expect(at(6)).toBeCloseTo(at(4) + (2 / 3) * (at(7) - at(4)), 10);
    expect(at(8)).toBeCloseTo(at(7) + (1 / 3) * (at(10) - at(7)), 10);
    // The best hour is the middle of the good bucket, not its first hour.
    const [best] = [5, 6, 7, 8, 9].sort((a, b) => at(b) - at(a));
    expect(best).toBe(7);
  });
});

describe('how much one hour or weekday bucket of its own is worth', () => {
  /** First retries of do_not_honor at 10:00 local, `n` per weekday, succeeding at each weekday's rate. */
  const weekly = (n: number, rates: number[]) => {
    const stats = emptyStats();
    rates.forEach((rate, weekday) =>
      firstRetries(stats, n, { ...local, weekday, hour: 10 }, (i) => i < Math.round(rate * n)),
    );
    return stats;
  };
  const weekdayLift = (stats: OutcomeStats, weekday: number) =>
    contextLift(stats, 'do_not_honor', { ...local, weekday, hour: 10 }, 'main', null);

  it('starts at 50 observations until the table has a success and a failure', () => {
    expect(learnedEvidence(emptyStats().byWeekday, 'issuer', () => 1)).toBe(50);
    expect(learnedEvidence(weekly(40, [0, 0, 0, 0, 0, 0, 0]).byWeekday, 'issuer', () => 1)).toBe(50);
  });

  it('holds to the prior where the buckets differ no more than sampling explains', () => {
    // Friday's 30 % in 60 retries against 20 % on the other days is within two standard errors.
    const stats = weekly(60, [0.2, 0.2, 0.2, 0.2, 0.3, 0.2, 0.2]);
    expect(learnedEvidence(stats.byWeekday, 'issuer', () => 1)).toBe(1000);
    // With a fixed 50 observations the lucky Friday would look 27 % better than Thursday.
    expect(weekdayLift(stats, 4) / weekdayLift(stats, 3)).toBeLessThan(1.05);
  });

  it('lets the buckets speak where they differ far more than sampling explains', () => {
    // 10 % and 30 % on alternate days, 1,000 retries each: true lifts of 0.54 and 1.62 around 18.6 %.
    const stats = weekly(1000, [0.1, 0.3, 0.1, 0.3, 0.1, 0.3, 0.1]);
    const evidence = learnedEvidence(stats.byWeekday, 'issuer', () => 1);
    expect(evidence).toBeGreaterThanOrEqual(10);
    expect(evidence).toBeLessThan(20);
    expect(weekdayLift(stats, 1) / weekdayLift(stats, 0)).toBeGreaterThan(2.9);
  });

  it('gives the same bits whatever order the database returns the buckets in', () => {
    // Exposure-weighted counts, whose float sums depend on the order they are added in.
    const table: Record<string, Tally> = {};
    for (let w = 0; w < 7; w += 1)
      table[`issuer|${w}`] = { n: 400 + ((w * 1.11) % 1) * 13.1 + 0.1 * w, s: 80 + (w % 2) * 20 };
    const shuffled = Object.fromEntries(
      [5, 2, 6, 0, 3, 1, 4].map((w) => [`issuer|${w}`, table[`issuer|${w}`]!]),
    );
    expect(learnedEvidence(shuffled, 'issuer', () => 1)).toBe(learnedEvidence(table, 'issuer', () => 1));
  });

  it('learns the hour table the same way, around its prior', () => {
    const stats = emptyStats();
    // 18 % at every hour but one lucky bucket (12:00–15:00: 24 % in 50 retries), against a flat-ish prior.
    for (let b = 0; b < 8; b += 1)
      firstRetries(stats, 50, { ...local, hour: 3 * b + 1 }, (i) => i < (b === 4 ? 12 : 9));
    const at = (hour: number) => contextLift(stats, 'do_not_honor', { ...local, hour }, 'main', null);
    // The prior alone puts 13:00 at 1.05 over 07:00's 1.0: the lucky bucket adds little to that.
    expect(at(13) / at(7)).toBeLessThan(1.08);
  });
});

describe('the payday prior', () => {
  const on = (iso: string) => localParts(Date.parse(iso), 0);

  it("lifts the merchant's billingCycleDay by a tenth, for every decline family", () => {
    const tuesday10th = on('2026-03-10T14:00:00Z');
    expect(paydayPrior('issuer', tuesday10th, 10)).toBeCloseTo(1.1, 10);
    expect(paydayPrior('issuer', tuesday10th, 11)).toBe(1);
  });

  it.each([
    [31, '2026-02-28T14:00:00Z', 1.1, 'the last day of February stands for the 31st'],
    [29, '2026-02-28T14:00:00Z', 1.1, 'and for the 29th in a common year'],
    [30, '2026-04-30T14:00:00Z', 1.1, 'a month that has the day bills on it'],
    [31, '2026-04-30T14:00:00Z', 1.1, 'April 30th stands for the 31st'],
    [31, '2026-04-29T14:00:00Z', 1, 'not the day before it'],
    [30, '2026-03-31T14:00:00Z', 1, 'a longer month bills on the day itself, not its last'],
    [29, '2028-02-29T14:00:00Z', 1.1, 'a leap year’s 29 February is the 29th'],
    [30, '2028-02-28T14:00:00Z', 1, 'nor is 28 February the 30th in a leap year'],
  ])('billingCycleDay %i on %s lifts ×%d: %s', (billingDay, iso, lift) => {
    expect(paydayPrior('issuer', on(iso), billingDay)).toBeCloseTo(lift, 10);
  });

  it('gives a month without the billing day none in a recovery begun before the last day billed for it', () => {
    expect(paydayPrior('issuer', on('2026-02-28T14:00:00Z'), 31, false)).toBe(1);
    expect(paydayPrior('issuer', on('2026-03-31T14:00:00Z'), 31, false)).toBeCloseTo(1.1, 10);
  });

  it.each([
    ['2026-01-30T14:00:00Z', 'Friday 30 January, the last business day of the month'],
    ['2026-01-31T14:00:00Z', 'Saturday 31 January, the day after it'],
    ['2026-02-27T14:00:00Z', 'Friday 27 February, the last business day (the 28th is a Saturday)'],
  ])('lifts insufficient funds on %s: %s', (iso) => {
    expect(paydayPrior('funds', on(iso), null)).toBeCloseTo(1.5, 10);
  });
});

describe('which gateway a card goes through', () => {
  const tallied = (gateway: string, n: number, successEvery: number) => {
    const stats = emptyStats();
    for (let i = 0; i < n; i += 1)
      tallyOutcome(stats, { fromCode: 'do_not_honor', local, gateway, approved: i % successEvery === 0 });
    return stats;
  };

  it('gives a gateway the account has no evidence on the benefit of the doubt', () => {
    const stats = tallied('main', 400, 5);
    expect(optimisticRouteLift(stats, 'do_not_honor', 'backup')).toBeGreaterThan(
      optimisticRouteLift(stats, 'do_not_honor', 'main'),
    );
  });

  it('lets the doubt shrink as evidence grows', () => {
    const few = optimisticRouteLift(tallied('main', 20, 5), 'do_not_honor', 'main');
    const many = optimisticRouteLift(tallied('main', 2000, 5), 'do_not_honor', 'main');
    expect(many).toBeLessThan(few);
    expect(many).toBeCloseTo(1.05, 1);
  });
});

describe('the risk a merchant sets is the risk of losing the payment', () => {
  const facts = (attemptsLeft: number) =>
    planFacts(now, 'do_not_honor', { attemptsLeft, riskSkipThreshold: 80 });

  it('retries when one attempt is unlikely to work but the remaining budget is not', () => {
    expect(planNextAttempt(facts(8)).kind).toBe('attempt');
  });

  it('skips when the last attempt left is unlikely to work', () => {
    expect(planNextAttempt(facts(1))).toMatchObject({ kind: 'stop', reason: 'high_risk' });
  });
});
