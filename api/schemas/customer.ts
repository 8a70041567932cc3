import { z } from 'zod';
import { Amount, Currency, CustomerEmail, TransactionRef } from '../../domain/recovery-request.js';

/** Body of POST /api/recovery/pulse: a payment that succeeded on the first try. */
export const PulseRequest = z
  .object({
    amount: Amount,
    currency: Currency.default('USD'),
    transactionId: TransactionRef.optional().describe(
      "The merchant's own id; re-sending it returns the same service id",
    ),
    customerEmail: CustomerEmail.optional(),
    occurredAt: z.iso.datetime({ offset: true }).optional(),
  })
  .strict();

export const PulseResult = z.object({
  success: z.literal(true),
  message: z.string(),
  transactionId: z.string(),
});

export const PaywallQuery = z
  .object({
    customerEmail: CustomerEmail,
  })
  .strict();

export const PaywallStatus = z.object({
  isPastDue: z.boolean(),
  totalOwedCents: z.int().describe('Sum over unrecovered failures in `currency` (the oldest failure’s)'),
  currency: z.string(),
  failedPaymentCount: z.int(),
  oldestFailureAt: z.iso.datetime().nullable(),
  byCurrency: z.record(z.string(), z.int()).describe('Totals per currency when failures are in several'),
});

export { ErasureRequest } from '../../domain/erasure.js';

export const ErasureResult = z.object({
  erased: z.literal(true),
  erasedAt: z.iso.datetime(),
  recoveries: z.int().describe('Recoveries kept for your books with the customer’s details replaced'),
  pulses: z.int().describe('Pulses kept with the customer’s email replaced'),
  events: z.int().describe('Webhook events about the customer, deleted'),
  links: z.int().describe('Hosted links minted for the customer, deleted'),
  workflowHistories: z.int().describe('Temporal workflow histories deleted'),
});

export const ErasureInFlight = z.object({
  error: z.string(),
  message: z.string(),
  transactionIds: z.array(z.string()).describe('Recoveries still under way: stop them, or wait for them'),
  eventIds: z.array(z.string()).describe('Webhook events still being delivered'),
});
