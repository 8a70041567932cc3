import { daysUntilExpiry } from './card-health.js';

/** The fields of the hosted card form, as typed. */
export interface CardForm {
  number: string;
  expiry: string; // MM/YY or MM/YYYY
  cvc: string;
}

/** A card that passed the form's checks. */
export interface ValidCard {
  number: string;
  expMonth: number;
  expYear: number;
  cvc: string;
}

/** Why a typed field was refused; the hosted page words each in the customer's language. */
export type CardInputError =
  | 'number_missing'
  | 'number_length'
  | 'number_invalid'
  | 'expiry_format'
  | 'expiry_month'
  | 'expired'
  | 'cvc_format';

export type CardFormErrors = Partial<Record<keyof CardForm, CardInputError>>;

/** The Luhn checksum every card number carries. */
export function passesLuhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i += 1) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return digits.length > 0 && sum % 10 === 0;
}

function checkNumber(raw: string): string | { error: CardInputError } {
  const digits = raw.replace(/[\s-]/g, '');
  if (digits === '') return { error: 'number_missing' };
  if (!/^\d{12,19}$/.test(digits)) return { error: 'number_length' };
  if (!passesLuhn(digits)) return { error: 'number_invalid' };
  return digits;
}

function checkExpiry(
  raw: string,
  now: Date,
  timeZone: string,
): { month: number; year: number } | { error: CardInputError } {
  const match = /^\s*(\d{1,2})\s*\/\s*(\d{2}|\d{4})\s*$/.exec(raw);
  if (!match) return { error: 'expiry_format' };
  const month = Number(match[1]);
  const year = match[2]!.length === 2 ? 2000 + Number(match[2]) : Number(match[2]);
  if (month < 1 || month > 12) return { error: 'expiry_month' };
  // Valid through the last day of its month in the account's time zone: the sweep's count, so the form never
  // refuses a card the sweep still counts as valid, nor takes one it counts as expired.
  if (daysUntilExpiry({ expMonth: month, expYear: year }, now.getTime(), timeZone) < 0)
    return { error: 'expired' };
  return { month, year };
}

/**
 * Checks the typed card: number (digits and Luhn), expiry (MM/YY, not past in the account's `timeZone`), CVC
 * (3 or 4 digits).
 */
export function checkCardForm(
  form: CardForm,
  now: Date,
  timeZone: string,
): { card: ValidCard } | { errors: CardFormErrors } {
  const errors: CardFormErrors = {};
  const number = checkNumber(form.number);
  const expiry = checkExpiry(form.expiry, now, timeZone);
  const cvc = form.cvc.trim();
  if (typeof number !== 'string') errors.number = number.error;
  if ('error' in expiry) errors.expiry = expiry.error;
  if (!/^\d{3,4}$/.test(cvc)) errors.cvc = 'cvc_format';
  if (typeof number !== 'string' || 'error' in expiry || errors.cvc) return { errors };
  return { card: { number, expMonth: expiry.month, expYear: expiry.year, cvc } };
}
