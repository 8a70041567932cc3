import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { classifyDecline } from '../domain/declines.js';
import { WorldModel, type CardTruth } from '../bench/recovery/outcome-model.js';
import { maxAttempts, PaymentRun, tokensOf } from '../bench/recovery/payment-run.js';
import { drawPayment, drawPayments } from '../bench/recovery/payments.js';
import { runBenchmark, simulate, strategyNames, summarise } from '../bench/recovery/run.js';
import { fixedSchedules, fixedVariants, runFixed } from '../bench/recovery/strategies/fixed.js';
import { runOracle } from '../bench/recovery/strategies/oracle.js';
import { loadWorld, parseWorld, WorldError } from '../bench/recovery/world.js';

// The recovery benchmark (bench/recovery): its world files, its determinism and the rules every strategy
// is held to. Small runs only; the figures themselves are in docs/benchmarks.md.

const worlds = ['default', 'friday-paydays', 'europe-sca'].map((name) => `bench/worlds/${name}.json`);
const base = JSON.parse(readFileSync('bench/worlds/default.json', 'utf8')) as Record<string, unknown>;
const day = 86_400_000;

/** The error a broken copy of the default world gets. */
function problemsWith(patch: Record<string, unknown>): string {
  try {
    parseWorld({ ...base, ...patch }, 'broken.json');
  } catch (error) {
    if (error instanceof WorldError) return error.message;
    throw error;
  }
  throw new Error('expected the world to be refused');
}

describe('world files', () => {
  it.each(worlds)('%s is a valid world', (file) => {
    expect(loadWorld(file).merchants.length).toBeGreaterThan(0);
  });

  it.each([
    [{ hourOfDay: [1, 1, 1] }, 'hourOfDay: needs 24 multipliers, hour 0 first'],
    [{ dayOfWeek: 'flat' }, 'dayOfWeek:'],
    [{ start: 'next monday' }, 'start:'],
    [
      {
        merchants: [
          {
            id: 'm',
            weight: 1,
            timezone: 'Mars/Olympus',
            currency: 'USD',
            amountMedian: 999,
            amountSpread: 0.3,
          },
        ],
      },
      'merchants.0.timezone: must be an IANA time zone',
    ],
    [
      {
        merchants: [
          { id: 'm', weight: 1, timezone: 'UTC', currency: 'XYZ', amountMedian: 999, amountSpread: 0.3 },
        ],
      },
      'merchants.0.currency: must be an ISO 4217 currency code',
    ],
    [
      {
        declines: { do_not_honor: { weight: 1, recoverable: 0.5, baseSuccess: 0.2, nextCode: { nope: 1 } } },
      },
      'declines.do_not_honor.nextCode: unknown decline code "nope"',
    ],
    [
      { declines: { do_not_honor: { weight: 1, recoverable: 1.5, baseSuccess: 0.2 } } },
      'declines.do_not_honor.recoverable:',
    ],
    [
      { paydays: [{ rule: 'dayOfMonth', lift: 1.5, windowDays: 2, appliesTo: ['insufficient_funds'] }] },
      'paydays.0.days: dayOfMonth paydays need "days"',
    ],
    [
      {
        paydays: [
          {
            rule: 'everyOtherFriday',
            anchor: '2026-01-05',
            lift: 1.5,
            windowDays: 2,
            appliesTo: ['insufficient_funds'],
          },
        ],
      },
      'paydays.0.anchor: 2026-01-05 is not a Friday',
    ],
    [{ gateways: [{ name: 'a' }, { name: 'a' }] }, 'gateways: gateway names must be unique'],
    [{ ambiguousRate: undefined }, 'ambiguousRate:'],
    [{ surprise: true }, 'surprise'],
  ])('a broken world is refused, naming the field: %j', (patch, message) => {
    const text = problemsWith(patch);
    expect(text).toContain('broken.json is not a valid world file');
    expect(text).toContain(message);
  });

  it('a missing world file is named in the error', () => {
    expect(() => loadWorld('package-lock.json.missing')).toThrow(
      /Cannot read world file package-lock\.json\.missing/,
    );
  });
});

