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
    const result = checkCardForm({ ...valid, ...change }, now);
    if (field === null) expect(result).toHaveProperty('card');
    else expect(Object.keys('errors' in result ? result.errors : {})).toEqual([field]);
  });

  it('a card is valid through the end of its expiry month', () => {
    expect(checkCardForm({ ...valid, expiry: '03/26' }, new Date('2026-03-31T23:59:59Z'))).toHaveProperty(
      'card',
    );
    expect(checkCardForm({ ...valid, expiry: '03/26' }, new Date('2026-04-01T00:00:00Z'))).toHaveProperty(
      'errors',
    );
  });
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
