import { z } from 'zod';
import { classifyDecline } from './declines.js';
import type { GatewayKind, PaymentMethodType } from './gateway-kinds.js';

const hourMs = 3_600_000;
const dayMs = 24 * hourMs;

export type CardBrand = 'visa' | 'mastercard' | 'amex' | 'discover' | 'unknown';

/** The card brand from the first digits of the card number (any length from 1 to 8 digits is read). */
export function brandFromBin(bin: string | null | undefined): CardBrand {
  const digits = (bin ?? '').replace(/[\s-]/g, '');
  if (!/^\d+$/.test(digits)) return 'unknown';
  const prefix = (length: number) => (digits.length >= length ? Number(digits.slice(0, length)) : NaN);
  const p2 = prefix(2);
  const p3 = prefix(3);
  const p4 = prefix(4);
  if (digits.startsWith('4')) return 'visa';
  if (p2 >= 51 && p2 <= 55) return 'mastercard';
  if (p4 >= 2221 && p4 <= 2720) return 'mastercard';
  if (p2 === 34 || p2 === 37) return 'amex';
  if (p4 === 6011 || (p3 >= 644 && p3 <= 649) || p2 === 65) return 'discover';
  return 'unknown';
}

/** What a Mastercard merchant advice code (MAC) tells the merchant to do. */
export type Advice =
  { kind: 'stop' } | { kind: 'update_account' } | { kind: 'wait'; minMs: number } | { kind: 'fix_token' };

const adviceCodes: Record<string, Advice> = {
  '01': { kind: 'update_account' },
  // Mastercard only says "try later"; 72 hours is the acquirer guidance quoted in research §5.
  '02': { kind: 'wait', minMs: 72 * hourMs },
  '03': { kind: 'stop' },
  '04': { kind: 'fix_token' },
  '21': { kind: 'stop' },
  '24': { kind: 'wait', minMs: hourMs },
  '25': { kind: 'wait', minMs: dayMs },
  '26': { kind: 'wait', minMs: 2 * dayMs },
  '27': { kind: 'wait', minMs: 4 * dayMs },
  '28': { kind: 'wait', minMs: 6 * dayMs },
  '29': { kind: 'wait', minMs: 8 * dayMs },
  '30': { kind: 'wait', minMs: 10 * dayMs },
};

/** Parses a Mastercard merchant advice code ("3", "03" and " 03 " are the same); null when absent or unknown. */
export function parseAdvice(code: string | null | undefined): Advice | null {
  const trimmed = (code ?? '').trim();
  if (!/^\d{1,2}$/.test(trimmed)) return null;
  return adviceCodes[trimmed.padStart(2, '0')] ?? null;
}

/** Whether a merchant advice code forbids any further attempt on the card (03 or 21), in any recovery. */
export function isStopAdvice(code: string | null | undefined): code is string {
  return parseAdvice(code)?.kind === 'stop';
}

/**
 * Whether the card networks' retry rules govern a charge: not a GoCardless mandate, nor a PayPal or Venmo
 * account (through PayPal itself or a wallet-capable gateway such as Braintree), which have no card brand.
 */
export function underCardNetworkRules(kind: GatewayKind, paymentMethodType: PaymentMethodType): boolean {
  return (
    kind !== 'gocardless' &&
    kind !== 'paypal' &&
    paymentMethodType !== 'paypal' &&
    paymentMethodType !== 'venmo'
  );
}

/**
 * The largest cap a rule may set: the card budget store reads back this many of a card's claims in a
 * window, which is exactly enough to judge any cap up to it.
 */
export const maxNetworkCap = 64;

/** The caps of decisions.md; Amex, Discover and unknown brands have no published cap, so Visa's is assumed. */
const defaults = {
  // Visa raised the cap to 20 from May 2025 (research §5); Recoup keeps the stricter 15 decisions.md settles on.
  visa: { maxPer30Days: 15 },
  mastercard: { maxPer24h: 10, maxPer30Days: 35 },
  amex: { maxPer30Days: 15 },
  discover: { maxPer30Days: 15 },
  unknown: { maxPer30Days: 15 },
} as const;

const cap = (fallback: number) => z.int().min(1).max(maxNetworkCap).default(fallback);
const monthly = (brand: 'visa' | 'amex' | 'discover' | 'unknown') =>
  z
    .object({ maxPer30Days: cap(defaults[brand].maxPer30Days) })
    .strict()
    .default(defaults[brand]);

/**
 * Per-brand attempt caps per card, counted over rolling windows across every recovery of that card (an
 * account setting); a brand or cap left out keeps its default.
 */
export const NetworkRules = z
  .object({
    visa: monthly('visa'),
    mastercard: z
      .object({
        maxPer24h: cap(defaults.mastercard.maxPer24h),
        maxPer30Days: cap(defaults.mastercard.maxPer30Days),
      })
      .strict()
      .default(defaults.mastercard),
    amex: monthly('amex'),
    discover: monthly('discover'),
    unknown: monthly('unknown'),
  })
  .strict();