describe('a small run', () => {
  const world = loadWorld('bench/worlds/friday-paydays.json');
  const { payments, results } = simulate(world, 400, 11);
  const names = strategyNames(world);

  it('is deterministic: same world, size and seed, same report', () => {
    expect(runBenchmark(world, 150, 3)).toEqual(runBenchmark(world, 150, 3));
    // Not the seed field alone: the strategies' figures differ too.
    expect(runBenchmark(world, 150, 3).strategies).not.toEqual(runBenchmark(world, 150, 4).strategies);
  });

  it('has every fixed schedule through every gateway', () => {
    expect(names).toEqual([
      'engine',
      'fixed_8_in_14',
      'fixed_8_in_14@acquirer-b',
      'fixed_8_in_14+second_card',
      'fixed_8_in_14+second_card@acquirer-b',
      'fixed_3_5_7',
      'fixed_3_5_7@acquirer-b',
      'fixed_3_5_7+second_card',
      'fixed_3_5_7+second_card@acquirer-b',
      'immediate_x3',
      'immediate_x3@acquirer-b',
      'immediate_x3+second_card',
      'immediate_x3+second_card@acquirer-b',
      'oracle',
    ]);
  });

  it.each(names)('%s never breaks a card-network rule, the budget or the window', (name) => {
    expect(results[name]!.reduce((n, r) => n + r.violations, 0)).toBe(0);
  });

  it.each(names)(
    '%s makes at most 8 attempts per payment, inside the window, and stops at success',
    (name) => {
      for (const [i, r] of results[name]!.entries()) {
        const p = payments[i]!;
        expect(r.attempts).toBeLessThanOrEqual(maxAttempts);
        expect(r.charges).toHaveLength(r.attempts);
        for (const c of r.charges) {
          expect(c.at).toBeGreaterThanOrEqual(p.failedAt);
          expect(c.at).toBeLessThanOrEqual(p.failedAt + world.horizonDays * day);
        }
        expect(r.charges.filter((c) => c.approved).length).toBe(r.recoveredAt === null ? 0 : 1);
        if (r.recoveredAt !== null)
          expect(r.charges.at(-1)).toMatchObject({ approved: true, at: r.recoveredAt });
      }
    },
  );

  it.each(names)("%s charges only what production may charge after the merchant's decline", (name) => {
    for (const [i, r] of results[name]!.entries()) {
      const decline = classifyDecline(payments[i]!.code);
      // Blocked at intake (403): nothing is charged. A hard cardholder-state decline: no second card.
      if (decline.stopsImmediately) expect(r.charges).toEqual([]);
      if (!decline.allowsFallback)
        expect(r.charges.filter((c) => c.token === tokensOf(payments[i]!).fallback)).toEqual([]);
    }
  });

  it.each(fixedVariants(world))(
    '$name charges only at its slots, through $gateway, one charge per card and slot',
    ({ name, schedule, gateway, secondCard }) => {
      const slots: readonly number[] = fixedSchedules[schedule];
      for (const [i, r] of results[name]!.entries()) {
        const p = payments[i]!;
        const { fallback } = tokensOf(p);
        // Slots in order (a slot the networks refuse is skipped); the second card after the own card.
        const keys = r.charges.map(
          (c) => 2 * slots.indexOf(c.at - p.failedAt) + (c.token === fallback ? 1 : 0),
        );
        expect(keys.every((k) => k >= 0)).toBe(true);
        expect(keys).toEqual([...new Set(keys)].sort((a, b) => a - b));
        expect(r.charges.every((c) => c.gateway === gateway)).toBe(true);
        if (secondCard) continue;
        // Without a backup payment method the second card only takes over from an own card that may not be
        // charged again: from the start if no platform retries the merchant's decline, else after a decline.
        const second = r.charges.findIndex((c) => c.token === fallback);
        if (second === 0) expect(classifyDecline(p.code).retryable).toBe(false);
        if (second > 0) expect(r.charges[second - 1]).toMatchObject({ approved: false });
        if (second >= 0) expect(r.charges.slice(second).every((c) => c.token === fallback)).toBe(true);
      }
    },
  );
});

