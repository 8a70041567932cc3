import { z } from 'zod';

const maxRangeDays = 366;

/** Query of GET /api/reports/summary: a window of failures, by default the last 30 days. */
export const SummaryQuery = z
  .object({
    from: z.iso.datetime({ offset: true }).optional(),
    to: z.iso.datetime({ offset: true }).optional(),
  })
  .strict()
  .refine((q) => !q.from || !q.to || Date.parse(q.from) < Date.parse(q.to), {
    path: ['to'],
    message: 'must be after from',
  })
  .refine((q) => !q.from || !q.to || Date.parse(q.to) - Date.parse(q.from) <= maxRangeDays * 86_400_000, {
    path: ['to'],
    message: `the range is at most ${maxRangeDays} days`,
  });

const rate = z.number().nullable().describe('0–1; null when there is nothing to divide by');

export const Summary = z.object({
  from: z.iso.datetime(),
  to: z.iso.datetime(),
  failedPayments: z
    .int()
    .describe('Recoveries whose failure falls in the range, Proof Mode controls included'),
  recovered: z.int(),
  inProgress: z.int(),
  recoveryRate: rate.describe('Recovered over failures Recoup worked on (controls excluded)'),
  revenueByCurrency: z.record(z.string(), z.object({ failed: z.int(), recovered: z.int() })),
  organicSuccesses: z.int().describe('Payments logged with POST /api/recovery/pulse in the range'),
  organicSuccessRate: rate.describe('Organic successes over all payments (organic + failed)'),
  successRateWithRecoup: rate.describe('Organic successes plus recoveries over all payments'),
  liftPoints: z.number().nullable().describe('successRateWithRecoup − organicSuccessRate, percentage points'),
  proofMode: z
    .object({
      treatment: z.int().describe('Decided payments Recoup worked on'),
      control: z.int().describe('Decided payments of the control group (no attempts)'),
      treatmentRate: rate,
      controlRate: rate,
      upliftPoints: z.number().nullable(),
      confidenceInterval95: z.tuple([z.number(), z.number()]).nullable(),
      pValue: z.number().nullable(),
      insufficientData: z.boolean(),
    })
    .nullable()
    .describe('Present when the range has Proof Mode controls; payments count once decided (30 days)'),
});
