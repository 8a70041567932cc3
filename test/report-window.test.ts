import { describe, expect, it } from 'vitest';
import { formatIssues } from '../api/validate.js';
import { rangeOf, reportWindow } from '../domain/report-window.js';

const day = 86_400_000;
/** The report's clock, far from the wall clock: the window must be checked against it, not Date.now(). */
const now = new Date('2031-06-15T12:00:00Z');
const window = reportWindow(() => now);
const ago = (days: number) => new Date(now.getTime() - days * day).toISOString();

/** What a query is refused for, by field; null when it is accepted. */
function refusal(query: Record<string, string>): Record<string, string[]> | null {
  const parsed = window.safeParse(query, { reportInput: true });
  return parsed.success ? null : formatIssues(parsed.error);
}

describe('the report window, checked against the report’s own clock', () => {
  it.each([
    ['a from 10 days before the clock, without to', { from: ago(10) }],
    ['a from 366 days before the clock', { from: ago(366) }],
    ['a from and to 366 days apart', { from: ago(400), to: ago(34) }],
    ['nothing (the last 30 days)', {}],
  ])('%s is accepted', (_, query) => {
    expect(refusal(query)).toBeNull();
  });

  it.each([
    [
      'a from after the clock, without to',
      { from: ago(-1) },
      { from: [expect.stringMatching(/^must be before now/)] },
    ],
    [
      'a from 367 days before the clock',
      { from: ago(367) },
      { from: [expect.stringMatching(/at most 366 days/)] },
    ],
    ['a to before from', { from: ago(5), to: ago(10) }, { to: ['must be after from'] }],
    ['a to equal to from', { from: ago(5), to: ago(5) }, { to: ['must be after from'] }],
    ['a range of 367 days', { from: ago(400), to: ago(33) }, { to: ['the range is at most 366 days'] }],
    // A date that is not one is named alone: no range is checked against it.
    ['an invalid from', { from: 'yesterday' }, { from: ['Invalid ISO datetime'] }],
    ['an invalid from with a to', { from: 'yesterday', to: ago(1) }, { from: ['Invalid ISO datetime'] }],
    ['an invalid to', { from: ago(5), to: '2031-06-01' }, { to: ['Invalid ISO datetime'] }],
    ['an unknown field', { since: ago(5) }, { since: ['Unknown field'] }],
  ])('%s is refused, naming the field', (_, query, details) => {
    expect(refusal(query)).toEqual(details);
  });

  it('a from in the wall clock’s future is fine when it is in the report clock’s past', () => {
    const wallNow = Date.now();
    const ahead = reportWindow(() => new Date(wallNow + 40 * day));
    expect(ahead.safeParse({ from: new Date(wallNow + 10 * day).toISOString() }).success).toBe(true);
  });

  it('stands for [from, to): to defaults to now, from to 30 days before to', () => {
    expect(rangeOf({}, now)).toEqual({ from: new Date(ago(30)), to: now });
    expect(rangeOf({ to: ago(10) }, now)).toEqual({ from: new Date(ago(40)), to: new Date(ago(10)) });
  });
});