describe('the world', () => {
  /** The default world changed by `patch`; its paydays go with its insufficient_funds decline. */
  const patched = (patch: Record<string, unknown>) => {
    const declines = patch.declines as Record<string, unknown> | undefined;
    const paydays = declines && !declines.insufficient_funds ? { paydays: [] } : {};
    return parseWorld({ ...base, ...paydays, ...patch }, 'test.json');
  };

  it('prices an attempt as the product of its factors (a hand-computed case)', () => {
    const world = patched({
      declines: { insufficient_funds: { weight: 1, recoverable: 1, baseSuccess: 0.4 } },
      hourOfDay: Array.from({ length: 24 }, (_, h) => (h === 8 ? 1.1 : 1)),
      dayOfWeek: [1, 1, 1, 0.9, 1, 1, 1],
      billingCycleLift: 1.2,
      decayPerDay: 0.97,
      fatiguePerAttempt: 0.7,
      sameDayRepeat: 0.5,
      fallbackSuccess: 0.5,
      gateways: [{ name: 'a' }, { name: 'b', multiplier: { insufficient_funds: 1.25 } }],
    });
    const model = new WorldModel(world);
    const failedAt = Date.parse('2026-01-12T14:00:00Z');
    const t = Date.parse('2026-01-15T14:00:00Z'); // 08:00 at UTC−6 on Thursday 15 January, a payday
    const facts = { failedAt, offsetMinutes: -360, billingCycleDay: 15 };
    const card: CardTruth = {
      token: 'tok_card',
      kind: 'primary',
      brand: 'visa',
      recoverable: true,
      code: 'insufficient_funds',
      charges: [failedAt, t - 12 * 3_600_000],
      retries: 1,
      advice: null,
      adviceAt: null,
    };
    // baseSuccess 0.4 × hour 08 1.1 × Thursday 0.9 × payday 1.5 × billing day 1.2 × decay 0.97^3 (3 days)
    // × fatigue 0.7^1 × same-day repeat 0.5 (charged 12 h before) × gateway b 1.25 = 0.284617…
    expect(model.probability(card, 'b', t, facts)).toBeCloseTo(0.28461707505, 10);
    expect(model.probability(card, 'a', t, facts)).toBeCloseTo(0.28461707505 / 1.25, 10);
    // A second card: fallbackSuccess 0.5 × hour 1.1 × weekday 0.9, none of the failing card's factors.
    const second: CardTruth = { ...card, kind: 'fallback', code: null, charges: [], retries: 0 };
    expect(model.probability(second, 'b', t, facts)).toBeCloseTo(0.495, 10);
    expect(model.probability({ ...card, recoverable: false }, 'b', t, facts)).toBe(0);
    const sure = new WorldModel(
      patched({ declines: { insufficient_funds: { weight: 1, recoverable: 1, baseSuccess: 1 } } }),
    );
    expect(sure.probability({ ...card, retries: 0, charges: [failedAt] }, 'main', t, facts)).toBe(1);
  });

  it('a payday wins over the dip before another payday, and dips do not compound', () => {
    const model = new WorldModel(loadWorld('bench/worlds/default.json'));
    const lift = (date: string) => model.paydayLift('insufficient_funds', Date.parse(date) / day);
    // The last business day of January 2026 is Friday the 30th, within 3 days of 1 February.
    expect(lift('2026-01-30')).toBeCloseTo(1.5, 10);
    expect(lift('2026-01-31')).toBeCloseTo(1.5, 10);
    expect(lift('2026-02-01')).toBeCloseTo(1.5, 10);
    // 3 days before the 30th, and the 29th before both the 30th and the 1st: ×0.7 once.
    expect(lift('2026-01-27')).toBeCloseTo(0.7, 10);
    expect(lift('2026-01-29')).toBeCloseTo(0.7, 10);
    expect(lift('2026-01-14')).toBeCloseTo(0.7, 10);
    expect(lift('2026-01-15')).toBeCloseTo(1.5, 10);
    expect(lift('2026-01-20')).toBe(1);
    expect(model.paydayLift('do_not_honor', Date.parse('2026-01-30') / day)).toBe(1);
    // Payday windows still compound with each other (the Friday world's every-other-Friday on top).
    const friday = new WorldModel(loadWorld('bench/worlds/friday-paydays.json'));
    expect(friday.paydayLift('insufficient_funds', Date.parse('2026-01-23') / day)).toBeCloseTo(2.7, 10);
  });

  it('a charge the card networks refuse never succeeds, and is counted as a violation', () => {
    // Visa never allows a retry after invalid_number (category 1), however likely the issuer is to approve.
    const world = patched({
      brands: { visa: 1 },
      declines: { invalid_number: { weight: 1, recoverable: 1, baseSuccess: 1 } },
      hourOfDay: Array.from({ length: 24 }, () => 2),
      dayOfWeek: Array.from({ length: 7 }, () => 2),
    });
    const model = new WorldModel(world);
    for (let i = 0; i < 50; i += 1) {
      const payment = drawPayment(world, 1, i);
      const run = new PaymentRun(model, payment, 1);
      const primary = tokensOf(payment).primary;
      expect(model.probability(run.card(primary)!, 'main', payment.failedAt + day, run.facts())).toBe(1);
      for (const d of [1, 2, 3]) {
        expect(run.allowed(primary, payment.failedAt + d * day)).toBe(false);
        expect(run.charge(primary, 'main', payment.failedAt + d * day)).toMatchObject({
          approved: false,
          code: 'invalid_number',
        });
      }
      expect(run.result()).toMatchObject({ recoveredAt: null, attempts: 3, violations: 3 });
    }
  });

  it('the fixed schedules never recover a payment through a forbidden charge (Mastercard advice 03)', () => {
    const world = patched({
      brands: { mastercard: 1 },
      declines: {
        do_not_honor: { weight: 1, recoverable: 1, baseSuccess: 0.3, advice: { '03': 1 } },
      },
    });
    const model = new WorldModel(world);
    for (const p of drawPayments(world, 2, 300)) {
      for (const v of fixedVariants(world)) {
        const r = runFixed(model, p, 2, fixedSchedules[v.schedule], v.gateway, v.secondCard);
        expect(r.violations > 0 && r.recoveredAt !== null).toBe(false);
        expect(r.violations).toBe(0);
        // After the first declined retry (advice 03) the card is never charged again.
        const primary = r.charges.filter((c) => c.token === tokensOf(p).primary);
        expect(primary.filter((c) => !c.approved).length).toBeLessThanOrEqual(1);
      }
    }
  });

  it('the best fixed baseline is the best schedule through the best gateway', () => {
    const world = patched({
      declines: { do_not_honor: { weight: 1, recoverable: 1, baseSuccess: 0.3 } },
      gateways: [
        { name: 'dead', multiplier: { do_not_honor: 0, fresh: 0 } },
        { name: 'live', multiplier: {} },
      ],
    });
    const report = runBenchmark(world, 200, 1);
    expect(report.strategies.fixed_8_in_14!.recoveredRevenueShare).toBe(0);
    expect(report.bestFixed).toMatch(/@live$/);
    const best = report.strategies[report.bestFixed]!.recoveredRevenueShare;
    expect(best).toBeGreaterThan(0);
    expect(report.engineVsBestFixed).toBeCloseTo(report.strategies.engine!.recoveredRevenueShare / best, 2);
  });

  it('the best fixed baseline may charge the second card on file at every slot', () => {
    // Customers' own cards never recover, every customer has a second card.
    const world = patched({
      declines: { do_not_honor: { weight: 1, recoverable: 0, baseSuccess: 0.3 } },
      fallbackTokenShare: 1,
    });
    const report = runBenchmark(world, 100, 1);
    expect(report.strategies.fixed_8_in_14!.recoveredRevenueShare).toBe(0);
    expect(report.strategies['fixed_8_in_14+second_card']!.recoveredRevenueShare).toBeGreaterThan(0.5);
    expect(report.bestFixed).toMatch(/\+second_card$/);
  });

  it('a ratio with nothing recovered below it is null, not 0', () => {
    const world = patched({
      declines: { do_not_honor: { weight: 1, recoverable: 0, baseSuccess: 0.3 } },
      fallbackTokenShare: 0,
    });
    const report = runBenchmark(world, 40, 1);
    expect(report.strategies.oracle!.recoveredRevenueShare).toBe(0);
    expect(report.engineVsBestFixed).toBeNull();
    expect(report.engineVsOracle).toBeNull();
  });

  it.each(worlds)(
    '%s: the oracle recovers at least as much as every fixed baseline (2,000 payments)',
    (file) => {
      const world = loadWorld(file);
      const model = new WorldModel(world);
      const payments = drawPayments(world, 5, 2_000);
      const oracle = summarise(
        payments,
        payments.map((p) => runOracle(model, p, 5)),
      ).recoveredRevenueShare;
      for (const v of fixedVariants(world)) {
        const fixed = payments.map((p) =>
          runFixed(model, p, 5, fixedSchedules[v.schedule], v.gateway, v.secondCard),
        );
        expect(oracle, v.name).toBeGreaterThanOrEqual(summarise(payments, fixed).recoveredRevenueShare);
      }
    },
  );
});

