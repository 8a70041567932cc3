import { describe, expect, it } from 'vitest';
import {
  currencyCodes,
  currencyDecimals,
  formatMoney,
  fromGatewayUnits,
  majorUnitsOf,
  minorUnitsOf,
  toGatewayDecimal,
  toGatewayUnits,
} from '../domain/money.js';

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
    [0, 'USD', 0],
    ['0', 'USD', 0],
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

describe('decimals of each currency (ISO 4217)', () => {
  it.each([
    // Every zero-decimal and three-decimal code domain/money.ts lists, and two-decimal ones beside them.
    ...'BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF'
      .split(' ')
      .map((c) => [c, 0] as const),
    ...'BHD IQD JOD KWD LYD OMR TND'.split(' ').map((c) => [c, 3] as const),
    ['USD', 2],
    ['EUR', 2],
    ['HUF', 2],
    ['TWD', 2],
  ] as const)('%s has %i decimals', (code, decimals) => {
    expect(currencyDecimals(code)).toBe(decimals);
    expect(currencyDecimals(code.toLowerCase())).toBe(decimals);
  });

  it('reads and writes won in whole units and Omani rials in thousandths', () => {
    expect(minorUnitsOf('5000', 'KRW')).toBe(5000);
    expect(majorUnitsOf(5000, 'KRW')).toBe('5000');
    expect(minorUnitsOf('1.5', 'OMR')).toBe(1500);
    expect(majorUnitsOf(1500, 'omr')).toBe('1.500');
  });
});

describe('amounts in the units each gateway takes', () => {
  describe.each([
    // Stripe: ISK and UGX in hundredths that must be 00, MGA in whole ariary, three decimals ending in 0.
    ['stripe', 5000, 'ISK', 500000, '5,000 kr is 500000 at Stripe'],
    ['stripe', 5000, 'ugx', 500000, 'USh 5,000 is 500000 at Stripe'],
    ['stripe', 100000, 'MGA', 1000, 'Ar 1,000.00 is 1000 at Stripe (zero-decimal there)'],
    ['stripe', 5120, 'KWD', 5120, '5.120 KWD is 5120 at Stripe'],
    ['stripe', 500, 'JPY', 500, 'yen are the same'],
    ['stripe', 1999, 'EUR', 1999, 'a two-decimal currency is the same'],
    ['stripe', 500050, 'HUF', 500050, 'HUF charges take two decimals at Stripe'],
    ['stripe', 80045, 'TWD', 80045, 'TWD charges take two decimals at Stripe'],
    // Adyen: CLP and ISK with two decimals, CVE and IDR with none.
    ['adyen', 5000, 'CLP', 500000, 'CLP 5,000 is 500000 at Adyen'],
    ['adyen', 5000, 'ISK', 500000, '5,000 kr is 500000 at Adyen'],
    ['adyen', 12300, 'CVE', 123, '123.00 CVE is 123 at Adyen'],
    ['adyen', 1500000, 'IDR', 15000, 'Rp 15,000.00 is 15000 at Adyen'],
    ['adyen', 1500, 'KWD', 1500, 'three decimals at Adyen too'],
    // PayPal: HUF and TWD in whole units (its decimal text is made from these).
    ['paypal', 500000, 'HUF', 5000, '5,000.00 Ft is 5000 at PayPal'],
    ['paypal', 80000, 'TWD', 800, 'NT$800.00 is 800 at PayPal'],
    ['paypal', 4950, 'USD', 4950, 'dollars are the same'],
    ['braintree', 5000, 'ISK', 5000, 'a gateway without exceptions takes ISO units'],
  ] as const)('%s: %i %s', (gateway, iso, currency, units, what) => {
    it(`${what}, and back`, () => {
      expect(toGatewayUnits(iso, currency, gateway)).toBe(units);
      expect(fromGatewayUnits(units, currency, gateway)).toBe(iso);
    });
  });

  it.each([
    ['stripe', 100050, 'MGA', 'Ar 1,000.50: Stripe charges whole ariary'],
    ['stripe', 5124, 'KWD', '5.124 KWD: the last digit at Stripe must be 0'],
    ['adyen', 12345, 'CVE', '123.45 CVE: Adyen takes whole escudos'],
    ['adyen', 1500050, 'IDR', 'Rp 15,000.50: Adyen takes whole rupiah'],
    ['paypal', 500050, 'HUF', '5,000.50 Ft: PayPal takes no decimals'],
    ['paypal', 80045, 'TWD', 'NT$800.45: PayPal takes no decimals'],
    ['stripe', 12.5, 'EUR', 'a fraction of a minor unit'],
    ['stripe', -100, 'EUR', 'a negative amount'],
    [
      'stripe',
      Number.MAX_SAFE_INTEGER,
      'ISK',
      'an amount past what an integer holds exactly, once in hundredths',
    ],
  ] as const)(
    '%s cannot charge %s %s exactly (%s): null, never a rounded amount',
    (gateway, iso, currency, _why) => {
      expect(toGatewayUnits(iso, currency, gateway)).toBeNull();
      expect(toGatewayDecimal(iso, currency, gateway)).toBeNull();
    },
  );

  it.each([
    ['stripe', 1250, 'ISK', '12.50 kr: ISK has no minor unit in ISO 4217'],
    ['stripe', 550, 'UGX', 'USh 5.50'],
    ['adyen', 1250, 'CLP', 'CLP 12.50'],
    ['stripe', 12.5, 'EUR', 'not an integer'],
  ] as const)('%s reporting %s %s is no ISO amount (%s): null', (gateway, units, currency, _why) => {
    expect(fromGatewayUnits(units, currency, gateway)).toBeNull();
  });

  it("writes PayPal's decimal text with PayPal's decimals", () => {
    expect(toGatewayDecimal(500000, 'HUF', 'paypal')).toBe('5000');
    expect(toGatewayDecimal(80000, 'twd', 'paypal')).toBe('800');
    expect(toGatewayDecimal(4900, 'JPY', 'paypal')).toBe('4900');
    expect(toGatewayDecimal(4950, 'USD', 'paypal')).toBe('49.50');
    expect(toGatewayDecimal(5, 'EUR', 'paypal')).toBe('0.05');
  });
});
