/**
 * What the merchant should do after a recovery that did not succeed (the spec's four values). No zod
 * here: the workflows import this module, and every workflow would construct the schemas again.
 */
export const recommendedActions = ['request_card_update', 'retry_later', 'manual_review', 'monitor'] as const;
export type RecommendedAction = (typeof recommendedActions)[number];

export const declineGroups = [
  'recoverable',
  'unknown',
  'authentication_required',
  'blocked',
  'no_longer_chargeable',
  'expired',
  'invalid_card',
] as const;
export type DeclineGroup = (typeof declineGroups)[number];

/** Visa's retry categories: 1 never retry, 2 retry later, 3 fix the data first, 4 anything else. */
export type VisaCategory = 1 | 2 | 3 | 4;

/** Everything the engine needs to know about one decline code. */
export interface DeclineInfo {
  /** The canonical code: normalised, with ISO 8583 response codes translated to their names. */
  code: string;
  group: DeclineGroup;
  /** May the engine try the same card again automatically. */
  retryable: boolean;
  /** May fallback tokens be tried; false for hard cardholder-state declines (lost, stolen, fraud, expired). */
  allowsFallback: boolean;
  /** Blocked at intake: 403 and a recovery.blocked webhook, no attempt at all. */
  stopsImmediately: boolean;
  recommendedAction: RecommendedAction;
  /** One human sentence, used as recommendedActionReason. */
  reason: string;
  visaCategory: VisaCategory;
  /**
   * The code a blocked answer (403) and recovery.blocked name: the spec's `card_no_longer_chargeable` for
   * every decline of a card that can no longer be charged, else the code itself.
   */
  blockedAs: string;
  /**
   * Whether the answer is about the card, so that a card it stops is remembered as blocked for the risk
   * screen of the card's later recoveries: false for a payment that is no longer owed.
   */
  aboutTheCard: boolean;
}

type GroupPolicy = Omit<DeclineInfo, 'code' | 'group' | 'visaCategory' | 'blockedAs' | 'aboutTheCard'> & {
  /** A name the group's codes are blocked under (null: their own). */
  blockedAs: string | null;
  /** Absent: the answer is about the card. */
  aboutTheCard?: false;
};

const groupPolicies: Record<DeclineGroup, GroupPolicy> = {
  recoverable: {
    retryable: true,
    allowsFallback: true,
    stopsImmediately: false,
    recommendedAction: 'retry_later',
    reason: 'The decline is soft or temporary, so a later retry or a card update may succeed.',
    blockedAs: null,
  },
  unknown: {
    retryable: true,
    allowsFallback: true,
    stopsImmediately: false,
    recommendedAction: 'monitor',
    reason: 'The decline reason is not one Recoup recognises, so recovery was attempted conservatively.',
    blockedAs: null,
  },
  authentication_required: {
    retryable: false,
    allowsFallback: false,
    stopsImmediately: true,
    recommendedAction: 'request_card_update',
    reason: 'The issuer requires the customer to authenticate this payment; ask them to re-confirm the card.',
    blockedAs: null,
  },
  blocked: {
    retryable: false,
    allowsFallback: false,
    stopsImmediately: true,
    recommendedAction: 'manual_review',
    reason: 'The issuer flagged the card for fraud; do not retry and review the account.',
    blockedAs: null,
  },
  no_longer_chargeable: {
    retryable: false,
    allowsFallback: false,
    stopsImmediately: true,
    recommendedAction: 'request_card_update',
    reason: 'The card can no longer be charged for this payment; ask the customer for a new payment method.',
    blockedAs: 'card_no_longer_chargeable',
  },
  expired: {
    retryable: false,
    allowsFallback: false,
    stopsImmediately: false,
    recommendedAction: 'request_card_update',
    reason: 'The card has expired; ask the customer to update it.',
    blockedAs: null,
  },
  invalid_card: {
    retryable: false,
    allowsFallback: true,
    stopsImmediately: false,
    recommendedAction: 'request_card_update',
    reason: 'The card details on file are invalid or outdated; ask the customer to update them.',
    blockedAs: null,
  },
};

type CodeEntry = [group: DeclineGroup, visaCategory: VisaCategory, overrides?: Partial<GroupPolicy>];

