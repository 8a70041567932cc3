import { z } from 'zod';

/** Payment gateway kinds and the token shape the spec gives for each. */
export const gatewayKinds = ['test', 'stripe', 'braintree', 'adyen', 'gocardless', 'paypal'] as const;
export const GatewayKind = z.enum(gatewayKinds);
export type GatewayKind = z.infer<typeof GatewayKind>;

const part = '[^|\\s]+';
/**
 * PayPal's token prefixes. A Braintree payment method token or customer id may be any text without `|`, but a
 * Braintree token never starts with one of these: they are PayPal's, so a PayPal billing agreement or
 * reference is never routed to Braintree (which charges PayPal accounts only as its own vaulted tokens).
 */
const payPalPrefixes = '(billing-agreement|reference)\\|';

/** Each kind's token shape, and examples of it (the first shown in error messages); no two kinds' shapes overlap. */
const tokenShapes: Record<GatewayKind, { pattern: RegExp; examples: readonly [string, ...string[]] }> = {
  test: { pattern: /^tok_[A-Za-z0-9_]+$/, examples: ['tok_visa'] },
  stripe: { pattern: /^(pm|card|src|ba)_[A-Za-z0-9]+$/, examples: ['pm_1Nabc', 'card_1Nabc'] },
  adyen: {
    pattern: new RegExp(`^${part}\\|${part}\\|${part}$`),
    examples: [
      '<merchantAccount>|<storedPaymentMethodId>|<shopperReference>',
      'AcmeECOM|8415718415172200|shopper-42',
    ],
  },
  braintree: {
    pattern: new RegExp(`^(?!${payPalPrefixes})${part}\\|${part}$`),
    examples: ['<paymentMethodToken>|<customerId>', 'f8k2m9|8731004'],
  },
  gocardless: { pattern: /^MD[A-Z0-9]+$/, examples: ['MD000123ABC'] },
  paypal: {
    pattern: /^(billing-agreement\|B-[A-Z0-9]+|reference\|[A-Za-z0-9-]+)$/,
    examples: ['billing-agreement|B-7AB12345CD678901E', 'reference|9XW12345AB678901C'],
  },
};

/** True when `token` has the shape payment methods of `kind` take. */
export function tokenFitsKind(kind: GatewayKind, token: string): boolean {
  return tokenShapes[kind].pattern.test(token);
}

/** A human-readable description of the token shape for `kind`, for error messages. */
export function tokenShapeHint(kind: GatewayKind): string {
  return `a ${kind} gateway token such as ${tokenShapes[kind].examples[0]}`;
}

/** Examples of `kind`'s tokens, as its shape is described. */
export function tokenExamples(kind: GatewayKind): readonly string[] {
  return tokenShapes[kind].examples;
}

export const paymentMethodTypes = ['card', 'apple_pay', 'google_pay', 'paypal', 'venmo'] as const;
export const PaymentMethodType = z.enum(paymentMethodTypes);
export type PaymentMethodType = z.infer<typeof PaymentMethodType>;
