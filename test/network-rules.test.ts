import { describe, expect, it } from 'vitest';
import type { GatewayKind, PaymentMethodType } from '../domain/gateway-kinds.js';
import {
  brandFromBin,
  defaultNetworkRules,
  isStopAdvice,
  maxNetworkCap,
  networkDecision,
  NetworkRules,
  parseAdvice,
  underCardNetworkRules,
  type CardBrand,
  type NetworkInput,
} from '../domain/network-rules.js';
import { Settings } from '../domain/settings.js';

/** An asymmetric matcher for a refusal reason naming `text`. */
const mentioning = (text: string): string => expect.stringContaining(text) as string;

const hour = 3_600_000;
const day = 24 * hour;
const now = Date.UTC(2026, 5, 15, 12);

/** `count` attempts, the oldest `spanMs` before now, evenly spaced up to `gapMs` before now. */
function attemptsBefore(count: number, spanMs: number, gapMs = 0): number[] {
  const step = count > 1 ? (spanMs - gapMs) / (count - 1) : 0;
  return Array.from({ length: count }, (_, i) => now - spanMs + i * step);
}

function decide(overrides: Partial<NetworkInput>) {
  return networkDecision({
    brand: 'visa',
    declineCode: 'insufficient_funds',
    advice: null,
    priorAttemptsAt: [],
    lastAttemptAt: null,
    now,
    ...overrides,
  });
}

describe('brand from BIN', () => {
  it.each<[string | null | undefined, CardBrand]>([
    ['424242', 'visa'],
    ['4', 'visa'],
    ['510510', 'mastercard'],
    ['555555', 'mastercard'],
    ['222100', 'mastercard'],
    ['272099', 'mastercard'],
    ['272100', 'unknown'],
    ['222099', 'unknown'],
    ['560000', 'unknown'],
    ['500000', 'unknown'],
    ['378282', 'amex'],
    ['341111', 'amex'],
    ['601111', 'discover'],
    ['644000', 'discover'],
    ['649999', 'discover'],
    ['650000', 'discover'],
    ['643000', 'unknown'],
    [' 4242 42 ', 'visa'],
    ['35', 'unknown'],
    ['abc123', 'unknown'],
    ['', 'unknown'],
    [null, 'unknown'],
    [undefined, 'unknown'],
  ])('%j → %s', (bin, brand) => {
    expect(brandFromBin(bin)).toBe(brand);
  });
});

describe('merchant advice codes', () => {
  it.each([
    ['01', { kind: 'update_account' }],
    ['02', { kind: 'wait', minMs: 72 * hour }],
    ['03', { kind: 'stop' }],
    ['3', { kind: 'stop' }],
    [' 21 ', { kind: 'stop' }],
    ['04', { kind: 'fix_token' }],
    ['24', { kind: 'wait', minMs: hour }],
    ['25', { kind: 'wait', minMs: day }],
    ['26', { kind: 'wait', minMs: 2 * day }],
    ['27', { kind: 'wait', minMs: 4 * day }],
    ['28', { kind: 'wait', minMs: 6 * day }],
    ['29', { kind: 'wait', minMs: 8 * day }],
    ['30', { kind: 'wait', minMs: 10 * day }],
    ['31', null],
    ['abc', null],
    ['', null],
    [null, null],
  ])('%j → %j', (code, advice) => {
    expect(parseAdvice(code)).toEqual(advice);
  });
});

describe('Visa category 1 codes are never retried', () => {
  it.each([
    'lost_card',
    'stolen_card',
    'pickup_card',
    'restricted_card',
    'invalid_account',
    'account_closed',
    'no_such_issuer',
    'revocation_of_authorization',
    'stop_payment_order',
    'transaction_not_allowed',
    '41',
  ])('%s', (declineCode) => {
    expect(decide({ declineCode })).toEqual({
      allowed: false,
      reason: mentioning('Visa'),
      retryAt: null,
    });
    expect(decide({ brand: 'unknown', declineCode })).toMatchObject({ allowed: false, retryAt: null });
  });

  it('other brands leave these codes to the engine', () => {
    expect(decide({ brand: 'amex', declineCode: 'restricted_card' })).toEqual({ allowed: true });
  });
});

