import { describe, expect, it } from 'vitest';
import type { GatewayKind } from '../domain/gateway-kinds.js';
import { planNextAttempt } from '../domain/plan.js';
import { recoveryRequestFor } from '../domain/recovery-request.js';
import { planFacts } from './support/plan-facts.js';

// Spec rules pinned at the level of the pure functions that carry them: the token shape of each gateway
// kind (spec, "Token shapes by kind of gateway") and the `ai.score` of the plan (decisions, "Execute").

const hour = 3_600_000;
const day = 24 * hour;

/** The execute body's validation for an account whose primary gateway is of `kind`: the fields it refuses. */
function refusedFields(kind: GatewayKind, body: Record<string, unknown>): string[] {
  const parsed = recoveryRequestFor(kind).safeParse({ amount: 1000, ...body });
  return parsed.success ? [] : parsed.error.issues.map((i) => i.path.join('.'));
}

describe('token shapes by kind of gateway (spec table)', () => {
  // [kind, tokens in the spec's shape, tokens that are not]
  const table: Array<[GatewayKind, string, string[], string[]]> = [
    [
      'adyen',
      '<merchantAccount>|<storedPaymentMethodId>|<shopperReference>',
      ['AcmeECOM|8415718415172200|shopper-42', 'Shop_EU|M5N7TQ4TG5PFWR50|cust_9'],
      [
        'tok_visa',
        'AcmeECOM|8415718415172200', // no shopperReference
        '8415718415172200', // the stored payment method id alone
        'AcmeECOM|8415718415172200|shopper-42|extra',
        '|8415718415172200|shopper-42',
        'AcmeECOM||shopper-42',
        'AcmeECOM|8415718415172200|',
      ],
    ],
    [
      'braintree',
      '<paymentMethodToken>|<customerId>',
      ['bt_tok_123|cust_42', 'f8k2m9|8731004'],
      [
        'tok_visa',
        'f8k2m9', // the vault token without its customer
        'f8k2m9|8731004|extra',
        '|8731004',
        'f8k2m9|',
      ],
    ],
    [
      'gocardless',
      '<mandateId>',
      ['MD000123ABC', 'MD01HZXYZ7Q9'],
      [
        'tok_visa',
        'PM000123ABC', // a payment id, not a mandate
        'CU000123ABC', // a customer id
        'MD000123ABC|CU000123ABC',
        'MD',
      ],
    ],
    [
      'paypal',
      'billing-agreement|<BA-token> or reference|<previous-payment-id>',
      ['billing-agreement|B-7AB12345CD678901E', 'reference|9XW12345AB678901C'],
      [
        'tok_visa',
        'B-7AB12345CD678901E', // the agreement without its prefix
        '9XW12345AB678901C', // the payment id without its prefix
        'billing-agreement|',
        'reference|',
        'agreement|B-7AB12345CD678901E',
        'billing-agreement|B-7AB12345CD678901E|extra',
      ],
    ],
  ];

  describe.each(table)('%s: %s', (kind, _shape, accepted, refused) => {
    it.each(accepted)('accepts %s as the token and as a fallback token', (token) => {
      expect(refusedFields(kind, { paymentMethodToken: token })).toEqual([]);
      expect(
        refusedFields(kind, { paymentMethodToken: token, fallbackPaymentMethodTokens: [token] }),
      ).toEqual([]);
    });

    it.each(refused)('refuses %s, naming the field and the expected shape', (token) => {
      const parsed = recoveryRequestFor(kind).safeParse({ amount: 1000, paymentMethodToken: token });
      expect(parsed.success).toBe(false);
      expect(parsed.error?.issues).toEqual([
        expect.objectContaining({
          path: ['paymentMethodToken'],
          message: expect.stringContaining(`a ${kind} gateway token`) as string,
        }),
      ]);
      // A fallback token in the wrong shape is named by its position.
      expect(
        refusedFields(kind, {
          paymentMethodToken: accepted[0],
          fallbackPaymentMethodTokens: [accepted[1], token],
        }),
      ).toEqual(['fallbackPaymentMethodTokens.1']);
    });
  });
});

describe('ai.score: predicted success probability × 100, one decimal (decisions)', () => {
  const now = Date.UTC(2026, 2, 12, 10);

  it('is 45.6 for a technical failure three days old retried at once (0.5 × 0.97³ = 0.456…)', () => {
    // The static prior for a technical failure is 0.5 and each day since the failure keeps 0.97 of the
    // chance; its hour, weekday, day and gateway lifts are all 1 with no learned outcomes, and three days on
    // there is no same-day penalty. A trial conversion (critical) is attempted at once: p = 0.4563365.
    const facts = planFacts(now, 'try_again_later', {
      failedAt: now - 3 * day,
      attempts: [{ at: now - 3 * day, gateway: 'main', token: 'tok_a', code: 'try_again_later' }],
      critical: true,
    });
    const plan = planNextAttempt(facts);
    expect(plan).toMatchObject({ kind: 'attempt', at: now });
    // Not 0.46 (a probability), not 46 (whole percent), not 45.63 (two decimals).
    expect(plan.prediction.score).toBe(45.6);
    expect(plan.prediction.reasoning).toContain('46% predicted success');
  });

  it('has exactly one decimal and agrees with the percent its sentence gives, whatever the plan', () => {
    const codes = ['insufficient_funds', 'do_not_honor', 'try_again_later', 'generic_decline', 'odd_code'];
    let seen = 0;
    for (const code of codes)
      for (const hoursAgo of [0, 5, 30, 100])
        for (const critical of [false, true]) {
          const facts = planFacts(now, code, {
            failedAt: now - hoursAgo * hour,
            attempts: [{ at: now - hoursAgo * hour, gateway: 'main', token: 'tok_a', code }],
            critical,
            riskSkipThreshold: 100,
          });
          const plan = planNextAttempt(facts);
          const { score, reasoning } = plan.prediction;
          expect(score).toBeGreaterThanOrEqual(0);
          expect(score).toBeLessThanOrEqual(100);
          expect(Number.isInteger(score * 10)).toBe(true);
          const percent = /(\d+)% predicted success/.exec(reasoning)?.[1];
          if (plan.kind === 'attempt' && percent !== undefined) {
            // The sentence rounds the same probability to a whole percent.
            expect(Math.abs(score - Number(percent))).toBeLessThanOrEqual(0.5 + 1e-9);
            seen += 1;
          }
        }
    // Most of these plans are attempts with a sentence to compare against.
    expect(seen).toBeGreaterThan(20);
  });
});
