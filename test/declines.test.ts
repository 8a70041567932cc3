import { describe, expect, it } from 'vitest';
import {
  classifyDecline,
  firmestDecline,
  isKnownDeclineCode,
  mayBeUnflaggedAuthentication,
  normalizeDeclineCode,
  type DeclineGroup,
  type RecommendedAction,
} from '../domain/declines.js';
import { RecommendedActionSchema } from '../domain/events.js';

type Row = [
  code: string,
  group: DeclineGroup,
  retryable: boolean,
  allowsFallback: boolean,
  action: RecommendedAction,
  stopsImmediately: boolean,
  visaCategory: number,
];

const table: Row[] = [
  ['insufficient_funds', 'recoverable', true, true, 'retry_later', false, 2],
  ['do_not_honor', 'recoverable', true, true, 'retry_later', false, 4],
  ['call_issuer', 'recoverable', true, true, 'retry_later', false, 4],
  ['try_again_later', 'recoverable', true, true, 'retry_later', false, 2],
  ['card_declined', 'recoverable', true, true, 'retry_later', false, 4],
  ['generic_decline', 'recoverable', true, true, 'retry_later', false, 4],
  ['processing_error', 'recoverable', true, true, 'retry_later', false, 2],
  ['issuer_not_available', 'recoverable', true, true, 'retry_later', false, 2],
  ['withdrawal_count_limit_exceeded', 'recoverable', true, true, 'retry_later', false, 2],
  ['authentication_required', 'authentication_required', false, false, 'request_card_update', true, 3],
  ['fraudulent', 'blocked', false, false, 'manual_review', true, 2],
  ['fraud_suspected', 'blocked', false, false, 'manual_review', true, 2],
  ['stolen_card', 'blocked', false, false, 'manual_review', true, 1],
  ['pickup_card', 'blocked', false, false, 'manual_review', true, 1],
  ['merchant_blacklist', 'blocked', false, false, 'manual_review', true, 4],
  ['lost_card', 'blocked', false, false, 'request_card_update', true, 1],
  ['restricted_card', 'blocked', false, false, 'request_card_update', true, 1],
  ['card_no_longer_chargeable', 'no_longer_chargeable', false, false, 'request_card_update', true, 1],
  ['revocation_of_authorization', 'no_longer_chargeable', false, false, 'request_card_update', true, 1],
  ['stop_payment_order', 'no_longer_chargeable', false, false, 'request_card_update', true, 1],
  ['account_closed', 'no_longer_chargeable', false, false, 'request_card_update', true, 1],
  ['closed_account', 'no_longer_chargeable', false, false, 'request_card_update', true, 1],
  ['revocation_of_all_authorizations', 'no_longer_chargeable', false, false, 'request_card_update', true, 1],
  ['invalid_account', 'no_longer_chargeable', false, false, 'request_card_update', true, 1],
  ['expired_card', 'expired', false, false, 'request_card_update', false, 3],
  ['incorrect_cvc', 'invalid_card', false, true, 'request_card_update', false, 3],
  ['invalid_expiry_year', 'invalid_card', false, true, 'request_card_update', false, 3],
  ['incorrect_number', 'invalid_card', false, true, 'request_card_update', false, 1],
  ['no_such_issuer', 'invalid_card', false, true, 'request_card_update', false, 1],
  ['duplicate_transaction', 'unknown', false, false, 'monitor', false, 4],
  // Stripe's codes known since 2026-11-26 (see the later codes below).
  ['do_not_try_again', 'no_longer_chargeable', false, false, 'request_card_update', true, 1],
  ['not_permitted', 'no_longer_chargeable', false, false, 'request_card_update', true, 1],
  ['service_not_allowed', 'no_longer_chargeable', false, false, 'request_card_update', true, 1],
  ['card_not_supported', 'invalid_card', false, true, 'request_card_update', false, 1],
  ['currency_not_supported', 'invalid_card', false, true, 'request_card_update', false, 1],
  ['pin_try_exceeded', 'invalid_card', false, true, 'request_card_update', false, 3],
  ['invalid_amount', 'invalid_card', false, true, 'manual_review', false, 3],
  ['offline_pin_required', 'authentication_required', false, false, 'request_card_update', true, 3],
  // A gateway's own refusals, Recoup's names: not retried on that payment method, never blocked at intake.
  ['request_refused', 'invalid_card', false, true, 'manual_review', false, 4],
  ['excessive_retry', 'invalid_card', false, true, 'request_card_update', false, 4],
  ['hard_decline', 'invalid_card', false, true, 'request_card_update', false, 1],
  ['something_new_from_the_issuer', 'unknown', true, true, 'monitor', false, 4],
  // Recoup's answers for a billing platform's invoice read before a charge: a payment no longer owed.
  ['subscription_not_past_due', 'no_longer_chargeable', false, false, 'monitor', true, 4],
  ['invoice_not_owed', 'no_longer_chargeable', false, false, 'monitor', true, 4],
  ['invoice_other_currency', 'no_longer_chargeable', false, false, 'monitor', true, 4],
];

