import { describe, expect, it } from 'vitest';
import { Rng } from '../bench/recovery/random.js';
import { localParts } from '../domain/local-time.js';
import { planNextAttempt, type AttemptFact, type PlanFacts, type PlanOption } from '../domain/plan.js';
import { contextLift, contextLiftAt, emptyStats, tallyOutcome } from '../domain/success-model.js';

// The planner scans every hour of a three-week window for each plan; the benchmark makes hundreds of
// thousands of plans, so the scan is memoised. These tests hold the memoised parts to their plain forms
// and the planner to its promises on random situations.

const hour = 3_600_000;
const day = 24 * hour;
const codes = ['insufficient_funds', 'do_not_honor', 'processing_error', 'call_issuer', 'some_new_code'];
const gateways = ['main', 'backup'];
const tokens = ['tok_a', 'tok_b', 'tok_c'];

/** Random facts of every shape the workflow can produce, learned statistics included. */
function randomFacts(rng: Rng): PlanFacts {
  const int = (n: number) => Math.floor(rng.next() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  const failedAt = Date.UTC(2026, 0, 1) + int(365 * 24) * hour + int(3_600) * 1_000;
  const now = failedAt + (rng.next() < 0.3 ? 0 : int(15 * day));
  const offsetMinutes = pick([-600, -360, -300, 0, 60, 330, 540, 825]);
  const options: PlanOption[] = [];
  for (const token of tokens.slice(0, 1 + int(3)))
    for (const gateway of gateways.slice(0, 1 + int(2)))
      options.push({
        gateway,
        token,
        role: token === 'tok_a' ? (gateway === 'main' ? 'primary' : 'backup_gateway') : 'fallback_token',
      });
  const attempts: AttemptFact[] = [{ at: failedAt, gateway: 'main', token: 'tok_a', code: pick(codes) }];
  for (let i = int(5); i > 0; i -= 1)
    attempts.push({
      at: failedAt + int(now - failedAt + 1),
      gateway: pick(gateways),
      token: pick(tokens),
      code: pick([...codes, null]),
    });
  const stats = emptyStats();
  for (let i = int(3) === 0 ? 0 : int(3_000); i > 0; i -= 1)
    tallyOutcome(stats, {
      fromCode: rng.next() < 0.2 ? 'fresh_token' : pick(codes),
      local: localParts(failedAt - int(90 * day), offsetMinutes),
      gateway: pick(gateways),
      approved: rng.next() < 0.25,
      depth: int(4) === 0 ? int(10) : 0,
      exposure: rng.next() < 0.5 ? 1 : rng.next(),
      ...(rng.next() < 0.3 ? { sameDay: 0.2 + rng.next() } : {}),
    });
  const notBefore: Record<string, number> = {};
  for (const token of tokens) {
    const r = rng.next();
    if (r < 0.15) notBefore[token] = now + int(10 * day);
    else if (r < 0.2) notBefore[token] = Number.POSITIVE_INFINITY;
    else if (r < 0.3) notBefore[token] = now - int(day);
  }
  return {
    now,
    failedAt,
    code: pick(codes),
    options: rng.next() < 0.05 ? [] : options,
    attempts,
    attemptsLeft: int(9),
    horizonEnd: failedAt + pick([1, 7, 21, 60]) * day,
    critical: rng.next() < 0.1,
    offsetMinutes,
    billingCycleDay: rng.next() < 0.5 ? null : 1 + int(31),
    riskSkipThreshold: pick([0, 50, 85, 95, 100]),
    notBefore,
    stats,
  };
}

describe('the memoised planner', () => {
  it('keeps its promises on 400 random situations: deterministic, within the rules, the window and the budget', () => {
    const rng = new Rng(2026);
    for (let i = 0; i < 400; i += 1) {
      const facts = randomFacts(rng);
      const plan = planNextAttempt(facts);
      expect(planNextAttempt(structuredClone(facts)), `case ${i}`).toEqual(plan);
      if (plan.kind === 'stop') continue;
      expect(plan.at, `case ${i}`).toBeGreaterThanOrEqual(facts.now);
      expect(plan.at, `case ${i}`).toBeLessThanOrEqual(facts.horizonEnd);
      expect(plan.options.length, `case ${i}`).toBeLessThanOrEqual(facts.attemptsLeft);
      for (const o of plan.options)
        expect(facts.notBefore[o.token] ?? 0, `case ${i}`).toBeLessThanOrEqual(plan.at);
      const order = plan.options.map((o) => facts.options.indexOf(o));
      expect(order, `case ${i}`).toEqual([...order].sort((a, b) => a - b));
      expect(Math.min(...order), `case ${i}`).toBeGreaterThanOrEqual(0);
    }
  });

  it('reads the local calendar exactly as the Date object does', () => {
    const rng = new Rng(11);
    for (let i = 0; i < 20_000; i += 1) {
      const t = Math.floor((rng.next() - 0.3) * 4e12);
      const offset = Math.floor(rng.next() * 1_680) - 720;
      const d = new Date(t + offset * 60_000);
      expect(localParts(t, offset)).toEqual({
        hour: d.getUTCHours(),
        dayOfMonth: d.getUTCDate(),
        weekday: (d.getUTCDay() + 6) % 7,
        daysInMonth: new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate(),
      });
    }
  });

  it('computes context lifts bit for bit as contextLift does', () => {
    const rng = new Rng(7);
    for (let i = 0; i < 50; i += 1) {
      const facts = randomFacts(rng);
      const code = codes[i % codes.length]!;
      const lift = contextLiftAt(facts.stats, code, 'backup', facts.billingCycleDay);
      for (let t = facts.now; t < facts.now + 30 * day; t += 5 * hour) {
        const local = localParts(t, facts.offsetMinutes);
        expect(lift(local)).toBe(contextLift(facts.stats, code, local, 'backup', facts.billingCycleDay));
      }
    }
  });
});