export type NetworkRules = z.infer<typeof NetworkRules>;

/** The rules of an account that sets none: the caps of decisions.md. */
export const defaultNetworkRules: NetworkRules = NetworkRules.parse({});

export interface NetworkInput {
  brand: CardBrand;
  declineCode: string | null;
  /** Mastercard merchant advice code of the latest decline, if any. */
  advice: string | null;
  /** Epoch ms of earlier attempts on this card, in any recovery. */
  priorAttemptsAt: number[];
  /** When the decline carrying `advice` happened; null means the latest prior attempt, or else `now`. */
  lastAttemptAt: number | null;
  /**
   * The latest wait advice (02, 24–30) the card got in any recovery, and when: its wait holds for every
   * recovery of the card, as the advice is the issuer's about the card.
   */
  cardWait?: { advice: string; at: number } | null;
  now: number;
  rules?: NetworkRules;
}

/** Allowed now, or refused with the earliest time an attempt would be allowed (null = never). */
export type NetworkDecision = { allowed: true } | { allowed: false; reason: string; retryAt: number | null };

const brandLabels: Record<CardBrand, string> = {
  visa: 'Visa rules',
  mastercard: 'Mastercard rules',
  amex: 'Amex rules (assumed)',
  discover: 'Discover rules (assumed)',
  unknown: 'Rules for cards of unknown brand',
};

interface Limit {
  reason: string;
  /** Earliest time this constraint is met; every constraint only loosens as time passes. */
  metAt: number;
}

/** The rolling-window cap: once `limit` attempts fall in the window, met when the oldest needed ages out. */
function capLimit(attempts: number[], limit: number, windowMs: number, now: number, brand: CardBrand): Limit {
  const inWindow = attempts.filter((at) => at > now - windowMs).sort((a, b) => a - b);
  const agesOut = inWindow.length >= limit ? inWindow[inWindow.length - limit]! : now - windowMs;
  const window = windowMs === dayMs ? '24 hours' : `${windowMs / dayMs} days`;
  return {
    reason: `${brandLabels[brand]} allow at most ${limit} attempts per card in ${window}`,
    metAt: agesOut + windowMs,
  };
}

/** Mastercard's advised wait of `minMs` after the decline at `anchor`. */
const waitLimit = (minMs: number, code: string | undefined, anchor: number): Limit => ({
  reason: `Mastercard advised waiting ${minMs / hourMs} h (advice code ${code})`,
  metAt: anchor + minMs,
});

/**
 * Whether the card networks allow another attempt on this card now. An advice code implies Mastercard even
 * when the BIN was not given; an unknown brand gets Visa's "never" category and Mastercard's 24-hour cap,
 * since the card may be either.
 */
export function networkDecision(input: NetworkInput): NetworkDecision {
  const rules = input.rules ?? defaultNetworkRules;
  const { now, priorAttemptsAt } = input;
  const advice = parseAdvice(input.advice);
  const adviceCode = input.advice?.trim();
  const brand = input.brand === 'unknown' && advice ? 'mastercard' : input.brand;
  const decline = classifyDecline(input.declineCode);

  if ((brand === 'visa' || brand === 'unknown') && decline.visaCategory === 1)
    return {
      allowed: false,
      reason: `Visa forbids any retry after decline code ${decline.code}`,
      retryAt: null,
    };
  if (advice?.kind === 'stop')
    return {
      allowed: false,
      reason: `Mastercard advised never to retry (advice code ${adviceCode})`,
      retryAt: null,
    };

  const limits = [capLimit(priorAttemptsAt, rules[brand].maxPer30Days, 30 * dayMs, now, brand)];
  // A card of unknown brand (a fallback or new card, no BIN given) may be a Mastercard: its 24-hour cap holds.
  if (brand === 'mastercard' || brand === 'unknown')
    limits.push(capLimit(priorAttemptsAt, rules.mastercard.maxPer24h, dayMs, now, brand));
  if (advice?.kind === 'wait') {
    const anchor = input.lastAttemptAt ?? (priorAttemptsAt.length ? Math.max(...priorAttemptsAt) : now);
    limits.push(waitLimit(advice.minMs, adviceCode, anchor));
  }
  const cardWait = input.cardWait && parseAdvice(input.cardWait.advice);
  if (input.cardWait && cardWait?.kind === 'wait')
    limits.push(waitLimit(cardWait.minMs, input.cardWait.advice.trim(), input.cardWait.at));

  const unmet = limits.filter((l) => l.metAt > now);
  if (unmet.length === 0) return { allowed: true };
  return {
    allowed: false,
    // (The card's wait is often the recovery's own advice again: said once.)
    reason: [...new Set(unmet.map((l) => l.reason))].join('; '),
    retryAt: Math.max(...unmet.map((l) => l.metAt)),
  };
}
