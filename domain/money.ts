import type { GatewayKind } from './gateway-kinds.js';

/**
 * ISO 4217 codes accepted by Recoup: the active ones (VED of 2021, ZWG of 2024 and XCG of 2025 among them),
 * and ANG and ZWL, which XCG and ZWG replace but which platforms may still bill older subscriptions in.
 */
const codes =
  'AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN BWP BYN BZD CAD CDF CHF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD UYU UZS VED VES VND VUV WST XAF XCD XCG XOF XPF YER ZAR ZMW ZWG ZWL';
export const currencyCodes: ReadonlySet<string> = new Set(codes.split(' '));

/** Currencies whose amounts are whole units (no minor unit): the amount is passed as is. */
const zeroDecimalCurrencies: ReadonlySet<string> = new Set(
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

/** An integer of `decimals` decimals as decimal text (4950, 2 → "49.50"; 1500, 3 → "1.500"; 500, 0 → "500"). */
function decimalText(units: number, decimals: number): string {
  if (decimals === 0) return String(units);
  const unit = 10 ** decimals;
  return `${Math.floor(units / unit)}.${String(units % unit).padStart(decimals, '0')}`;
}

/** Minor units as the decimal in the major unit that platform APIs take (4950 USD → "49.50", 1500 KWD → "1.500"). */
export function majorUnitsOf(amount: number, currency: string): string {
  return decimalText(amount, currencyDecimals(currency));
}

/**
 * How a gateway writes amounts of a currency where it departs from ISO 4217: the decimals of the integer its
 * API takes, and how many of them it can charge (fewer when the last digits must be 0).
 */
interface GatewayUnit {
  decimals: number;
  charged: number;
}

/**
 * Where gateways depart from ISO 4217; every other currency they take in ISO minor units. From each
 * gateway's own table (docs/gateways.md links them):
 * - Stripe, "Supported currencies" (docs.stripe.com/currencies): MGA is zero-decimal; ISK and UGX are sent
 *   with two decimals that must be 00 (5 ISK is 500); BHD, JOD, KWD, OMR and TND keep three decimals, the
 *   last of them 0 (5.120 KWD is 5120; 5.124 cannot be charged).
 * - Adyen, "Currency codes and minor units" (docs.adyen.com/development-resources/currency-codes): CLP and
 *   ISK have 2 decimals, CVE and IDR 0.
 * - PayPal, "Currency codes" (developer.paypal.com/docs/api/reference/currency-codes): HUF, JPY and TWD take
 *   no decimals ("If you pass a decimal amount, an error occurs"); JPY has none in ISO 4217 either.
 */
const gatewayUnits: Partial<Record<GatewayKind, Readonly<Record<string, GatewayUnit>>>> = {
  stripe: {
    ISK: { decimals: 2, charged: 0 },
    UGX: { decimals: 2, charged: 0 },
    MGA: { decimals: 0, charged: 0 },
    ...Object.fromEntries(
      ['BHD', 'JOD', 'KWD', 'OMR', 'TND'].map((code) => [code, { decimals: 3, charged: 2 }]),
    ),
  },
  adyen: {
    CLP: { decimals: 2, charged: 2 },
    ISK: { decimals: 2, charged: 2 },
    CVE: { decimals: 0, charged: 0 },
    IDR: { decimals: 0, charged: 0 },
  },
  paypal: {
    HUF: { decimals: 0, charged: 0 },
    TWD: { decimals: 0, charged: 0 },
  },
};

/** How `gateway` writes `currency`: its own exception, else ISO 4217's decimals. */
function unitAt(currency: string, gateway: GatewayKind): GatewayUnit {
  const code = currency.toUpperCase();
  const own = gatewayUnits[gateway];
  if (own && Object.hasOwn(own, code)) return own[code]!;
  const iso = currencyDecimals(code);
  return { decimals: iso, charged: iso };
}

/** `value` from `from` decimals to `to`; exact only where the digits dropped are 0 (callers check). */
const rescale = (value: number, from: number, to: number) =>
  to >= from ? value * 10 ** (to - from) : value / 10 ** (from - to);

/**
 * ISO minor units as the integer `gateway`'s API takes (5000 ISK → 500000 at Stripe, 100000 MGA → 1000),
 * or null when the gateway cannot charge exactly that amount (5000.50 HUF at PayPal, 5.124 KWD at Stripe):
 * never rounded into a different charge.
 */
export function toGatewayUnits(amount: number, currency: string, gateway: GatewayKind): number | null {
  if (!Number.isSafeInteger(amount) || amount < 0) return null;
  const iso = currencyDecimals(currency);
  const unit = unitAt(currency, gateway);
  const uncharged = iso - unit.charged;
  if (uncharged > 0 && amount % 10 ** uncharged !== 0) return null;
  const value = rescale(amount, iso, unit.decimals);
  return Number.isSafeInteger(value) ? value : null;
}

/** `toGatewayUnits` as the decimal text the gateway takes (500000 HUF → "5000" at PayPal), or null. */
export function toGatewayDecimal(amount: number, currency: string, gateway: GatewayKind): string | null {
  const value = toGatewayUnits(amount, currency, gateway);
  return value === null ? null : decimalText(value, unitAt(currency, gateway).decimals);
}

/**
 * An integer amount `gateway` reports (a Stripe invoice's 500000 ISK) in ISO minor units (5000), or null when
 * ISO 4217 cannot express it exactly (12.50 kr, Stripe's 1250 ISK).
 */
export function fromGatewayUnits(value: number, currency: string, gateway: GatewayKind): number | null {
  if (!Number.isSafeInteger(value) || value < 0) return null;
  const iso = currencyDecimals(currency);
  const unit = unitAt(currency, gateway);
  const extra = unit.decimals - iso;
  if (extra > 0 && value % 10 ** extra !== 0) return null;
  const amount = rescale(value, unit.decimals, iso);
  return Number.isSafeInteger(amount) ? amount : null;
}
