import { z } from 'zod';
import {
  Amount,
  BinPrefix,
  CardOrigin,
  Currency,
  CustomerEmail,
  Token,
} from '../../domain/recovery-request.js';

/** The years a card's expiry and a charge's date may name. */
const years = { min: 2000, max: 2100 };
const scheduledDateRule =
  'must be a date (YYYY-MM-DD) or an ISO 8601 date-time with Z or an offset, ' +
  `in the years ${years.min}–${years.max}`;

/**
 * When a charge will be made. The customer's UTC offset at that time is worked out with `Date.UTC`, which
 * takes a year 0–99 for 1900–1999: such a date would be read a century off.
 */
const ScheduledDate = z
  .union([z.iso.date(), z.iso.datetime({ offset: true })], { error: scheduledDateRule })
  .refine(
    (value) => {
      const year = Number(value.slice(0, 4));
      return year >= years.min && year <= years.max;
    },
    { error: scheduledDateRule },
  );

/** Body of POST /api/predict/risk: a charge about to be made, screened before it fails. */
export const RiskRequest = z
  .object({
    paymentMethodToken: Token,
    amount: Amount,
    currency: Currency.default('USD'),
    scheduledDate: ScheduledDate.optional().describe(
      'When the charge will be made (a date is taken at noon, customer time); default now',
    ),
    customerEmail: CustomerEmail.optional(),
    binPrefix: BinPrefix.optional(),
    cardOrigin: CardOrigin.optional(),
    expiryMonth: z.int().min(1).max(12).optional(),
    expiryYear: z.int().min(years.min).max(years.max).optional(),
  })
  .strict()
  .refine((r) => (r.expiryMonth === undefined) === (r.expiryYear === undefined), {
    path: ['expiryYear'],
    message: 'expiryMonth and expiryYear go together',
  });
export type RiskRequest = z.infer<typeof RiskRequest>;

export const Recommendation = z.enum(['proceed', 'proceed_with_caution', 'delay', 'block']);
const Outcome = z.enum(['succeeded', 'failed', 'blocked']);

export const RiskResult = z.object({
  success: z.literal(true),
  prediction: z.object({
    predictionId: z.string(),
    riskScore: z.number().describe('0–100, higher = more likely to fail'),
    confidence: z.int(),
    reasoning: z.string(),
    factors: z.array(
      z.object({
        factor: z.string(),
        effect: z.number().describe('How the factor multiplies the chance of failure; 1 for a decisive fact'),
        description: z.string(),
      }),
    ),
    recommendation: Recommendation,
  }),
});

/** Body of POST /api/predict/outcome: what became of a predicted charge (it calibrates later predictions). */
export const OutcomeRequest = z
  .object({
    predictionId: z.string().min(1).max(64),
    outcome: Outcome,
    declineCode: z.string().trim().min(1).max(64).optional(),
  })
  .strict();

export const OutcomeResult = z.object({
  success: z.literal(true),
  predictionId: z.string(),
  recommendation: Recommendation,
  outcome: Outcome,
  predictionMatched: z
    .boolean()
    .describe(
      'Whether the prediction called it: a risk score of 50 or more for a charge that did not succeed',
    ),
});
