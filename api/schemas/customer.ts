import { z } from 'zod';
import { Amount, Currency, CustomerEmail, TransactionRef } from '../../domain/recovery-request.js';
import { EventBody } from './events.js';
import { Ai, StatusRecord } from './recovery.js';

/** How far ahead of Recoup's clock a pulse's occurredAt may be: the merchant's clock may run a little fast. */
export const pulseClockSkewMinutes = 5;

/** Body of POST /api/recovery/pulse: a payment that succeeded on the first try. */
export const PulseRequest = z
  .object({
    amount: Amount,
    currency: Currency.default('USD'),
    transactionId: TransactionRef.optional().describe(
      "The merchant's own id; re-sending it returns the same service id",
    ),
    customerEmail: CustomerEmail.optional(),
    paysTransactionId: z
      .string()
      .min(1)
      .max(200)
      .nullable()
      .optional()
      .describe(
        'The failed payment this payment pays: the transactionId execute answered with (either form), of this account and of the pulse’s mode (a sandbox recovery in test mode, a live one once live); null when it pays none (a renewal). Omitted, the report takes a pulse with the customerEmail of an unpaid Proof Mode failure within its 30 days as that failure’s payment',
      ),
    occurredAt: z.iso
      .datetime({ offset: true })
      .optional()
      .describe(
        `When the payment succeeded (default: now); at most ${pulseClockSkewMinutes} minutes in the future`,
      ),
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
  byCurrency: z
    .record(z.string(), z.int())
    .describe('Totals owed per currency (every currency owed; {} when nothing is)'),
});

export { CustomerIdentity } from '../../domain/customer-identity.js';

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
  erasedSoFar: z
    .boolean()
    .describe(
      'True when the recoveries or events listed were admitted or published while the erasure ran: what it found before them is erased, and the erasure is unfinished until run again; false: nothing was changed',
    ),
});

/** 409 from export and erasure: the customer's identifiers tie together records of more than one customer. */
export const FootprintTooWide = z.object({
  error: z.literal('Customer footprint too wide'),
  message: z.string(),
});

/** 409 from POST /api/customers/erase: work under way, or a footprint too wide; either way nothing changed. */
export const ErasureRefused = z.union([ErasureInFlight, FootprintTooWide]);

/** 200 from POST /api/customers/export: what Recoup holds about the customer. */
export const CustomerExport = z.object({
  exportedAt: z.iso.datetime(),
  identifiers: z
    .object({
      customerEmails: z.array(z.string()),
      paymentMethodTokens: z.array(z.string()),
      customerIds: z.array(z.string()),
    })
    .describe('Everything Recoup links to the customer: what you named and what their records add'),
  recoveries: z.array(
    StatusRecord.extend({
      createdAt: z.iso.datetime(),
      customerEmail: z.string().nullable(),
      paymentMethodToken: z.string().describe('The card the request named'),
      currentPaymentMethodToken: z
        .string()
        .describe('The card it is charged on now (another after a card update)'),
      fallbackPaymentMethodTokens: z.array(z.string()),
      paymentMethodType: z.string(),
      cardOrigin: z.string().nullable(),
      binPrefix: z.string().nullable(),
      locale: z.string().nullable(),
      originalDeclineCode: z.string().nullable(),
      inProofMode: z.boolean().describe('Drawn into a Proof Mode group at intake'),
      ai: Ai.nullable().describe('The prediction made for the payment'),
      connector: z
        .object({
          platform: z.string(),
          invoiceId: z.string(),
          customerId: z.string().nullable(),
          subscriptionId: z.string().nullable(),
        })
        .nullable()
        .describe('The billing platform invoice the recovery came from'),
    }),
  ),
  pulses: z.array(
    z.object({
      transactionId: z.string(),
      merchantTransactionId: z.string().nullable(),
      amount: z.int(),
      currency: z.string(),
      occurredAt: z.iso.datetime(),
      paysTransactionId: z
        .string()
        .nullable()
        .optional()
        .describe(
          'The failed payment the merchant said this payment pays (null: none); absent when not said',
        ),
      isSimulated: z.boolean().optional().describe('Logged in test mode: the sandbox’s; absent when live'),
    }),
  ),
  events: z
    .array(EventBody.omit({ attempts: true }))
    .describe('Webhook events as sent, but for the live hosted links they carried, which are withheld'),
  links: z.array(
    z.object({
      kind: z.enum(['card_update', 'cancel_flow']),
      createdAt: z.iso.datetime(),
      expiresAt: z.iso.datetime(),
      usedAt: z.iso.datetime().nullable(),
      outcome: z.record(z.string(), z.unknown()).nullable().describe('What the customer did on the page'),
      data: z.record(z.string(), z.unknown()).describe('What the link was minted for'),
    }),
  ),
});