const newCardNeeded: Partial<GroupPolicy> = {
  recommendedAction: 'request_card_update',
  reason: 'The issuer will not accept this card any more; ask the customer for a new card.',
};
const nothingOwed: Partial<GroupPolicy> = {
  // Not a card that cannot be charged: a payment no longer owed.
  blockedAs: null,
  aboutTheCard: false,
  recommendedAction: 'monitor',
  reason:
    'The subscription no longer owes this payment (collected or cancelled on the billing platform); nothing was charged.',
};
const suspectedDuplicate: Partial<GroupPolicy> = {
  // The first charge may have gone through: charging again (or charging a fallback card) risks a double charge.
  retryable: false,
  allowsFallback: false,
  reason:
    'The issuer reported a suspected duplicate; verify whether the payment already succeeded before retrying.',
};

/**
 * A gateway's own refusal of the charge as it was sent (no issuer saw it): the same request is refused again,
 * so the payment method is not retried for it; another gateway or payment method may still take it.
 */
const refusedByGateway: Partial<GroupPolicy> = {
  recommendedAction: 'manual_review',
  reason:
    "The gateway refused the charge as it was sent (a currency, an amount or a setting it does not take), so a retry would be refused again; review the gateway's settings or collect the payment another way.",
};

/** Known codes. Visa categories follow research §5; codes Visa does not define are category 4. */
const knownCodes: Record<string, CodeEntry> = {
  insufficient_funds: ['recoverable', 2],
  do_not_honor: ['recoverable', 4],
  call_issuer: ['recoverable', 4],
  try_again_later: ['recoverable', 2],
  card_declined: ['recoverable', 4],
  generic_decline: ['recoverable', 4],
  approve_with_id: ['recoverable', 4],
  processing_error: ['recoverable', 2],
  issuer_not_available: ['recoverable', 2],
  reenter_transaction: ['recoverable', 2],
  withdrawal_count_limit_exceeded: ['recoverable', 2],
  card_velocity_exceeded: ['recoverable', 2],

  authentication_required: ['authentication_required', 3],

  fraudulent: ['blocked', 2],
  fraud_suspected: ['blocked', 2],
  stolen_card: ['blocked', 1],
  pickup_card: ['blocked', 1],
  merchant_blacklist: ['blocked', 4],
  security_violation: ['blocked', 4],
  lost_card: ['blocked', 1, newCardNeeded],
  restricted_card: ['blocked', 1, newCardNeeded],

  card_no_longer_chargeable: ['no_longer_chargeable', 1],
  revocation_of_authorization: ['no_longer_chargeable', 1],
  revocation_of_all_authorizations: ['no_longer_chargeable', 1],
  stop_payment_order: ['no_longer_chargeable', 1],
  account_closed: ['no_longer_chargeable', 1],
  closed_account: ['no_longer_chargeable', 1],
  invalid_account: ['no_longer_chargeable', 1],
  transaction_not_allowed: ['no_longer_chargeable', 1],
  // A billing platform's subscription that no longer owes the payment: nothing was charged, nothing is owed.
  subscription_not_past_due: ['no_longer_chargeable', 4, nothingOwed],
  // Recoup's own answer (no gateway gives it, none gave it before 2026-11-27): the billing platform's invoice
  // was read just before a charge and found paid, voided or cancelled there; nothing was sent.
  invoice_not_owed: [
    'no_longer_chargeable',
    4,
    {
      ...nothingOwed,
      reason:
        'The invoice is no longer owed on the billing platform (paid, voided or cancelled there); nothing was charged.',
    },
  ],
  // Recoup's own answer too (none before 2026-11-27): the invoice read before a charge is now billed in
  // another currency than the recovery's. This recovery's payment is owed no more; the platform's failure of
  // it in that currency is reported as a recovery of its own.
  invoice_other_currency: [
    'no_longer_chargeable',
    4,
    {
      ...nothingOwed,
      reason:
        'The billing platform now bills the invoice in another currency than this recovery; nothing was charged. A failed payment of it in that currency is a recovery of its own.',
    },
  ],

  expired_card: ['expired', 3],

  incorrect_cvc: ['invalid_card', 3],
  invalid_cvc: ['invalid_card', 3],
  incorrect_pin: ['invalid_card', 3],
  invalid_expiry_month: ['invalid_card', 3],
  invalid_expiry_year: ['invalid_card', 3],
  incorrect_zip: ['invalid_card', 3],
  new_account_information_available: ['invalid_card', 3],
  incorrect_number: ['invalid_card', 1],
  invalid_number: ['invalid_card', 1],
  no_such_issuer: ['invalid_card', 1],

  duplicate_transaction: ['unknown', 4, suspectedDuplicate],

  // Recoup's names for answers no gateway adapter gave before 2026-11-27 (they threw, or answered a retried
  // `processing_error` or an unknown code), so no recovery's history holds them as a charge's answer.
  request_refused: ['invalid_card', 4, refusedByGateway],
  excessive_retry: [
    'invalid_card',
    4,
    {
      reason:
        'The gateway blocks further attempts on this card after too many retries; ask the customer for another payment method.',
    },
  ],
  hard_decline: [
    'invalid_card',
    1,
    {
      reason:
        'The card was declined for good (a hard decline), so retrying it will not succeed; ask the customer for another payment method.',
    },
  ],
};

