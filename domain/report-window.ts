import { z } from 'zod';

const day = 86_400_000;
const maxRangeDays = 366;

/**
 * The window of failures a report covers: the query of GET /api/reports/* and the flags of
 * `recoup reports`. By default the last 30 days.
 */
export const ReportWindow = z
  .object({
    from: z.iso.datetime({ offset: true }).optional(),
    to: z.iso.datetime({ offset: true }).optional(),
  })
  .strict()
  .refine((q) => !q.from || !q.to || Date.parse(q.from) < Date.parse(q.to), {
    path: ['to'],
    message: 'must be after from',
  })
  .refine((q) => !q.from || !q.to || Date.parse(q.to) - Date.parse(q.from) <= maxRangeDays * day, {
    path: ['to'],
    message: `the range is at most ${maxRangeDays} days`,
  })
  // Without `to` the window ends now (read here from the wall clock: a day either way does not matter).
  .refine((q) => !q.from || q.to || Date.parse(q.from) < Date.now(), {
    path: ['from'],
    message: 'must be before now (the default to): give an earlier from, or a to',
  })
  .refine((q) => !q.from || q.to || Date.now() - Date.parse(q.from) <= maxRangeDays * day, {
    path: ['from'],
    message: `the range is at most ${maxRangeDays} days: give a later from, or a to`,
  });
export type ReportWindow = z.infer<typeof ReportWindow>;

/** The dates a window stands for: `to` defaults to now, `from` to 30 days before `to`. */
export function rangeOf(window: ReportWindow, now: Date): { from: Date; to: Date } {
  const to = window.to ? new Date(window.to) : now;
  const from = window.from ? new Date(window.from) : new Date(to.getTime() - 30 * day);
  return { from, to };
}
