/**
 * ISO 4217 codes accepted by Recoup: the active ones (VED of 2021, ZWG of 2024 and XCG of 2025 among them),
 * and ANG and ZWL, which XCG and ZWG replace but which platforms may still bill older subscriptions in.
 */
const codes =
  'AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN BWP BYN BZD CAD CDF CHF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD UYU UZS VED VES VND VUV WST XAF XCD XCG XOF XPF YER ZAR ZMW ZWG ZWL';
export const currencyCodes: ReadonlySet<string> = new Set(codes.split(' '));

/** Currencies whose amounts are whole units (no minor unit): the amount is passed as is. */
export const zeroDecimalCurrencies: ReadonlySet<string> = new Set(
  'BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF'.split(' '),
);

/** Currencies with three decimals (ISO 4217): 1000 minor units of KWD are 1.000 KWD, not 10.00. */
const threeDecimalCurrencies: ReadonlySet<string> = new Set('BHD IQD JOD KWD LYD OMR TND'.split(' '));

/** How many decimals the currency's minor unit has: 0, 2 or 3. */
export function currencyDecimals(currency: string): number {
  const code = currency.toUpperCase();
  if (zeroDecimalCurrencies.has(code)) return 0;
  return threeDecimalCurrencies.has(code) ? 3 : 2;
}

/** Amount in minor units plus currency: the only way Recoup carries money. */
export interface Money {
  amount: number;
  currency: string;
}

/** Formats minor units for display, e.g. 1999 USD → "$19.99", 500 JPY → "¥500". */
export function formatMoney({ amount, currency }: Money, locale = 'en-US'): string {
  const digits = currencyDecimals(currency);
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
  const digits = currencyDecimals(currency);
  const fraction = (match[2] ?? '').padEnd(digits + 1, '0');
  const units = Number(match[1]) * 10 ** digits + Number(fraction.slice(0, digits) || '0');
  return Number(fraction[digits]) >= 5 ? units + 1 : units;
}

/** Minor units as the decimal in the major unit that platform APIs take (4950 USD → "49.50", 1500 KWD → "1.500"). */
export function majorUnitsOf(amount: number, currency: string): string {
  const digits = currencyDecimals(currency);
  if (digits === 0) return String(amount);
  const unit = 10 ** digits;
  return `${Math.floor(amount / unit)}.${String(amount % unit).padStart(digits, '0')}`;
}