/**
 * Stripe's decline codes known since 2026-11-26 (before, `unknown`: retried). A recovery workflow begun
 * before then decides on them as it did (see `classifyDecline`'s `knowsLater`): its history must replay.
 */
const laterCodes: Record<string, CodeEntry> = {
  do_not_try_again: ['no_longer_chargeable', 1],
  not_permitted: ['no_longer_chargeable', 1],
  service_not_allowed: ['no_longer_chargeable', 1],
  card_not_supported: [
    'invalid_card',
    1,
    { reason: 'The card does not support this kind of payment; ask the customer for another card.' },
  ],
  currency_not_supported: [
    'invalid_card',
    1,
    { reason: 'The card cannot be charged in this currency; ask the customer for another card.' },
  ],
  invalid_amount: [
    'invalid_card',
    3,
    {
      recommendedAction: 'manual_review',
      reason:
        'The gateway does not accept this amount for this payment method; review the amount or collect it another way.',
    },
  ],
  invalid_pin: ['invalid_card', 3],
  pin_try_exceeded: ['invalid_card', 3],
  offline_pin_required: ['authentication_required', 3],
  online_or_offline_pin_required: ['authentication_required', 3],
};

/**
 * Soft declines a European or UK issuer gives for a payment it wanted authenticated without saying so (no
 * `authentication_required`), which a customer-present 3-D Secure payment would likely clear; not a lack of
 * funds, a technical failure, a suspected duplicate, nor a card that is dead or invalid.
 */
const unflaggedAuthentication = new Set(['do_not_honor', 'generic_decline', 'card_declined', 'call_issuer']);

/** Whether 3-D Secure may clear this (canonical) decline from an issuer in a Strong Customer Authentication region. */
export function mayBeUnflaggedAuthentication(code: string): boolean {
  return unflaggedAuthentication.has(code);
}

/** ISO 8583 response codes (as Visa numbers its categories) some gateways pass through raw. */
const isoAliases: Record<string, string> = {
  '01': 'call_issuer',
  '04': 'pickup_card',
  '05': 'do_not_honor',
  '07': 'pickup_card',
  '12': 'transaction_not_allowed',
  '14': 'invalid_number',
  '15': 'no_such_issuer',
  '19': 'reenter_transaction',
  '41': 'lost_card',
  '43': 'stolen_card',
  '46': 'account_closed',
  '51': 'insufficient_funds',
  '54': 'expired_card',
  '55': 'incorrect_pin',
  '57': 'transaction_not_allowed',
  '59': 'fraud_suspected',
  '61': 'card_velocity_exceeded',
  '62': 'restricted_card',
  '65': 'withdrawal_count_limit_exceeded',
  '82': 'incorrect_cvc',
  '91': 'issuer_not_available',
  '94': 'duplicate_transaction',
  '96': 'processing_error',
  n7: 'incorrect_cvc',
  '1a': 'authentication_required',
  r0: 'stop_payment_order',
  r1: 'revocation_of_authorization',
  r3: 'revocation_of_all_authorizations',
};

/**
 * Braintree's processor response codes (its "2000-series" authorization declines and 3000), which Braintree
 * merchants and the Braintree adapter report as they are.
 */