describe('Visa: at most 15 attempts per card in 30 days', () => {
  it('allows the 15th attempt', () => {
    expect(decide({ priorAttemptsAt: attemptsBefore(14, 20 * day) })).toEqual({ allowed: true });
  });

  it('refuses the 16th until the oldest attempt ages out', () => {
    const prior = attemptsBefore(15, 20 * day);
    const decision = decide({ priorAttemptsAt: prior });
    expect(decision).toEqual({
      allowed: false,
      reason: mentioning('15'),
      retryAt: prior[0]! + 30 * day,
    });
  });

  it('allows it again once the oldest attempt is 30 days old', () => {
    const prior = attemptsBefore(15, 20 * day);
    expect(decide({ priorAttemptsAt: prior, now: prior[0]! + 30 * day })).toEqual({ allowed: true });
  });

  it('ignores attempts older than 30 days', () => {
    expect(decide({ priorAttemptsAt: attemptsBefore(40, 90 * day, 31 * day) })).toEqual({ allowed: true });
  });

  it('follows configured rules (Visa raised the cap to 20 in May 2025)', () => {
    const rules = NetworkRules.parse({ ...defaultNetworkRules, visa: { maxPer30Days: 20 } });
    expect(decide({ priorAttemptsAt: attemptsBefore(15, 20 * day), rules })).toEqual({ allowed: true });
    expect(decide({ priorAttemptsAt: attemptsBefore(20, 20 * day), rules })).toMatchObject({
      allowed: false,
    });
  });
});

describe('Mastercard caps', () => {
  const mc = { brand: 'mastercard' as const, declineCode: 'do_not_honor' };

  it('allows the 10th attempt in 24 hours', () => {
    expect(decide({ ...mc, priorAttemptsAt: attemptsBefore(9, 20 * hour) })).toEqual({ allowed: true });
  });

  it('refuses the 11th attempt in 24 hours until the oldest is a day old', () => {
    const prior = attemptsBefore(10, 20 * hour);
    expect(decide({ ...mc, priorAttemptsAt: prior })).toEqual({
      allowed: false,
      reason: mentioning('24 hours'),
      retryAt: prior[0]! + day,
    });
  });

  it('a card of unknown brand is held to the 24-hour cap too: it may be a Mastercard', () => {
    const prior = attemptsBefore(10, 20 * hour);
    expect(decide({ brand: 'unknown', priorAttemptsAt: attemptsBefore(9, 20 * hour) })).toEqual({
      allowed: true,
    });
    expect(decide({ brand: 'unknown', declineCode: 'do_not_honor', priorAttemptsAt: prior })).toEqual({
      allowed: false,
      reason: mentioning('24 hours'),
      retryAt: prior[0]! + day,
    });
  });

  it('refuses the 36th attempt in 30 days until enough age out', () => {
    const prior = attemptsBefore(35, 29 * day, 2 * day);
    const decision = decide({ ...mc, priorAttemptsAt: prior });
    expect(decision).toEqual({
      allowed: false,
      reason: mentioning('35'),
      retryAt: prior[0]! + 30 * day,
    });
    expect(decide({ ...mc, priorAttemptsAt: prior.slice(1) })).toEqual({ allowed: true });
  });

  it('reports the later of two binding caps', () => {
    // 35 in 30 days and 10 of them in the last day: both windows must open.
    const prior = [...attemptsBefore(25, 29 * day, 5 * day), ...attemptsBefore(10, 20 * hour)];
    const decision = decide({ ...mc, priorAttemptsAt: prior });
    expect(decision).toMatchObject({
      allowed: false,
      retryAt: Math.max(prior[0]! + 30 * day, prior[25]! + day),
    });
  });
});

describe('Mastercard advice codes', () => {
  it.each(['03', '21'])('never retries after advice %s', (advice) => {
    expect(decide({ brand: 'mastercard', advice })).toEqual({
      allowed: false,
      reason: mentioning(advice),
      retryAt: null,
    });
  });

  it.each([
    ['02', 72 * hour],
    ['24', hour],
    ['25', day],
    ['26', 2 * day],
    ['27', 4 * day],
    ['28', 6 * day],
    ['29', 8 * day],
    ['30', 10 * day],
  ])('advice %s waits %i ms after the last attempt', (advice, wait) => {
    const lastAttemptAt = now - 30 * 60_000;
    const input = { brand: 'mastercard' as const, advice, lastAttemptAt, priorAttemptsAt: [lastAttemptAt] };
    expect(decide(input)).toMatchObject({ allowed: false, retryAt: lastAttemptAt + wait });
    expect(decide({ ...input, now: lastAttemptAt + wait })).toEqual({ allowed: true });
  });

  it('counts the wait from the latest prior attempt when no decline time is given', () => {
    const prior = [now - 5 * day, now - 2 * hour];
    expect(decide({ brand: 'mastercard', advice: '25', priorAttemptsAt: prior })).toMatchObject({
      retryAt: now - 2 * hour + day,
    });
  });

  it('treats an advice code on a card of unknown brand as Mastercard', () => {
    expect(decide({ brand: 'unknown', advice: '03' })).toMatchObject({ allowed: false, retryAt: null });
    const prior = attemptsBefore(10, 20 * hour);
    expect(decide({ brand: 'unknown', advice: '01', priorAttemptsAt: prior })).toMatchObject({
      allowed: false,
    });
  });

  it('holds a card of unknown brand with an advice code to Mastercard’s 35 in 30 days, not the 15 of other brands', () => {
    const prior = attemptsBefore(20, 20 * day, 2 * day);
    const unknownCard = { brand: 'unknown' as const, declineCode: 'do_not_honor', priorAttemptsAt: prior };
    expect(decide({ ...unknownCard, advice: '24' })).toEqual({ allowed: true });
    expect(decide({ ...unknownCard, advice: null })).toMatchObject({ allowed: false });
  });

  it('leaves update_account and fix_token advice to the planner', () => {
    expect(decide({ brand: 'mastercard', advice: '01' })).toEqual({ allowed: true });
    expect(decide({ brand: 'mastercard', advice: '04' })).toEqual({ allowed: true });
  });
});

