import { describe, expect, it } from 'vitest';
import { localParts } from '../domain/local-time.js';
import { planNextAttempt, type PlanFacts, type PlanOption } from '../domain/plan.js';
import { planFacts, primaryOption as primary } from './support/plan-facts.js';
import { emptyStats, tallyOutcome } from '../domain/success-model.js';

const hour = 3_600_000;
const day = 24 * hour;
const at = (iso: string) => Date.parse(iso);

/** Facts for a card that failed at `now` (the merchant's own attempt) and has not been retried yet. */
const facts = (now: number, overrides: Partial<PlanFacts> = {}) =>
  planFacts(now, 'insufficient_funds', overrides);

describe('planNextAttempt', () => {
  it.each([
    ['the retry budget is spent', { attemptsLeft: 0 }, 'budget'],
    ['no option is left', { options: [] }, 'no_options'],
    [
      'the card networks allow nothing before the window closes',
      { notBefore: { tok_a: Number.POSITIVE_INFINITY } },
      'horizon',
    ],
    [
      'success is predicted too unlikely',
      { code: 'some_unknown_code', riskSkipThreshold: 50, attemptsLeft: 1 },
      'high_risk',
    ],
  ])('stops when %s', (_why, overrides, reason) => {
    const plan = planNextAttempt(facts(at('2026-03-10T10:00:00Z'), overrides));
    expect(plan).toMatchObject({ kind: 'stop', reason });
  });

  it('stops when the risk of losing the payment is exactly riskSkipThreshold (100, certain loss)', () => {
    const now = at('2026-03-10T10:00:00Z');
    // Five years of decay leave the card a chance no double tells from 0: the risk is exactly 100.
    const lost = facts(now, { failedAt: now - 5 * 365 * day, riskSkipThreshold: 100 });
    expect(planNextAttempt(lost)).toMatchObject({ kind: 'stop', reason: 'high_risk' });
  });

  it('waits for the payday window for insufficient funds (the 12th → the 15th, customer daytime)', () => {
    const plan = planNextAttempt(facts(at('2026-03-12T10:00:00Z')));
    expect(plan.kind).toBe('attempt');
    if (plan.kind !== 'attempt') return;
    const local = localParts(plan.at, 0);
    expect(local.dayOfMonth).toBe(15);
    expect(local.hour).toBeGreaterThanOrEqual(6);
    expect(local.hour).toBeLessThan(21);
  });

  it('times the attempt on the customer’s clock, not the server’s (India, UTC+5:30)', () => {
    const plan = planNextAttempt(facts(at('2026-03-12T10:00:00Z'), { offsetMinutes: 330 }));
    if (plan.kind !== 'attempt') throw new Error('expected an attempt');
    const local = localParts(plan.at, 330);
    expect(local.hour).toBeGreaterThanOrEqual(6);
    expect(local.hour).toBeLessThan(21);
  });

  it('keeps to the customer’s hour across a daylight saving change: an hour earlier in UTC after clocks go forward', () => {
    // New York fails late on 6 March (EST, UTC−5); its retry waits until the morning of 8 March, after the
    // clocks went forward (EDT, UTC−4).
    const now = at('2026-03-07T03:00:00Z');
    const spring = [{ at: at('2026-03-08T07:00:00Z'), offsetMinutes: -240 }];
    const fixed = planNextAttempt(facts(now, { offsetMinutes: -300 }));
    const changing = planNextAttempt(facts(now, { offsetMinutes: -300, offsetChanges: spring }));
    if (fixed.kind !== 'attempt' || changing.kind !== 'attempt') throw new Error('expected attempts');
    expect(fixed.at).toBeGreaterThan(spring[0]!.at);
    expect(changing.at).toBe(fixed.at - hour);
    // The same local hour and day: what the clock at intake would have called it, the new clock calls it.
    expect(localParts(changing.at, -240)).toEqual(localParts(fixed.at, -300));
  });

  it('retries a technical failure at once', () => {
    const plan = planNextAttempt(facts(at('2026-03-12T02:00:00Z'), { code: 'try_again_later' }));
    expect(plan).toMatchObject({ kind: 'attempt', at: at('2026-03-12T02:00:00Z') });
  });

  it('waits a day when a technical failure fails its first retry too: the issuer has answered', () => {
    const now = at('2026-03-12T02:00:00Z');
    const attempts = [
      { at: now - 5 * 60_000, gateway: 'main', token: 'tok_a', code: 'try_again_later' },
      { at: now - 60_000, gateway: 'main', token: 'tok_a', code: 'try_again_later' },
    ];
    const plan = planNextAttempt(
      facts(now, { failedAt: now - 5 * 60_000, code: 'try_again_later', attempts }),
    );
    if (plan.kind !== 'attempt') throw new Error('expected an attempt');
    expect(plan.at).toBeGreaterThanOrEqual(now - 60_000 + day);
  });

  it('attempts a trial conversion at once, whatever the decline', () => {
    const now = at('2026-03-12T02:00:00Z');
    expect(planNextAttempt(facts(now, { critical: true }))).toMatchObject({ kind: 'attempt', at: now });
  });

  it('tries a fresh fallback card at once while the just-declined primary waits for its better time', () => {
    const now = at('2026-03-12T10:00:00Z');
    const fallback: PlanOption = { gateway: 'main', token: 'tok_b', role: 'fallback_token' };
    const plan = planNextAttempt(facts(now, { code: 'do_not_honor', options: [primary, fallback] }));
    expect(plan).toMatchObject({ kind: 'attempt', at: now, options: [fallback] });
  });

  it('never plans before the card networks allow', () => {
    const now = at('2026-03-12T10:00:00Z');
    const notBefore = now + 3 * day + 5 * hour;
    const plan = planNextAttempt(facts(now, { code: 'do_not_honor', notBefore: { tok_a: notBefore } }));
    if (plan.kind !== 'attempt') throw new Error('expected an attempt');
    expect(plan.at).toBeGreaterThanOrEqual(notBefore);
  });

  it('never plans before the card networks allow, even when they allow it within the hour', () => {
    const now = at('2026-03-12T10:00:00Z');
    const notBefore = now + 30 * 60_000;
    const plan = planNextAttempt(facts(now, { code: 'try_again_later', notBefore: { tok_a: notBefore } }));
    if (plan.kind !== 'attempt') throw new Error('expected an attempt');
    expect(plan.at).toBeGreaterThanOrEqual(notBefore);
  });

  it('spends at most the remaining budget in one slot', () => {
    const now = at('2026-03-12T10:00:00Z');
    const options: PlanOption[] = [
      primary,
      { gateway: 'backup', token: 'tok_a', role: 'backup_gateway' },
      { gateway: 'main', token: 'tok_b', role: 'fallback_token' },
    ];
    const plan = planNextAttempt(facts(now, { code: 'try_again_later', options, attemptsLeft: 2 }));
    expect(plan).toMatchObject({ kind: 'attempt', options: options.slice(0, 2) });
  });

  it('sends an issuer decline through one gateway per slot, the one with the better record', () => {
    const now = at('2026-03-12T10:00:00Z');
    const backup: PlanOption = { gateway: 'backup', token: 'tok_a', role: 'backup_gateway' };
    const stats = emptyStats();
    for (let i = 0; i < 300; i += 1)
      for (const gateway of ['main', 'backup'])
        tallyOutcome(stats, {
          fromCode: 'do_not_honor',
          local: localParts(at('2026-02-02T14:00:00Z') + (i % 20) * day, 0),
          gateway,
          approved: i % (gateway === 'backup' ? 3 : 8) === 0,
        });
    const learned = planNextAttempt(facts(now, { code: 'do_not_honor', options: [primary, backup], stats }));
    expect(learned).toMatchObject({ kind: 'attempt', options: [backup] });
    const unknown = planNextAttempt(facts(now, { code: 'do_not_honor', options: [primary, backup] }));
    expect(unknown).toMatchObject({ kind: 'attempt', options: [primary] });
  });

  it('tries a gateway the account has little evidence on before settling on the one it knows', () => {
    const now = at('2026-03-12T10:00:00Z');
    const backup: PlanOption = { gateway: 'backup', token: 'tok_a', role: 'backup_gateway' };
    const stats = emptyStats();
    for (let i = 0; i < 400; i += 1)
      tallyOutcome(stats, {
        fromCode: 'do_not_honor',
        local: localParts(at('2026-02-02T14:00:00Z') + (i % 20) * day, 0),
        gateway: 'main',
        approved: i % 5 === 0,
      });
    const plan = planNextAttempt(facts(now, { code: 'do_not_honor', options: [primary, backup], stats }));
    expect(plan).toMatchObject({ kind: 'attempt', options: [backup] });
  });

  it('waits a day before asking the issuer again through another gateway', () => {
    const now = at('2026-03-12T10:00:00Z');
    const backup: PlanOption = { gateway: 'backup', token: 'tok_a', role: 'backup_gateway' };
    const attempts = [
      { at: now - 2 * day, gateway: 'main', token: 'tok_a', code: 'do_not_honor' },
      { at: now - 5 * 60_000, gateway: 'main', token: 'tok_a', code: 'do_not_honor' },
    ];
    const plan = planNextAttempt(
      facts(now, { failedAt: now - 2 * day, code: 'do_not_honor', options: [backup], attempts }),
    );
    if (plan.kind !== 'attempt') throw new Error('expected an attempt');
    expect(plan.at).toBeGreaterThanOrEqual(now - 5 * 60_000 + day);
  });

  it('waits for a better weekday with its last retry, but not while later retries would wait behind it', () => {
    const monday = at('2026-03-09T14:00:00Z');
    const stats = emptyStats();
    for (let i = 0; i < 3000; i += 1) {
      const local = localParts(at('2026-01-05T14:00:00Z') + (i % 56) * day, 0);
      const rate = local.weekday === 3 ? 30 : 20; // Thursdays recover half as often again
      tallyOutcome(stats, { fromCode: 'do_not_honor', local, gateway: 'main', approved: i % 100 < rate });
    }
    const plan = (attemptsLeft: number) =>
      planNextAttempt(
        facts(monday, {
          failedAt: monday - 2 * day,
          code: 'do_not_honor',
          attempts: [{ at: monday - 2 * day, gateway: 'main', token: 'tok_a', code: 'do_not_honor' }],
          attemptsLeft,
          riskSkipThreshold: 100,
          stats,
        }),
      );
    const last = plan(1);
    const many = plan(8);
    if (last.kind !== 'attempt' || many.kind !== 'attempt') throw new Error('expected attempts');
    expect(localParts(last.at, 0).weekday).toBe(3);
    expect(many.at - monday).toBeLessThan(day);
  });

  it.each(['constructor', '__proto__'])(
    'plans a code named like an Object member (%s) as any unknown code: a conservative attempt',
    (code) => {
      const now = at('2026-03-12T10:00:00Z');
      const plan = planNextAttempt(facts(now, { code }));
      const unknown = planNextAttempt(facts(now, { code: 'some_unknown_code' }));
      expect(plan.kind === 'attempt' && unknown.kind === 'attempt').toBe(true);
      // The same times and chances; only the reasoning names the code.
      const { reasoning, ...predicted } = plan.prediction;
      expect({ ...plan, prediction: predicted }).toEqual({
        ...unknown,
        prediction: {
          ...predicted,
          score: unknown.prediction.score,
          confidence: unknown.prediction.confidence,
        },
      });
      expect(reasoning).toBe(unknown.prediction.reasoning.replace('some_unknown_code', code));
    },
  );

  it('learns such a code as its own, leaving Object untouched', () => {
    const stats = emptyStats();
    const local = localParts(at('2026-03-12T10:00:00Z'), 0);
    for (const fromCode of ['constructor', '__proto__'])
      tallyOutcome(stats, { fromCode, local, gateway: 'main', approved: true });
    expect(Object.keys(stats.byCode)).toEqual(['constructor', '__proto__']);
    expect(stats.byCode['__proto__']).toEqual({ n: 1, s: 1 });
    expect(Object.getPrototypeOf(stats.byCode)).toBe(Object.prototype);
    expect([({} as { n?: unknown }).n, (Object as { n?: unknown }).n]).toEqual([undefined, undefined]);
  });

  it('is deterministic: the same facts give the same plan', () => {
    const f = facts(at('2026-05-20T13:17:00Z'), { code: 'do_not_honor', offsetMinutes: -300 });
    expect(planNextAttempt(f)).toEqual(planNextAttempt(structuredClone(f)));
  });

  it('learns from the account’s outcomes: a strong evening record moves do_not_honor retries to the evening', () => {
    const now = at('2026-03-10T00:00:00Z');
    const stats = emptyStats();
    for (let i = 0; i < 400; i += 1) {
      const evening = localParts(at('2026-02-02T19:00:00Z') + (i % 20) * day, 0);
      const morning = localParts(at('2026-02-02T10:00:00Z') + (i % 20) * day, 0);
      tallyOutcome(stats, {
        fromCode: 'do_not_honor',
        local: evening,
        gateway: 'main',
        approved: i % 2 === 0,
      });
      tallyOutcome(stats, {
        fromCode: 'do_not_honor',
        local: morning,
        gateway: 'main',
        approved: i % 10 === 0,
      });
    }
    const learned = planNextAttempt(facts(now, { code: 'do_not_honor', stats }));
    const prior = planNextAttempt(facts(now, { code: 'do_not_honor' }));
    if (learned.kind !== 'attempt' || prior.kind !== 'attempt') throw new Error('expected attempts');
    expect(Math.floor(localParts(learned.at, 0).hour / 3)).toBe(6);
    expect(Math.floor(localParts(prior.at, 0).hour / 3)).not.toBe(6);
    expect(learned.prediction.dataSource).toBe('blended');
    expect(prior.prediction.dataSource).toBe('static');
    expect(learned.prediction.confidence).toBeGreaterThan(prior.prediction.confidence);
  });

  it('explains its plan in one sentence with a score in percent', () => {
    const plan = planNextAttempt(facts(at('2026-03-12T10:00:00Z')));
    expect(plan.prediction.reasoning).toMatch(
      /^A insufficient_funds decline is best retried .+ predicted success from static priors\.$/,
    );
    expect(plan.prediction.score).toBeGreaterThan(0);
    expect(plan.prediction.score).toBeLessThanOrEqual(100);
  });
});
