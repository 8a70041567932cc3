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

export type CardFormErrors = Partial<Record<keyof CardForm, string>>;

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

function checkNumber(raw: string): string | { error: string } {
  const digits = raw.replace(/[\s-]/g, '');
  if (digits === '') return { error: 'Enter your card number.' };
  if (!/^\d{12,19}$/.test(digits)) return { error: 'A card number has 12 to 19 digits.' };
  if (!passesLuhn(digits)) return { error: 'This card number is not valid. Check it and try again.' };
  return digits;
}

function checkExpiry(raw: string, now: Date): { month: number; year: number } | { error: string } {
  const match = /^\s*(\d{1,2})\s*\/\s*(\d{2}|\d{4})\s*$/.exec(raw);
  if (!match) return { error: 'Enter the expiry date as MM/YY, for example 04/29.' };
  const month = Number(match[1]);
  const year = match[2]!.length === 2 ? 2000 + Number(match[2]) : Number(match[2]);
  if (month < 1 || month > 12) return { error: 'The expiry month must be between 01 and 12.' };
  // A card is valid until the end of its expiry month.
  const current = now.getUTCFullYear() * 12 + now.getUTCMonth();
  if (year * 12 + (month - 1) < current)
    return { error: 'This card has expired. Use a card that is still valid.' };
  return { month, year };
}

/** Checks the typed card: number (digits and Luhn), expiry (MM/YY, not past), CVC (3 or 4 digits). */
export function checkCardForm(form: CardForm, now: Date): { card: ValidCard } | { errors: CardFormErrors } {
  const errors: CardFormErrors = {};
  const number = checkNumber(form.number);
  const expiry = checkExpiry(form.expiry, now);
  const cvc = form.cvc.trim();
  if (typeof number !== 'string') errors.number = number.error;
  if ('error' in expiry) errors.expiry = expiry.error;
  if (!/^\d{3,4}$/.test(cvc)) errors.cvc = 'The security code is the 3 or 4 digits on your card.';
  if (typeof number !== 'string' || 'error' in expiry || errors.cvc) return { errors };
  return { card: { number, expMonth: expiry.month, expYear: expiry.year, cvc } };
}