const braintreeAliases: Record<string, string> = {
  '2000': 'do_not_honor',
  '2001': 'insufficient_funds',
  '2002': 'withdrawal_count_limit_exceeded',
  '2003': 'card_velocity_exceeded',
  '2004': 'expired_card',
  '2005': 'invalid_number',
  '2006': 'invalid_expiry_year',
  '2007': 'invalid_account',
  '2008': 'invalid_number',
  '2009': 'no_such_issuer',
  '2010': 'incorrect_cvc',
  '2011': 'call_issuer',
  '2012': 'lost_card',
  '2013': 'stolen_card',
  '2014': 'fraud_suspected',
  '2015': 'transaction_not_allowed',
  '2016': 'duplicate_transaction',
  '2017': 'stop_payment_order',
  '2018': 'revocation_of_all_authorizations',
  '2019': 'transaction_not_allowed',
  '2020': 'security_violation',
  '2021': 'security_violation',
  '2022': 'new_account_information_available',
  '2038': 'generic_decline',
  '2044': 'call_issuer',
  '2046': 'generic_decline',
  '2047': 'pickup_card',
  '2053': 'stolen_card',
  '2057': 'restricted_card',
  '2059': 'incorrect_zip',
  '2099': 'authentication_required',
  '3000': 'issuer_not_available',
};

/**
 * Adyen's refusal reasons (the `refusalReason` text of a Refused payment, normalised) that name a decline
 * differently; the others ("Expired Card", "Restricted Card", "Authentication required", …) already match.
 */
const adyenAliases: Record<string, string> = {
  refused: 'generic_decline',
  referral: 'call_issuer',
  acquirer_error: 'processing_error',
  blocked_card: 'restricted_card',
  invalid_card_number: 'invalid_number',
  issuer_unavailable: 'issuer_not_available',
  not_supported: 'transaction_not_allowed',
  '3d_not_authenticated': 'authentication_required',
  not_enough_balance: 'insufficient_funds',
  acquirer_fraud: 'fraudulent',
  fraud: 'fraudulent',
  fraud_cancelled: 'fraudulent',
  not_submitted: 'processing_error',
  transaction_not_permitted: 'transaction_not_allowed',
  cvc_declined: 'incorrect_cvc',
  revocation_of_auth: 'revocation_of_authorization',
  declined_non_generic: 'do_not_honor',
  withdrawal_amount_exceeded: 'card_velocity_exceeded',
  withdrawal_count_exceeded: 'withdrawal_count_limit_exceeded',
  issuer_suspected_fraud: 'fraud_suspected',
  avs_declined: 'incorrect_zip',
  invalid_pin: 'incorrect_pin',
  pin_tries_exceeded: 'incorrect_pin',
};

/**
 * GoCardless's causes of a failed debit (`details.cause` of the payment's `failed` event) that name a decline
 * differently; `insufficient_funds` already matches. A mandate the payer or the bank ended cannot be
 * debited again; a new one is the merchant's to set up.
 */
const gocardlessAliases: Record<string, string> = {
  refer_to_payer: 'do_not_honor',
  bank_account_closed: 'account_closed',
  bank_account_transferred: 'new_account_information_available',
  invalid_bank_details: 'invalid_account',
  mandate_cancelled: 'revocation_of_authorization',
  mandate_expired: 'revocation_of_authorization',
  mandate_suspended_by_payer: 'revocation_of_authorization',
  authorisation_disputed: 'revocation_of_authorization',
  direct_debit_not_enabled: 'transaction_not_allowed',
};

/**
 * PayPal's names for why a payment was refused: the issues of Orders v2 errors (`INSTRUMENT_DECLINED`) and
 * the error codes of NVP reference transactions (`10201`).
 */
