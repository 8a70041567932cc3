import { describe, expect, it } from 'vitest';
import { expiryWarningEventId } from '../activities/card-sweep.js';
import { daysUntilExpiry, expiresSoon, nextSweepAt, sweepDay } from '../domain/card-health.js';

const at = (iso: string) => Date.parse(iso);

describe('daysUntilExpiry', () => {
  it('counts the days to the last day of the expiry month, 0 on it and negative after', () => {
    const card = { expMonth: 2, expYear: 2028 }; // a leap year: valid through 29 February
    expect(daysUntilExpiry(card, at('2028-02-01T12:00:00Z'), 'UTC')).toBe(28);
    expect(daysUntilExpiry(card, at('2028-02-29T23:59:00Z'), 'UTC')).toBe(0);
    expect(daysUntilExpiry(card, at('2028-03-01T00:00:00Z'), 'UTC')).toBe(-1);
    expect(daysUntilExpiry({ expMonth: 12, expYear: 2027 }, at('2027-11-30T12:00:00Z'), 'UTC')).toBe(31);
  });

  it('counts from the date in the account’s time zone', () => {
    const card = { expMonth: 3, expYear: 2027 };
    const instant = at('2027-03-31T23:30:00Z'); // already 1 April in Berlin, still 31 March in New York
    expect(daysUntilExpiry(card, instant, 'Europe/Berlin')).toBe(-1);
    expect(daysUntilExpiry(card, instant, 'America/New_York')).toBe(0);
  });
});

describe('expiresSoon', () => {
  it('holds for valid cards within the window only', () => {
    expect(expiresSoon(0, 30)).toBe(true);
    expect(expiresSoon(30, 30)).toBe(true);
    expect(expiresSoon(31, 30)).toBe(false);
    expect(expiresSoon(-1, 30)).toBe(false);
  });
});

describe('the sweep schedule', () => {
  it('runs at 06:00 UTC, the next one strictly after now', () => {
    expect(new Date(nextSweepAt(at('2027-05-10T05:59:59Z'))).toISOString()).toBe('2027-05-10T06:00:00.000Z');
    expect(new Date(nextSweepAt(at('2027-05-10T06:00:00Z'))).toISOString()).toBe('2027-05-11T06:00:00.000Z');
    expect(new Date(nextSweepAt(at('2027-12-31T23:00:00Z'))).toISOString()).toBe('2028-01-01T06:00:00.000Z');
    expect(sweepDay(at('2027-05-10T06:00:00Z'))).toBe('2027-05-10');
  });
});

describe('expiryWarningEventId', () => {
  it('is the same for one card and expiry, and differs by account, card or expiry', () => {
    const card = { token: 'tok_visa_1', expMonth: 4, expYear: 2027 };
    const id = expiryWarningEventId('acct_a', card);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(expiryWarningEventId('acct_a', { ...card })).toBe(id);
    const others = [
      expiryWarningEventId('acct_b', card),
      expiryWarningEventId('acct_a', { ...card, token: 'tok_visa_2' }),
      expiryWarningEventId('acct_a', { ...card, expYear: 2030 }),
    ];
    expect(new Set([id, ...others]).size).toBe(4);
  });
});
