import { describe, expect, it } from 'vitest';
import { localParts } from '../domain/local-time.js';
import { planNextAttempt, type PlanFacts } from '../domain/plan.js';
import {
  depthFactor,
  emptyStats,
  fatiguePrior,
  optimisticRouteLift,
  outcomeCounts,
  tallyOutcome,
} from '../domain/success-model.js';

const day = 86_400_000;
const now = Date.parse('2026-03-10T10:00:00Z');
const local = localParts(now, 0);

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
      'byWeekday',
    ]);
    expect(counts.every(([, , n, s]) => n === 0.5 && s === 1)).toBe(true);
    expect(counts.find(([table]) => table === 'byDepth')?.[1]).toBe('issuer|0');
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
  const facts = (attemptsLeft: number): PlanFacts => ({
    now,
    failedAt: now,
    code: 'do_not_honor',
    options: [{ gateway: 'main', token: 'tok_a', role: 'primary' }],
    attempts: [{ at: now, gateway: 'main', token: 'tok_a', code: 'do_not_honor' }],
    attemptsLeft,
    horizonEnd: now + 21 * day,
    critical: false,
    offsetMinutes: 0,
    billingCycleDay: null,
    riskSkipThreshold: 80,
    notBefore: {},
    stats: emptyStats(),
  });

  it('retries when one attempt is unlikely to work but the remaining budget is not', () => {
    expect(planNextAttempt(facts(8)).kind).toBe('attempt');
  });

  it('skips when the last attempt left is unlikely to work', () => {
    expect(planNextAttempt(facts(1))).toMatchObject({ kind: 'stop', reason: 'high_risk' });
  });
});
