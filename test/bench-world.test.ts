import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { classifyDecline } from '../domain/declines.js';
import { maxAttempts, tokensOf } from '../bench/recovery/payment-run.js';
import { runBenchmark, simulate, strategyNames } from '../bench/recovery/run.js';
import { fixedSchedules, type FixedStrategy } from '../bench/recovery/strategies/fixed.js';
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

  it('is deterministic: same world, size and seed, same report', () => {
    expect(runBenchmark(world, 150, 3)).toEqual(runBenchmark(world, 150, 3));
    expect(runBenchmark(world, 150, 3)).not.toEqual(runBenchmark(world, 150, 4));
  });

  it('the engine never breaks a card-network rule, the budget or the window', () => {
    expect(results.engine.reduce((n, r) => n + r.violations, 0)).toBe(0);
    expect(results.oracle.reduce((n, r) => n + r.violations, 0)).toBe(0);
  });

  it.each(strategyNames)(
    '%s makes at most 8 attempts per payment, inside the window, and stops at success',
    (name) => {
      for (const [i, r] of results[name].entries()) {
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

  it.each(strategyNames)(
    "%s charges only what production may charge after the merchant's decline",
    (name) => {
      for (const [i, r] of results[name].entries()) {
        const decline = classifyDecline(payments[i]!.code);
        // Blocked at intake (403): nothing is charged. A hard cardholder-state decline: no second card.
        if (decline.stopsImmediately) expect(r.charges).toEqual([]);
        if (!decline.allowsFallback)
          expect(r.charges.filter((c) => c.token === tokensOf(payments[i]!).fallback)).toEqual([]);
      }
    },
  );

  it.each(Object.keys(fixedSchedules) as FixedStrategy[])(
    '%s retries exactly on its schedule, on the primary gateway',
    (name) => {
      const gateway = world.gateways[0]!.name;
      for (const [i, r] of results[name].entries()) {
        const p = payments[i]!;
        const offsets = r.charges.map((c) => c.at - p.failedAt);
        expect(fixedSchedules[name].slice(0, offsets.length)).toEqual(offsets);
        expect(r.charges.every((c) => c.gateway === gateway)).toBe(true);
        // It stops early only at a success or a decline no platform retries.
        const last = r.charges.at(-1);
        if (offsets.length < fixedSchedules[name].length && last && !last.approved)
          expect(classifyDecline(last.code).retryable).toBe(false);
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
