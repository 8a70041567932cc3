/**
 * Recurly's transaction error codes (a declined transaction's `status_code`: the `ErrorCodeEnum` of Recurly's
 * OpenAPI document, explained in its "API transaction errors" reference) that name a decline Recoup knows
 * by another name. Codes both name alike (insufficient_funds, call_issuer, expired_card, restricted_card,
 * duplicate_transaction) and codes Recoup has no name for (card_not_activated, lifecycle_decline,
 * declined_missing_data, …) are kept as they are; the latter are then treated conservatively as unknown.
 */
export const recurlyDeclineCodes: Readonly<Record<string, string>> = {
  // Soft declines: a later retry may succeed.
  declined: 'generic_decline',
  declined_saveable: 'generic_decline',
  temporary_hold: 'do_not_honor',
  try_again: 'try_again_later',
  too_many_attempts: 'card_velocity_exceeded',
  exceeds_daily_limit: 'card_velocity_exceeded',
  issuer_unavailable: 'issuer_not_available',
  // Communication: the gateway or its processor did not answer.
  gateway_timeout: 'processing_error',
  gateway_unavailable: 'processing_error',
  processor_unavailable: 'processing_error',
  processor_not_available: 'processing_error',
  too_busy: 'processing_error',
  // Hard declines: the card (or its data on file) will not be accepted again.
  cardholder_requested_stop: 'stop_payment_order',
  call_issuer_update_cardholder_data: 'new_account_information_available',
  declined_card_number: 'invalid_number',
  invalid_card_number: 'invalid_number',
  invalid_account_number: 'invalid_account',
  invalid_issuer: 'no_such_issuer',
  declined_security_code: 'incorrect_cvc',
  // Recoup's two expiry-date codes carry the same policy; Braintree's "invalid expiration date" is read so too.
  declined_expiration_date: 'invalid_expiry_year',
  restricted_card_chargeback: 'restricted_card',
  card_type_not_accepted: 'transaction_not_allowed',
  three_d_secure_action_required: 'authentication_required',
  payer_authentication_rejected: 'authentication_required',
  paypal_invalid_billing_agreement: 'revocation_of_authorization',
  paypal_declined_use_alternate: 'generic_decline',
  paypal_primary_declined: 'generic_decline',
  // Fraud: the issuer's report of a lost or stolen card, the address and security-code checks (read as the
  // data on file being wrong, as for Adyen), and the gateway's or Recurly's fraud screens.
  fraud_stolen_card: 'stolen_card',
  fraud_address: 'incorrect_zip',
  fraud_address_recurly: 'incorrect_zip',
  fraud_security_code: 'incorrect_cvc',
  fraud_generic: 'fraud_suspected',
  fraud_gateway: 'fraudulent',
  fraud_ip_address: 'fraudulent',
  fraud_velocity: 'fraudulent',
  fraud_too_many_attempts: 'fraudulent',
  fraud_risk_check: 'fraudulent',
  fraud_manual_decision: 'fraudulent',
  fraud_advanced_verification: 'fraudulent',
};

/** Recoup's decline code for a Recurly transaction's status code (any case). */
export function declineCodeOfRecurly(statusCode: string): string {
  const code = statusCode.trim().toLowerCase();
  return recurlyDeclineCodes[code] ?? code;
}
