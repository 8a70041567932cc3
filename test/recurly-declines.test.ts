import { describe, expect, it } from 'vitest';
import { declineCodeOfRecurly, recurlyDeclineCodes } from '../activities/connectors/recurly-declines.js';
import { classifyDecline, type DeclineGroup } from '../domain/declines.js';

/** How Recoup treats a Recurly transaction's status code. */
const treatmentOf = (statusCode: string) => {
  const { code, group, retryable } = classifyDecline(declineCodeOfRecurly(statusCode));
  return { code, group, retryable };
};

describe("Recurly's transaction error codes", () => {
  it.each<[string, string, DeclineGroup]>([
    ['fraud_stolen_card', 'stolen_card', 'blocked'],
    ['fraud_generic', 'fraud_suspected', 'blocked'],
    ['fraud_gateway', 'fraudulent', 'blocked'],
    ['fraud_ip_address', 'fraudulent', 'blocked'],
    ['fraud_velocity', 'fraudulent', 'blocked'],
    ['fraud_too_many_attempts', 'fraudulent', 'blocked'],
    ['fraud_risk_check', 'fraudulent', 'blocked'],
    ['fraud_manual_decision', 'fraudulent', 'blocked'],
    ['fraud_advanced_verification', 'fraudulent', 'blocked'],
    ['restricted_card', 'restricted_card', 'blocked'],
    ['restricted_card_chargeback', 'restricted_card', 'blocked'],
    ['cardholder_requested_stop', 'stop_payment_order', 'no_longer_chargeable'],
    ['invalid_account_number', 'invalid_account', 'no_longer_chargeable'],
    ['card_type_not_accepted', 'transaction_not_allowed', 'no_longer_chargeable'],
    ['paypal_invalid_billing_agreement', 'revocation_of_authorization', 'no_longer_chargeable'],
    ['three_d_secure_action_required', 'authentication_required', 'authentication_required'],
    ['payer_authentication_rejected', 'authentication_required', 'authentication_required'],
    ['expired_card', 'expired_card', 'expired'],
    ['fraud_address', 'incorrect_zip', 'invalid_card'],
    ['fraud_address_recurly', 'incorrect_zip', 'invalid_card'],
    ['fraud_security_code', 'incorrect_cvc', 'invalid_card'],
    ['declined_security_code', 'incorrect_cvc', 'invalid_card'],
    ['declined_expiration_date', 'invalid_expiry_year', 'invalid_card'],
    ['declined_card_number', 'invalid_number', 'invalid_card'],
    ['invalid_card_number', 'invalid_number', 'invalid_card'],
    ['invalid_issuer', 'no_such_issuer', 'invalid_card'],
    ['call_issuer_update_cardholder_data', 'new_account_information_available', 'invalid_card'],
    ['declined', 'generic_decline', 'recoverable'],
    ['declined_saveable', 'generic_decline', 'recoverable'],
    ['paypal_declined_use_alternate', 'generic_decline', 'recoverable'],
    ['paypal_primary_declined', 'generic_decline', 'recoverable'],
    ['temporary_hold', 'do_not_honor', 'recoverable'],
    ['try_again', 'try_again_later', 'recoverable'],
    ['insufficient_funds', 'insufficient_funds', 'recoverable'],
    ['call_issuer', 'call_issuer', 'recoverable'],
    ['too_many_attempts', 'card_velocity_exceeded', 'recoverable'],
    ['exceeds_daily_limit', 'card_velocity_exceeded', 'recoverable'],
    ['issuer_unavailable', 'issuer_not_available', 'recoverable'],
    ['gateway_timeout', 'processing_error', 'recoverable'],
    ['gateway_unavailable', 'processing_error', 'recoverable'],
    ['processor_unavailable', 'processing_error', 'recoverable'],
    ['processor_not_available', 'processing_error', 'recoverable'],
    ['too_busy', 'processing_error', 'recoverable'],
    ['duplicate_transaction', 'duplicate_transaction', 'unknown'],
  ])('%s is Recoup’s %s (%s)', (statusCode, code, group) => {
    expect(treatmentOf(statusCode)).toMatchObject({ code, group });
  });

  it('a stolen or fraud-screened card is never retried', () => {
    for (const statusCode of [
      'fraud_stolen_card',
      'fraud_generic',
      'fraud_gateway',
      'cardholder_requested_stop',
    ])
      expect(treatmentOf(statusCode).retryable, statusCode).toBe(false);
  });

  it('every code read as another name lands on a code Recoup knows', () => {
    for (const [statusCode, code] of Object.entries(recurlyDeclineCodes))
      expect(classifyDecline(code), statusCode).toMatchObject({
        code,
        group: expect.not.stringMatching(/^unknown$/),
      });
  });

  it('reads codes in any case, and keeps a code Recoup has no name for (treated as unknown)', () => {
    expect(declineCodeOfRecurly(' Fraud_Stolen_Card ')).toBe('stolen_card');
    expect(treatmentOf('card_not_activated')).toEqual({
      code: 'card_not_activated',
      group: 'unknown',
      retryable: true,
    });
  });
});
