import { z } from 'zod';

/**
 * Path of the intake URL. The platform and client are checked by the handler, so an unknown one (of any
 * length) is a 404, as decisions.md has it.
 */
export const ConnectorParams = z.object({
  platform: z.string(),
  clientId: z.string().min(1),
});

export const ConnectorReceipt = z.object({
  received: z.literal(true),
  action: z
    .enum([
      'recovery_started',
      'already_received',
      'card_updated',
      'paid_elsewhere',
      'control_paid',
      'paid_after_end',
      'amount_lowered',
      'card_expiring',
      'ignored',
    ])
    .describe(
      'recovery_started: the failure became a recovery (idempotencyKey = the invoice id); already_received: this invoice already has one; card_updated: queued recoveries of the customer retry with the new card; paid_elsewhere: the invoice’s recovery stopped; control_paid: the invoice was a Proof Mode control (no attempts), now recorded as paid by the customer on their own; paid_after_end: the invoice’s recovery had ended without the payment (failed, blocked or stopped), now recorded as paid by the customer on their own; amount_lowered: part of the invoice was paid outside Recoup, and its recovery collects only what is still due (amountDue) from its next attempt on; card_expiring: the platform’s expiry notice went out as card.expiring_soon (eventId); ignored: nothing to do (reason says why; details name the fields of a failure this account cannot charge)',
    ),
  duplicate: z.boolean().optional().describe('A platform retry of an event already handled'),
  transactionId: z.string().nullable().optional(),
  recoveriesRetried: z.int().optional(),
  amountDue: z
    .int()
    .optional()
    .describe('What the invoice’s recovery collects now (amount_lowered), in minor units of its currency'),
  eventId: z.string().optional().describe('The card.expiring_soon event a card_expiring notice became'),
  reason: z.string().optional(),
  details: z
    .record(z.string(), z.array(z.string()))
    .optional()
    .describe('Why a failure cannot be charged through this account, by field (ignored)'),
});
