import { describe, expect, it } from 'vitest';
import { localParts, offsetAt, offsetChanges, scaCountries, utcOffsetMinutes } from '../domain/local-time.js';

const at = (iso: string) => Date.parse(iso);
const day = 86_400_000;

describe('the customer’s clock over a recovery’s window', () => {
  it.each([
    // New York, 2026: EST → EDT on 8 March at 02:00 local, back on 1 November at 02:00 EDT.
    ['America/New_York', '2026-03-01T12:00:00Z', 21, [{ at: '2026-03-08T07:00:00Z', offsetMinutes: -240 }]],
    ['America/New_York', '2026-10-20T12:00:00Z', 21, [{ at: '2026-11-01T06:00:00Z', offsetMinutes: -300 }]],
    // Berlin, both changes at 01:00 UTC; Lord Howe moves by half an hour (+10:30 → +11:00).
    ['Europe/Berlin', '2026-03-20T00:00:00Z', 60, [{ at: '2026-03-29T01:00:00Z', offsetMinutes: 120 }]],
    ['Australia/Lord_Howe', '2026-09-30T00:00:00Z', 10, [{ at: '2026-10-03T15:30:00Z', offsetMinutes: 660 }]],
    // A year of New York: both changes, in time order.
    [
      'America/New_York',
      '2026-01-01T00:00:00Z',
      365,
      [
        { at: '2026-03-08T07:00:00Z', offsetMinutes: -240 },
        { at: '2026-11-01T06:00:00Z', offsetMinutes: -300 },
      ],
    ],
    ['Asia/Kolkata', '2026-01-01T00:00:00Z', 365, []],
    ['UTC', '2026-03-01T00:00:00Z', 60, []],
    // A change after the window is not in it.
    ['America/New_York', '2026-02-01T00:00:00Z', 21, []],
  ])('%s from %s for %i days changes its offset at %j', (zone, from, days, expected) => {
    const changes = offsetChanges(zone, at(from), at(from) + days * day);
    expect(changes).toEqual(expected.map((c) => ({ at: at(c.at), offsetMinutes: c.offsetMinutes })));
    // Each change is the zone's own: the old offset a minute before, the new one from its minute on.
    for (const c of changes) {
      expect(utcOffsetMinutes(zone, c.at)).toBe(c.offsetMinutes);
      expect(utcOffsetMinutes(zone, c.at - 60_000)).not.toBe(c.offsetMinutes);
    }
  });

  it('reads the offset at any time from the offset at intake and the changes due by then', () => {
    const changes = offsetChanges('America/New_York', at('2026-03-01T12:00:00Z'), at('2026-03-22T12:00:00Z'));
    expect(offsetAt(at('2026-03-08T06:59:00Z'), -300, changes)).toBe(-300);
    expect(offsetAt(at('2026-03-08T07:00:00Z'), -300, changes)).toBe(-240);
    expect(offsetAt(at('2026-03-20T00:00:00Z'), -300, changes)).toBe(-240);
    // Without changes (a recovery screened before they were kept) the offset at intake holds.
    expect(offsetAt(at('2026-03-20T00:00:00Z'), -300)).toBe(-300);
    // 09:00 in New York is 14:00 UTC in winter and 13:00 UTC in summer.
    const nine = (iso: string) => localParts(at(iso), offsetAt(at(iso), -300, changes)).hour;
    expect([nine('2026-03-05T14:00:00Z'), nine('2026-03-12T13:00:00Z')]).toEqual([9, 9]);
  });
});

describe('the Strong Customer Authentication region', () => {
  it.each(['DE', 'FR', 'IS', 'LI', 'NO', 'GB', 'CH'])(
    'takes in issuers of %s (EEA, UK and Switzerland)',
    (country) => {
      expect(scaCountries.has(country)).toBe(true);
    },
  );
});
