/** ISO 4217 codes accepted by Recoup (active codes), and which of them have no minor unit. */
const codes =
  'AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN BWP BYN BZD CAD CDF CHF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD UYU UZS VES VND VUV WST XAF XCD XOF XPF YER ZAR ZMW ZWL';
export const currencyCodes: ReadonlySet<string> = new Set(codes.split(' '));

/** Currencies whose amounts are whole units (no minor unit): the amount is passed as is. */
export const zeroDecimalCurrencies: ReadonlySet<string> = new Set(
  'BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF'.split(' '),
);

/** Amount in minor units plus currency: the only way Recoup carries money. */
export interface Money {
  amount: number;
  currency: string;
}

/** Formats minor units for display, e.g. 1999 USD → "$19.99", 500 JPY → "¥500". */
export function formatMoney({ amount, currency }: Money, locale = 'en-US'): string {
  const digits = zeroDecimalCurrencies.has(currency) ? 0 : 2;
  return new Intl.NumberFormat(locale, { style: 'currency', currency, minimumFractionDigits: digits }).format(
    amount / 10 ** digits,
  );
}

/**
 * A decimal amount in the currency's major unit, as billing platforms send it ("49.50", "1,049.00",
 * 49.5), in minor units, rounded half up past the currency's decimals; null when it is not a plain
 * non-negative decimal. Text is converted digit by digit, never through floating point.
 */
export function minorUnitsOf(amount: string | number, currency: string): number | null {
  const text =
    typeof amount === 'number'
      ? Number.isFinite(amount) && amount >= 0
        ? amount.toFixed(6)
        : ''
      : amount.replaceAll(',', '').trim();
  const match = /^(\d+)(?:\.(\d*))?$/.exec(text);
  if (!match) return null;
  const digits = zeroDecimalCurrencies.has(currency.toUpperCase()) ? 0 : 2;
  const fraction = (match[2] ?? '').padEnd(digits + 1, '0');
  const units = Number(match[1]) * 10 ** digits + Number(fraction.slice(0, digits) || '0');
  return Number(fraction[digits]) >= 5 ? units + 1 : units;
}

/** Minor units as the decimal in the major unit that platform APIs take (4950 USD → "49.50"). */
export function majorUnitsOf(amount: number, currency: string): string {
  if (zeroDecimalCurrencies.has(currency.toUpperCase())) return String(amount);
  return `${Math.floor(amount / 100)}.${String(amount % 100).padStart(2, '0')}`;
}