const paypalAliases: Record<string, string> = {
  instrument_declined: 'generic_decline',
  redirect_payer_for_alternate_funding: 'generic_decline',
  transaction_refused: 'do_not_honor',
  max_number_of_payment_attempts_exceeded: 'card_velocity_exceeded',
  transaction_limit_exceeded: 'card_velocity_exceeded',
  payer_action_required: 'authentication_required',
  agreement_already_cancelled: 'revocation_of_authorization',
  billing_agreement_not_found: 'revocation_of_authorization',
  payer_account_locked_or_closed: 'account_closed',
  payer_account_restricted: 'card_no_longer_chargeable',
  payer_cannot_pay: 'transaction_not_allowed',
  compliance_violation: 'transaction_not_allowed',
  payee_blocked_transaction: 'merchant_blacklist',
  duplicate_invoice_id: 'duplicate_transaction',
  '10201': 'revocation_of_authorization', // billing agreement cancelled
  '10204': 'account_closed', // payer's account closed or restricted
  '10207': 'try_again_later',
  '10417': 'generic_decline', // cannot complete with this funding source
  '10486': 'generic_decline', // funding failed; the payer must pick another source
  '11611': 'merchant_blacklist', // blocked by the merchant's fraud filters
};

/** A table's own entry for the code (never an Object prototype member such as `constructor`). */
export const own = <T>(table: Record<string, T>, code: string): T | undefined =>
  Object.hasOwn(table, code) ? table[code] : undefined;

/**
 * Trims, lower-cases and turns spaces and hyphens into underscores ("Do-Not Honor" → "do_not_honor"), and
 * reads ISO 8583 and Braintree response codes, Adyen refusal reasons, GoCardless failure causes and PayPal's
 * issues and NVP error codes as the names they stand for.
 */
export function normalizeDeclineCode(code: string | null | undefined): string {
  const normal = (code ?? '')
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');
  return (
    own(isoAliases, normal) ??
    own(braintreeAliases, normal) ??
    own(adyenAliases, normal) ??
    own(gocardlessAliases, normal) ??
    own(paypalAliases, normal) ??
    normal
  );
}

/** Whether Recoup names this decline code (every code it knows, also those known since 2026-11-26). */
export function isKnownDeclineCode(code: string | null | undefined): boolean {
  const normal = normalizeDeclineCode(code);
  return own(knownCodes, normal) !== undefined || own(laterCodes, normal) !== undefined;
}

/** How firmly a decline keeps the card from being charged again: stopped at once, no fallback, not retried. */
function firmness(info: DeclineInfo): number {
  if (info.stopsImmediately) return 3;
  if (!info.allowsFallback) return 2;
  return info.retryable ? 0 : 1;
}

/**
 * Of the codes one decline is given under (a gateway's own, and the network's or the issuer's beside it),
 * the one that keeps the card from being charged again most firmly (stopped at once, then no fallback cards,
 * then not retried), the first of them on a tie; absent codes are skipped, and a code Recoup does not name
 * never wins over one it does. Each is returned as given.
 */
export function firmestDecline(code: string, ...others: ReadonlyArray<string | null | undefined>): string {
  let firmest = { code, firmness: firmness(classifyDecline(code)) };
  for (const other of others) {
    if (!other || !isKnownDeclineCode(other)) continue;
    const candidate = { code: other, firmness: firmness(classifyDecline(other)) };
    if (candidate.firmness > firmest.firmness) firmest = candidate;
  }
  return firmest.code;
}

/**
 * Classifies a processor decline code; unknown and missing codes are treated conservatively as `unknown`.
 * `knowsLater` is asked, only for a code added later, whether to know it: a workflow answers as its
 * version does (`patched`), everything else knows every code.
 */
export function classifyDecline(
  code: string | null | undefined,
  knowsLater: () => boolean = () => true,
): DeclineInfo {
  const normal = normalizeDeclineCode(code);
  const later = own(laterCodes, normal);
  const entry = own(knownCodes, normal) ?? (later && knowsLater() ? later : undefined);
  if (!entry) {
    const policy = groupPolicies.unknown;
    const reason = normal
      ? policy.reason
      : 'No decline code was given, so recovery was attempted conservatively.';
    const unknownCode = normal || 'unknown';
    return {
      code: unknownCode,
      group: 'unknown',
      visaCategory: 4,
      ...policy,
      reason,
      blockedAs: unknownCode,
      aboutTheCard: true,
    };
  }
  const [group, visaCategory, overrides] = entry;
  const policy = { ...groupPolicies[group], ...overrides };
  return {
    code: normal,
    group,
    visaCategory,
    ...policy,
    blockedAs: policy.blockedAs ?? normal,
    aboutTheCard: policy.aboutTheCard ?? true,
  };
}
