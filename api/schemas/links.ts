import { z } from 'zod';
import { PaymentMethodType } from '../../domain/gateway-kinds.js';
import { pageLocales } from '../../domain/links.js';
import { Currency, CustomerEmail, TransactionRef } from '../../domain/recovery-request.js';

const https = z.url({ protocol: /^https$/, error: 'must be an https:// URL' }).max(2048);
const id = z.string().trim().min(1, 'must not be empty').max(256);
const locale = z
  .enum(pageLocales)
  .optional()
  .describe("The page's language; without it, the customer's browser preference among these, else en");

/** Body of POST /api/recovery/update-card/generate. */
export const CardUpdateLinkRequest = z
  .object({
    paymentMethodToken: z.string().trim().min(1, 'must not be empty').max(512),
    customerEmail: CustomerEmail.optional(),
    returnUrl: https.optional().describe('Shown as a "Return to…" button after the card is saved'),
    transactionId: TransactionRef.optional().describe(
      'A recovery of the account to retry at once with the new card, besides those queued on the old token; one naming no recovery is refused (400)',
    ),
    locale,
  })
  .strict();
export type CardUpdateLinkRequest = z.infer<typeof CardUpdateLinkRequest>;

/** Body of POST /api/recovery/update-card/complete. */
export const CardUpdateCompleteRequest = z
  .object({
    token: z
      .string()
      .regex(/^[A-Za-z0-9_-]{22,128}$/, 'must be the token of a card-update link')
      .describe('The link token the card-update page passed to the card form as recoup_link'),
    newPaymentMethodToken: z
      .string()
      .trim()
      .min(1, 'must not be empty')
      .max(512)
      .describe("The saved card's token at one of the account's gateways"),
    paymentMethodType: PaymentMethodType.default('card'),
  })
  .strict();
export type CardUpdateCompleteRequest = z.infer<typeof CardUpdateCompleteRequest>;

/** 200 from POST /api/recovery/update-card/complete. */
export const CardUpdateCompleteBody = z.object({
  cardUpdated: z.literal(true),
  oldPaymentMethodToken: z.string(),
  newPaymentMethodToken: z.string(),
  eligibleGateways: z.array(z.string()).describe('Gateways the new token can be charged on'),
});

/** Body of POST /api/cancel-flow/generate. */
export const CancelFlowLinkRequest = z
  .object({
    customerId: id,
    customerEmail: CustomerEmail.optional(),
    subscriptionId: id.optional().describe('Echoed back on the churn.flow webhook'),
    amount: z
      .int('must be an integer in the smallest currency unit')
      .min(0)
      .max(100_000_000)
      .optional()
      .describe('Recurring charge in the smallest currency unit; renders the offers'),
    currency: Currency.default('USD'),
    returnUrl: https
      .optional()
      .describe(
        'Where the customer goes after choosing: the confirmation page sends them on at once (instant meta refresh and a link)',
      ),
    locale,
  })
  .strict();
export type CancelFlowLinkRequest = z.infer<typeof CancelFlowLinkRequest>;

/** 200 from both generate endpoints (spec, "Hosted link"). */
export const HostedLinkBody = z.object({
  url: z.string().describe('https://{customDomain}/… when the account has one, else the public base URL'),
  token: z.string().describe('The token in the url: 256 random bits, base64url'),
  expiresAt: z.iso.datetime(),
});

export const CancelFlowDisabledBody = z.object({ error: z.string(), message: z.string() });

/** 410 from POST /api/recovery/update-card/complete. */
export const LinkGoneBody = z.object({ error: z.string(), message: z.string() });
