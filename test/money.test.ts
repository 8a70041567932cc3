import { describe, expect, it } from 'vitest';
import { majorUnitsOf, minorUnitsOf } from '../domain/money.js';

describe('platform amounts in major units', () => {
  it.each([
    ['49.50', 'USD', 4950],
    ['1,049.00', 'usd', 104900],
    [49.5, 'EUR', 4950],
    [0.1 + 0.2, 'EUR', 30],
    ['49.555', 'USD', 4956],
    ['49.554', 'USD', 4955],
    ['7', 'GBP', 700],
    ['500', 'JPY', 500],
    ['12.5', 'JPY', 13],
    ['abc', 'USD', null],
    ['-5.00', 'USD', null],
    [-1, 'USD', null],
    [Number.NaN, 'USD', null],
  ] as const)('%s %s is %s minor units', (amount, currency, expected) => {
    expect(minorUnitsOf(amount, currency)).toBe(expected);
  });

  it('writes minor units back as the decimal platform APIs take', () => {
    expect(majorUnitsOf(4950, 'USD')).toBe('49.50');
    expect(majorUnitsOf(5, 'usd')).toBe('0.05');
    expect(majorUnitsOf(500, 'JPY')).toBe('500');
  });
});