describe.each(table)(
  'decline code %s',
  (code, group, retryable, allowsFallback, action, stops, visaCategory) => {
    const info = classifyDecline(code);

    it(`is in the ${group} group and recommends ${action}`, () => {
      expect(info).toMatchObject({ code, group, recommendedAction: action, visaCategory });
    });

    it(`is ${retryable ? '' : 'not '}retried and ${allowsFallback ? 'allows' : 'skips'} fallback tokens`, () => {
      expect(info.retryable).toBe(retryable);
      expect(info.allowsFallback).toBe(allowsFallback);
    });

    it(`${stops ? 'is' : 'is not'} blocked at intake with 403`, () => {
      expect(info.stopsImmediately).toBe(stops);
    });

    it('carries one human sentence as the reason', () => {
      expect(info.reason).toMatch(/^[A-Z].+\.$/);
      expect(RecommendedActionSchema.parse(info.recommendedAction)).toBe(action);
    });
  },
);

describe('a payment no longer owed', () => {
  it.each(['subscription_not_past_due', 'invoice_not_owed', 'invoice_other_currency'])(
    '(%s) is not about the card: the card is not blamed for it',
    (code) => {
      expect(classifyDecline(code).aboutTheCard).toBe(false);
    },
  );
});

describe('hard cardholder-state declines never allow fallback tokens (lost, stolen, fraud, expired)', () => {
  it.each(['lost_card', 'stolen_card', 'fraudulent', 'fraud_suspected', 'expired_card'])('%s', (code) => {
    expect(classifyDecline(code).allowsFallback).toBe(false);
  });
});

describe('fraud signals', () => {
  it.each([
    ['fraudulent', true],
    ['security_violation', true],
    ['lost_card', false],
    ['insufficient_funds', false],
  ])('%s is a fraud signal: %s', (code, fraud) => {
    expect(classifyDecline(code).recommendedAction === 'manual_review').toBe(fraud);
  });
});

describe('normalisation', () => {
  it.each([
    ['  Insufficient_Funds ', 'insufficient_funds'],
    ['Do Not Honor', 'do_not_honor'],
    ['lost-card', 'lost_card'],
    ['EXPIRED CARD', 'expired_card'],
    ['51', 'insufficient_funds'],
    ['05', 'do_not_honor'],
    ['41', 'lost_card'],
    ['N7', 'incorrect_cvc'],
    ['1A', 'authentication_required'],
    ['R1', 'revocation_of_authorization'],
    ['54', 'expired_card'],
    ['62', 'restricted_card'],
    ['2001', 'insufficient_funds'],
    ['2004', 'expired_card'],
    ['2013', 'stolen_card'],
    ['2014', 'fraud_suspected'],
    ['2099', 'authentication_required'],
    ['3000', 'issuer_not_available'],
    ['Not enough balance', 'insufficient_funds'],
    ['Declined Non Generic', 'do_not_honor'],
    ['FRAUD-CANCELLED', 'fraudulent'],
    ['CVC Declined', 'incorrect_cvc'],
    ['Expired Card', 'expired_card'],
  ])('%j reads as %s', (raw, canonical) => {
    expect(normalizeDeclineCode(raw)).toBe(canonical);
    expect(classifyDecline(raw).code).toBe(canonical);
  });

  it('keeps an unknown code as given, normalised', () => {
    expect(classifyDecline(' Brand-New Code ')).toMatchObject({ code: 'brand_new_code', group: 'unknown' });
  });
});