describe('the earliest allowed attempt', () => {
  it('is now when allowed, never for a stop, and the cap release otherwise', () => {
    expect(decide({ priorAttemptsAt: [] })).toEqual({ allowed: true });
    expect(decide({ declineCode: 'stolen_card', priorAttemptsAt: [] })).toMatchObject({
      allowed: false,
      retryAt: null,
    });
    const prior = attemptsBefore(15, 10 * day);
    expect(decide({ priorAttemptsAt: prior })).toMatchObject({
      allowed: false,
      retryAt: prior[0]! + 30 * day,
    });
  });
});

describe('Amex, Discover and unknown brands assume 15 per 30 days', () => {
  it.each<CardBrand>(['amex', 'discover', 'unknown'])('%s', (brand) => {
    expect(decide({ brand, priorAttemptsAt: attemptsBefore(14, 10 * day) })).toEqual({ allowed: true });
    expect(decide({ brand, priorAttemptsAt: attemptsBefore(15, 10 * day) })).toMatchObject({
      allowed: false,
    });
  });
});

describe('stop advice', () => {
  it.each([
    ['03', true],
    [' 21 ', true],
    ['3', true],
    ['02', false],
    ['24', false],
    [null, false],
  ])('%j forbids the card for good: %s', (code, stops) => {
    expect(isStopAdvice(code)).toBe(stops);
  });
});

describe('which charges the card networks govern', () => {
  it.each<[GatewayKind, PaymentMethodType, boolean]>([
    ['test', 'card', true],
    ['stripe', 'card', true],
    ['adyen', 'apple_pay', true],
    ['braintree', 'google_pay', true],
    ['braintree', 'paypal', false],
    ['braintree', 'venmo', false],
    ['test', 'paypal', false],
    ['gocardless', 'card', false],
    ['paypal', 'card', false],
    ['paypal', 'paypal', false],
  ])('%s gateway, %s payment: governed %s', (kind, type, governed) => {
    expect(underCardNetworkRules(kind, type)).toBe(governed);
  });
});

describe('the networkRules account setting', () => {
  const settingsWith = (networkRules: unknown) =>
    Settings.safeParse({ webhookUrl: 'https://merchant.example/hooks', networkRules });

  it("defaults to decisions.md's caps", () => {
    expect(Settings.parse({ webhookUrl: 'https://merchant.example/hooks' }).networkRules).toEqual(
      defaultNetworkRules,
    );
    expect(defaultNetworkRules).toEqual({
      visa: { maxPer30Days: 15 },
      mastercard: { maxPer24h: 10, maxPer30Days: 35 },
      amex: { maxPer30Days: 15 },
      discover: { maxPer30Days: 15 },
      unknown: { maxPer30Days: 15 },
    });
  });

  it('keeps the default of every brand and cap left out', () => {
    expect(settingsWith({ mastercard: { maxPer24h: 2 } }).data?.networkRules).toEqual({
      ...defaultNetworkRules,
      mastercard: { maxPer24h: 2, maxPer30Days: 35 },
    });
  });

  it.each([
    ['a cap above what the card budget counts', { visa: { maxPer30Days: maxNetworkCap + 1 } }, 'visa'],
    ['a cap of 0', { mastercard: { maxPer24h: 0 } }, 'mastercard'],
    ['a fractional cap', { amex: { maxPer30Days: 1.5 } }, 'amex'],
    ['an unknown brand', { jcb: { maxPer30Days: 10 } }, 'jcb'],
    ['an unknown window', { discover: { maxPer7Days: 10 } }, 'maxPer7Days'],
  ])('refuses %s', (_, rules, named) => {
    const parsed = settingsWith(rules);
    expect(parsed.success).toBe(false);
    expect(JSON.stringify(parsed.error?.issues)).toContain(named);
  });

  it(`allows caps up to ${maxNetworkCap}`, () => {
    expect(settingsWith({ visa: { maxPer30Days: maxNetworkCap } }).success).toBe(true);
  });
});
