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