describe('npm run bench:recovery', () => {
  it('--json prints one JSON object and nothing else on stdout', () => {
    const out = execFileSync(
      'npx',
      [
        'tsx',
        'bench/recovery/main.ts',
        '--world',
        'bench/worlds/default.json',
        '--payments',
        '60',
        '--seed',
        '5',
        '--json',
      ],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] },
    );
    const lines = out.trim().split('\n');
    expect(lines).toHaveLength(1);
    const report = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(Object.keys(report).sort()).toEqual([
      'bestFixed',
      'engineVsBestFixed',
      'engineVsOracle',
      'payments',
      'seed',
      'strategies',
      'world',
    ]);
    expect(report).toMatchObject({ world: 'default', payments: 60, seed: 5 });
  });

  it('a bad world file exits with status 2 and says why on stderr', () => {
    let status = 0;
    let stderr = '';
    try {
      execFileSync('npx', ['tsx', 'bench/recovery/main.ts', '--world', 'package.json'], {
        encoding: 'utf8',
        stdio: 'pipe',
      });
    } catch (error) {
      const e = error as { status: number; stderr: string };
      [status, stderr] = [e.status, e.stderr];
    }
    expect(status).toBe(2);
    expect(stderr).toContain('package.json is not a valid world file');
  });
});
