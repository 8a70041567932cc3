import { describe, expect, it } from 'vitest';
import { currencyCodes, formatMoney, majorUnitsOf, minorUnitsOf } from '../domain/money.js';

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
    ['1.5', 'KWD', 1500],
    ['12.3456', 'BHD', 12346],
    ['0.005', 'jod', 5],
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
    // Three-decimal currencies: 1500 fils are 1.500 KWD (never "15.00", ten times the amount).
    expect(majorUnitsOf(1500, 'KWD')).toBe('1.500');
    expect(majorUnitsOf(5, 'tnd')).toBe('0.005');
  });

  it('formats each currency with its own decimals', () => {
    expect(formatMoney({ amount: 1999, currency: 'USD' })).toBe('$19.99');
    expect(formatMoney({ amount: 500, currency: 'JPY' })).toBe('¥500');
    expect(formatMoney({ amount: 1500, currency: 'KWD' })).toMatch(/^KWD\s1\.500$/u);
  });
});

describe('ISO 4217 codes', () => {
  it.each(['VED', 'ZWG', 'XCG'])('accepts %s, added since 2021, with 2 decimals', (code) => {
    expect(currencyCodes.has(code)).toBe(true);
    expect(minorUnitsOf('49.50', code)).toBe(4950);
    expect(majorUnitsOf(4950, code)).toBe('49.50');
  });

  it.each(['ANG', 'ZWL'])('still accepts %s, superseded but still billed in by platforms', (code) => {
    expect(currencyCodes.has(code)).toBe(true);
  });
});
