import { z } from 'zod';

const day = 86_400_000;
const maxRangeDays = 366;

/** The query of GET /api/reports/* and the flags of `recoup reports`: both dates optional. */
const WindowQuery = z
  .object({
    from: z.iso.datetime({ offset: true }).optional(),
    to: z.iso.datetime({ offset: true }).optional(),
  })
  .strict();
export type ReportWindow = z.infer<typeof WindowQuery>;

/**
 * The window of failures a report covers, checked against `clock`: the clock the report itself is computed
 * with, since without `to` the window ends now. By default the last 30 days, at most 366. The range is
 * checked only once both dates given are valid date-times: a bad date is named alone.
 */
export function reportWindow(clock: () => Date) {
  return WindowQuery.superRefine(
    (q, ctx) => {
      if (!q.from) return;
      const from = Date.parse(q.from);
      if (q.to) {
        const to = Date.parse(q.to);
        if (from >= to) ctx.addIssue({ code: 'custom', path: ['to'], message: 'must be after from' });
        else if (to - from > maxRangeDays * day)
          ctx.addIssue({
            code: 'custom',
            path: ['to'],
            message: `the range is at most ${maxRangeDays} days`,
          });
        return;
      }
      const now = clock().getTime();
      if (from >= now)
        ctx.addIssue({
          code: 'custom',
          path: ['from'],
          message: 'must be before now (the default to): give an earlier from, or a to',
        });
      else if (now - from > maxRangeDays * day)
        ctx.addIssue({
          code: 'custom',
          path: ['from'],
          message: `the range is at most ${maxRangeDays} days: give a later from, or a to`,
        });
    },
    { when: (parsed) => parsed.issues.length === 0 },
  );
}

/**
 * The window checked against the wall clock, for callers whose clock is the wall clock (the operator's
 * CLI); the API checks with its own clock (`reportWindow`).
 */
export const ReportWindow = reportWindow(() => new Date());

/** The dates a window stands for: `to` defaults to now, `from` to 30 days before `to`. */
export function rangeOf(window: ReportWindow, now: Date): { from: Date; to: Date } {
  const to = window.to ? new Date(window.to) : now;
  const from = window.from ? new Date(window.from) : new Date(to.getTime() - 30 * day);
  return { from, to };
}
