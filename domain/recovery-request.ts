import { z } from 'zod';
import { PaymentMethodType, tokenFitsKind, tokenShapeHint, type GatewayKind } from './gateway-kinds.js';
import { currencyCodes } from './money.js';
import { pageLocales } from './links.js';

/** A payment-method token as a gateway issued it. */
export const Token = z.string().trim().min(1, 'must not be empty').max(512, 'must be at most 512 characters');

/** ISO 4217 code in any case, stored upper-case; unknown codes are refused. */
export const Currency = z
  .string()
  .transform((c) => c.toUpperCase())
  .refine((c) => currencyCodes.has(c), 'must be an ISO 4217 currency code such as USD');

/**
 * An email address as billing platforms store it. zod's default pattern refuses valid ones (a&b@…, a=b@…,
 * josé@…, …@bücher.de), and refusing the address would refuse the whole recovery; its unicode pattern
 * still wants one `@` with something on both sides and no spaces or quotes.
 */
export const EmailAddress = z.email({ pattern: z.regexes.unicodeEmail }).max(254);

/**
 * A customer's email address, compared and stored in lower case, and checked as such: lower case can be
 * longer (`İ` becomes two characters), and an address the events' own check refuses would fail every
 * webhook that carries it.
 */
export const CustomerEmail = z.preprocess((e) => (typeof e === 'string' ? e.toLowerCase() : e), EmailAddress);

/**
 * An amount in the smallest currency unit, as every request carries it. The bounds carry their own
 * messages: zod would otherwise reuse the integer one for them.
 */
export const Amount = z
  .int('must be an integer in the smallest currency unit')
  .min(50, 'must be at least 50')
  .max(100_000_000, 'must be at most 100000000');

/** The card's issuing country (the customer's clock when the account has no better one). */
export const CardOrigin = z
  .string()
  .regex(/^[A-Za-z]{2}$/, 'must be a 2-letter ISO country code')
  .transform((c) => c.toUpperCase());

/** The card number's first six digits (its brand and issuer). */
export const BinPrefix = z.string().regex(/^\d{6}$/, 'must be exactly 6 digits');

/** A transaction id as a merchant sends it (its own, or one the service gave it): trimmed, 1–128 characters. */
export const TransactionRef = z.string().trim().min(1).max(128);

/** Body of POST /api/recovery/execute. Strict: unknown fields are refused so a typo never disables a feature. */
export const RecoveryRequest = z
  .object({
    paymentMethodToken: Token,
    amount: Amount,
    currency: Currency.default('USD'),
    originalDeclineCode: z.string().trim().min(1).max(64).optional(),
    cardOrigin: CardOrigin.optional(),
    idempotencyKey: z.string().min(1).max(128).optional(),
    binPrefix: BinPrefix.optional(),
    customerEmail: CustomerEmail.optional(),
    fallbackPaymentMethodTokens: z.array(Token).max(5, 'at most 5 fallback tokens').optional(),
    paymentMethodType: PaymentMethodType.default('card'),
    isTrialConversion: z.boolean().default(false),
    simulateOutcome: z.enum(['success', 'failed', 'blocked']).optional(),
    locale: z
      .enum(pageLocales)
      .optional()
      .describe("The customer's language for the hosted pages of links Recoup mints for this recovery"),
  })
  .strict();
export type RecoveryRequest = z.infer<typeof RecoveryRequest>;

/** The request schema for an account whose primary gateway is of `kind`: tokens must have its shape. */
export function recoveryRequestFor(kind: GatewayKind) {
  return RecoveryRequest.superRefine((req, ctx) => {
    const tokens = [
      ['paymentMethodToken', req.paymentMethodToken] as const,
      ...(req.fallbackPaymentMethodTokens ?? []).map(
        (t, i) => [`fallbackPaymentMethodTokens.${i}`, t] as const,
      ),
    ];
    for (const [path, value] of tokens) {
      if (!tokenFitsKind(kind, value))
        ctx.addIssue({ code: 'custom', path: path.split('.'), message: `must be ${tokenShapeHint(kind)}` });
    }
  });
}
