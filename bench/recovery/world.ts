import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { Currency } from '../../domain/recovery-request.js';
import { TimeZone } from '../../domain/settings.js';

/**
 * A world file: the hidden ground truth the simulator draws payments and outcomes from. The fields of the
 * issue, plus optional extras that default to "no effect" (marked below).
 */
const Probability = z.number().min(0).max(1);
const Weight = z.number().min(0);
const Multiplier = z.number().min(0);
const Weights = z
  .record(z.string().min(1), Weight)
  .refine((w) => Object.values(w).some((x) => x > 0), 'needs at least one positive weight');

const Merchant = z
  .object({
    id: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,39}$/, 'must be lower-case letters, digits, - or _'),
    weight: Weight,
    timezone: TimeZone,
    billingCycleDay: z.int().min(1).max(31).optional(),
    currency: Currency,
    amountMedian: z.int().min(50),
    amountSpread: z.number().min(0).max(3),
    /** Extra: the account's riskSkipThreshold (production default when absent). */
    riskSkipThreshold: z.number().min(0).max(100).optional(),
  })
  .strict();

const Decline = z
  .object({
    weight: Weight,
    recoverable: Probability,
    baseSuccess: Probability,
    nextCode: Weights.optional(),
    /** Extra: Mastercard merchant advice codes ("02", "25", …, or "none") returned with this decline. */
    advice: Weights.optional(),
  })
  .strict();

const Payday = z
  .object({
    rule: z.enum(['dayOfMonth', 'lastBusinessDay', 'everyFriday', 'everyOtherFriday']),
    days: z.array(z.int().min(1).max(31)).min(1).optional(),
    anchor: z.iso.date().optional(),
    lift: Multiplier,
    windowDays: z.int().min(1).max(14),
    /** Extra: the window starts this many days after the payday (negative: a dip before it). */
    offsetDays: z.int().min(-14).max(14).default(0),
    appliesTo: z.array(z.string().min(1)).min(1),
  })
  .strict()
  .superRefine((p, ctx) => {
    if (p.rule === 'dayOfMonth' && !p.days)
      ctx.addIssue({ code: 'custom', path: ['days'], message: 'dayOfMonth paydays need "days"' });
    if (p.rule === 'everyOtherFriday') {
      if (!p.anchor)
        ctx.addIssue({
          code: 'custom',
          path: ['anchor'],
          message: 'everyOtherFriday needs an "anchor" Friday',
        });
      else if (new Date(`${p.anchor}T00:00:00Z`).getUTCDay() !== 5)
        ctx.addIssue({ code: 'custom', path: ['anchor'], message: `${p.anchor} is not a Friday` });
    }
  });

const Brands = z
  .object({ visa: Weight, mastercard: Weight, amex: Weight, discover: Weight })
  .partial()
  .strict()
  .refine((b) => Object.values(b).some((x) => x > 0), 'needs at least one positive weight');

export const World = z
  .object({
    name: z.string().min(1),
    comment: z.union([z.string(), z.array(z.string())]).optional(),
    seed: z.int().optional(),
    start: z.iso.datetime({ offset: true }),
    arrivalDays: z.number().positive().max(365),
    horizonDays: z.int().min(1).max(60),
    merchants: z.array(Merchant).min(1),
    countries: z.record(
      z.string().regex(/^[A-Z]{2}$/, 'must be an ISO 3166 alpha-2 code such as US'),
      z.object({ weight: Weight, utcOffsetHours: z.number().min(-12).max(14) }).strict(),
    ),
    brands: Brands,
    declines: z.record(z.string().regex(/^[a-z0-9_]+$/, 'must be a snake_case decline code'), Decline),
    hourOfDay: z.array(Multiplier).length(24, 'needs 24 multipliers, hour 0 first'),
    dayOfWeek: z.array(Multiplier).length(7, 'needs 7 multipliers, Monday first'),
    paydays: z.array(Payday).default([]),
    billingCycleLift: Multiplier.default(1),
    decayPerDay: z.number().positive().max(1),
    fatiguePerAttempt: z.number().positive().max(1),
    /** Extra: multiplier when the card was charged less than 24 h before (research §9: ×0.5). */
    sameDayRepeat: Multiplier.default(1),
    gateways: z
      .array(
        z
          .object({
            name: z
              .string()
              .regex(/^[a-z0-9][a-z0-9_-]{0,39}$/, 'must be lower-case letters, digits, - or _'),
            multiplier: z.record(z.string().min(1), Multiplier).default({}),
          })
          .strict(),
      )
      .min(1)
      .max(3, 'one primary plus at most two backups, as an account allows'),
    fallbackTokenShare: Probability.default(0),
    fallbackSuccess: Probability.default(0),
    /** Extra: share of expired cards the account updater has a new card for, and that card's success. */
    accountUpdater: z.object({ hitRate: Probability, success: Probability }).strict().optional(),
    ambiguousRate: Probability,
  })
  .strict()
  .superRefine((w, ctx) => {
    const known = new Set(Object.keys(w.declines));
    const check = (codes: string[], path: (string | number)[]) => {
      for (const c of codes)
        if (!known.has(c)) ctx.addIssue({ code: 'custom', path, message: `unknown decline code "${c}"` });
    };
    for (const [code, d] of Object.entries(w.declines))
      check(Object.keys(d.nextCode ?? {}), ['declines', code, 'nextCode']);
    w.paydays.forEach((p, i) => check(p.appliesTo, ['paydays', i, 'appliesTo']));
    if (!Object.values(w.declines).some((d) => d.weight > 0))
      ctx.addIssue({ code: 'custom', path: ['declines'], message: 'needs a decline with a positive weight' });
    if (!w.merchants.some((m) => m.weight > 0))
      ctx.addIssue({
        code: 'custom',
        path: ['merchants'],
        message: 'needs a merchant with a positive weight',
      });
    if (!Object.values(w.countries).some((c) => c.weight > 0))
      ctx.addIssue({
        code: 'custom',
        path: ['countries'],
        message: 'needs a country with a positive weight',
      });
    const names = w.gateways.map((g) => g.name);
    if (new Set(names).size !== names.length)
      ctx.addIssue({ code: 'custom', path: ['gateways'], message: 'gateway names must be unique' });
  });
export type World = z.infer<typeof World>;
export type Payday = World['paydays'][number];

/** A world file that is not valid: one line per problem, each naming the field. */
export class WorldError extends Error {}

/** Validates a parsed world; throws a WorldError listing every problem by its path. */
export function parseWorld(data: unknown, source = 'world'): World {
  const parsed = World.safeParse(data);
  if (parsed.success) return parsed.data;
  const lines = parsed.error.issues.map(
    (i) => `  ${i.path.length ? i.path.join('.') : '(top level)'}: ${i.message}`,
  );
  throw new WorldError(`${source} is not a valid world file:\n${lines.join('\n')}`);
}

/** Reads and validates a world file. */
export function loadWorld(path: string): World {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new WorldError(`Cannot read world file ${path}: ${(error as Error).message}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new WorldError(`${path} is not JSON: ${(error as Error).message}`);
  }
  return parseWorld(data, path);
}
