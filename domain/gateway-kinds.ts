import { z } from 'zod';

/** Payment gateway kinds and the token shape the spec gives for each. */
export const gatewayKinds = ['test', 'stripe', 'braintree', 'adyen', 'gocardless', 'paypal'] as const;
export const GatewayKind = z.enum(gatewayKinds);
export type GatewayKind = z.infer<typeof GatewayKind>;

const part = '[^|\\s]+';
const tokenShapes: Record<GatewayKind, { pattern: RegExp; example: string }> = {
  test: { pattern: /^tok_[A-Za-z0-9_]+$/, example: 'tok_visa' },
  stripe: { pattern: /^(pm|card|src|ba)_[A-Za-z0-9]+$/, example: 'pm_1Nabc' },
  adyen: {
    pattern: new RegExp(`^${part}\\|${part}\\|${part}$`),
    example: '<merchantAccount>|<storedPaymentMethodId>|<shopperReference>',
  },
  braintree: { pattern: new RegExp(`^${part}\\|${part}$`), example: '<paymentMethodToken>|<customerId>' },
  gocardless: { pattern: /^MD[A-Z0-9]+$/, example: 'MD000123ABC' },
  paypal: {
    pattern: /^(billing-agreement\|B-[A-Z0-9]+|reference\|[A-Za-z0-9-]+)$/,
    example: 'billing-agreement|B-7AB12345CD678901E',
  },
};

/** True when `token` has the shape payment methods of `kind` take. */
export function tokenFitsKind(kind: GatewayKind, token: string): boolean {
  return tokenShapes[kind].pattern.test(token);
}

/** A human-readable description of the token shape for `kind`, for error messages. */
export function tokenShapeHint(kind: GatewayKind): string {
  return `a ${kind} gateway token such as ${tokenShapes[kind].example}`;
}

export const paymentMethodTypes = ['card', 'apple_pay', 'google_pay', 'paypal', 'venmo'] as const;
export const PaymentMethodType = z.enum(paymentMethodTypes);
export type PaymentMethodType = z.infer<typeof PaymentMethodType>;