describe('missing codes are treated conservatively as unknown', () => {
  it.each([[null], [undefined], [''], ['   ']])('%j', (code) => {
    const info = classifyDecline(code);
    expect(info).toMatchObject({
      code: 'unknown',
      group: 'unknown',
      retryable: true,
      allowsFallback: true,
      stopsImmediately: false,
      recommendedAction: 'monitor',
      visaCategory: 4,
    });
    expect(info.reason).toMatch(/no decline code/i);
  });
});

describe('a suspected duplicate', () => {
  it('asks the merchant to verify before retrying', () => {
    expect(classifyDecline('duplicate_transaction').reason).toMatch(/duplicate/i);
  });
});

describe('codes known later', () => {
  it('are classified as before (unknown, retried) for a workflow whose version predates them', () => {
    let asked = 0;
    const before = classifyDecline('do_not_try_again', () => {
      asked += 1;
      return false;
    });
    expect(before).toMatchObject({ code: 'do_not_try_again', group: 'unknown', retryable: true });
    expect(asked).toBe(1);
  });

  it('never ask a workflow about a code known from the start', () => {
    expect(
      classifyDecline('stolen_card', () => {
        throw new Error('asked');
      }),
    ).toMatchObject({ group: 'blocked' });
  });

  it('an Object member name is an unknown code, not a table entry', () => {
    expect(classifyDecline('constructor')).toMatchObject({ code: 'constructor', group: 'unknown' });
  });
});

describe('declines a European issuer may give for a payment it wanted authenticated without saying so', () => {
  it.each([
    ['do_not_honor', true],
    ['generic_decline', true],
    ['card_declined', true],
    ['call_issuer', true],
    ['insufficient_funds', false],
    ['try_again_later', false],
    ['duplicate_transaction', false],
    ['expired_card', false],
  ])('%s may be cleared by 3-D Secure: %s', (code, may) => {
    expect(mayBeUnflaggedAuthentication(code)).toBe(may);
  });
});

describe('whether Recoup names a code', () => {
  it.each([
    ['insufficient_funds', true],
    ['2001', true],
    ['do_not_try_again', true],
    ['request_refused', true],
    ['duplicate_transaction', true],
    ['2023', false],
    ['something_new_from_the_issuer', false],
    ['constructor', false],
    [null, false],
  ])('%j: %s', (code, known) => {
    expect(isKnownDeclineCode(code)).toBe(known);
  });
});

describe('the firmest of the codes one decline is given under (a gateway’s, its advice’s, the network’s)', () => {
  const cases: Array<[[string, ...Array<string | null | undefined>], string, string]> = [
    [['generic_decline', 'do_not_try_again'], 'do_not_try_again', 'stopped at once beats retried'],
    [['generic_decline', '43'], '43', 'a network code Recoup reads (43, stolen) beats retried'],
    [['incorrect_cvc', 'expired_card'], 'expired_card', 'no fallback beats not retried'],
    [['generic_decline', null, undefined, '', 'incorrect_cvc'], 'incorrect_cvc', 'absent codes are skipped'],
    [['do_not_honor', '51'], 'do_not_honor', 'as firm: the gateway’s own code stays'],
    [['stolen_card', 'do_not_try_again'], 'stolen_card', 'as firm: the gateway’s own code stays'],
    [['generic_decline', 'N0'], 'generic_decline', 'a code Recoup does not name never wins'],
    [['generic_decline', 'constructor'], 'generic_decline', 'nor an Object member name'],
  ];
  it.each(cases)('%j → %s: %s', ([code, ...others], firmest) => {
    expect(firmestDecline(code, ...others)).toBe(firmest);
  });
});
