import { describe, expect, it } from 'vitest';
import { brandColors, contrast } from '../api/pages/colors.js';
import { checkCardForm, passesLuhn } from '../domain/card-input.js';

const now = new Date('2026-03-15T12:00:00Z');
const valid = { number: '4242 4242 4242 4242', expiry: '03/26', cvc: '123' };

describe('the hosted card form', () => {
  it.each([
    ['4242424242424242', true],
    ['5555555555554444', true],
    ['4000000000000002', true],
    ['4242424242424241', false],
    ['0000000000000001', false],
  ])('Luhn: %s → %s', (digits, ok) => expect(passesLuhn(digits)).toBe(ok));

  it.each([
    [{}, null],
    [{ number: '4242-4242-4242-4242', expiry: '3/2026', cvc: '1234' }, null],
    [{ number: '' }, 'number'],
    [{ number: '4242 4242 4242 4241' }, 'number'],
    [{ number: '4242 abcd' }, 'number'],
    [{ expiry: '02/26' }, 'expiry'],
    [{ expiry: '13/30' }, 'expiry'],
    [{ expiry: '1230' }, 'expiry'],
    [{ cvc: '12' }, 'cvc'],
    [{ cvc: '12a' }, 'cvc'],
  ])('%j → error on %s', (change, field) => {
    const result = checkCardForm({ ...valid, ...change }, now, 'UTC');
    if (field === null) expect(result).toHaveProperty('card');
    else expect(Object.keys('errors' in result ? result.errors : {})).toEqual([field]);
  });

  // The card health sweep counts the same way (domain/card-health.ts): the form never refuses a card the
  // sweep still counts as valid, nor takes one it already counts as expired.
  it.each([
    ['UTC', '2026-03-31T23:59:59Z', '03/26', 'card'],
    ['UTC', '2026-04-01T00:00:00Z', '03/26', 'errors'],
    // Still 31 December in Los Angeles (17:00), already January in UTC.
    ['America/Los_Angeles', '2027-01-01T01:00:00Z', '12/26', 'card'],
    ['America/Los_Angeles', '2027-01-01T08:00:00Z', '12/26', 'errors'],
    // Already 1 January in Auckland (01:00), still December in UTC.
    ['Pacific/Auckland', '2026-12-31T12:00:00Z', '12/26', 'errors'],
    ['Pacific/Auckland', '2026-12-31T10:59:59Z', '12/26', 'card'],
  ])(
    "a card is valid through the last day of its expiry month in the account's time zone: %s at %s, %s → %s",
    (timeZone, at, expiry, outcome) => {
      const result = checkCardForm({ ...valid, expiry }, new Date(at), timeZone);
      expect(result).toHaveProperty(outcome);
      if ('errors' in result) expect(result.errors).toEqual({ expiry: 'expired' });
    },
  );
});

describe('brand colours keep WCAG AA contrast', () => {
  it.each(['#1a56db', '#0f766e', '#ffeb3b', '#777777', '#000000', '#ffffff', '#ff5722'])('%s', (color) => {
    const c = brandColors(color);
    expect(contrast(c.brand, c.onBrand)).toBeGreaterThanOrEqual(4.5);
    expect(contrast(c.accent, '#ffffff')).toBeGreaterThanOrEqual(4.5);
  });

  it('an invalid colour falls back to the default', () => {
    expect(brandColors('red;} body{display:none').brand).toBe('#1a56db');
  });
});
