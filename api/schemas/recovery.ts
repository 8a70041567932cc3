import { z } from 'zod';
import { RecommendedActionSchema as RecommendedAction, StrategyUsedSchema } from '../../domain/events.js';
import { recoveryStates, recoveryStatuses } from '../../domain/recovery.js';
import { CustomerEmail } from '../../domain/recovery-request.js';

export const Strategy = StrategyUsedSchema.describe(
  'primary: first gateway and token; backup_gateway; fallback_token; smart_retry: a later, timed attempt; all_failed; holdout: Proof Mode control group',
);

export const Ai = z.object({
  score: z.number().describe('Predicted success probability of the chosen plan × 100'),
  confidence: z.int().min(0).max(100),
  reasoning: z.string(),
  dataSource: z.enum(['blended', 'static']),
});

/** 200 from execute. */
export const RecoveryResult = z.object({
  success: z.boolean(),
  message: z.string(),
  error: z.string().nullable(),
  transactionId: z.string().describe('FAILED_API_<uuid> when the synchronous answer is a final failure'),
  strategyUsed: Strategy,
  gatewaysAttempted: z.int(),
  recoveryEngineApplied: z.boolean(),
  recommendedAction: RecommendedAction.optional(),
  recommendedActionReason: z.string().optional(),
  holdout: z.boolean().optional(),
  isSimulated: z.boolean().optional(),
  ai: Ai,
});

/** 202 from execute: queued for a timed retry, or the gateway's answer was ambiguous. */
export const QueuedResult = z.object({
  message: z.string(),
  transactionId: z.string(),
  status: z.enum(['queued', 'unknown']),
  nextAttemptAt: z.iso.datetime().optional(),
});

export const BlockedBody = z.object({
  error: z.string(),
  declineCode: z.string(),
  action: z.literal('blocked'),
  recommendedAction: RecommendedAction,
  recommendation: z.string(),
});

export const DuplicateBody = z.object({
  error: z.string(),
  message: z.string(),
  existingTransactionId: z.string(),
  existingStatus: z.string(),
  existingRecovered: z.boolean(),
});

/** The fine-grained state of a recovery (its status is derived from it). */
const RecoveryStateField = z
  .enum(recoveryStates)
  .describe(
    'paid_elsewhere: paid outside Recoup, as a billing platform or the merchant (POST /api/recovery/stop) reported (status succeeded); stopped: the merchant stopped it, the payment is no longer owed (status failed)',
  );

/** One charge of a recovery, in the status record. */
export const AttemptView = z.object({
  attempt: z.int().describe('Numbered from 1 within the recovery'),
  at: z.iso.datetime(),
  gateway: z.string().describe('The name of the account’s gateway it went to'),
  role: z
    .enum(['primary', 'backup_gateway', 'fallback_token'])
    .describe(
      'primary: the first gateway with the card given; backup_gateway; fallback_token: a second card',
    ),
  outcome: z
    .enum(['approved', 'declined', 'ambiguous', 'not_charged'])
    .describe(
      'ambiguous: the answer was lost and is being looked up; not_charged: it never reached the gateway',
    ),
  declineCode: z.string().nullable(),
  gatewayTransactionId: z.string().nullable().describe('The gateway’s own id of the charge'),
});

export const StatusRecord = z.object({
  transactionId: z.string(),
  status: z.enum(recoveryStatuses),
  state: RecoveryStateField,
  recovered: z.boolean(),
  amount: z.int(),
  currency: z.string(),
  recoveredAt: z.iso.datetime().nullable(),
  strategyUsed: Strategy,
  attemptCount: z.int(),
  lastDeclineCode: z.string(),
  attempts: z.array(AttemptView).describe('Every charge made so far, in order'),
  nextAttemptAt: z.iso.datetime().optional(),
  holdout: z.boolean().optional(),
  isSimulated: z.boolean().optional(),
  recommendedAction: RecommendedAction.optional(),
  recommendedActionReason: z.string().optional(),
});

export const StatusQuery = z
  .object({ idempotencyKey: z.string().min(1, 'must not be empty').max(128) })
  .strict();
/**
 * Path of the status lookup. Any value is looked up, so one that names no recovery (of any length) is a
 * 404 as the spec has it, never a 400.
 */
export const StatusParams = z.object({
  transactionId: z.string().describe('Either form execute answered with'),
});

/** POST /api/recovery/stop: which recovery, and why it is to stop. */
export const StopRequest = z
  .object({
    transactionId: z.string().min(1).max(200).optional().describe('Either form execute answered with'),
    idempotencyKey: z.string().min(1).max(128).optional().describe('The key given to execute'),
    reason: z
      .enum(['paid_elsewhere', 'not_owed'])
      .describe(
        'paid_elsewhere: the customer paid outside Recoup; not_owed: the payment is no longer to be collected (subscription cancelled, invoice voided or written off)',
      ),
  })
  .strict()
  .refine((b) => (b.transactionId === undefined) !== (b.idempotencyKey === undefined), {
    message: 'give exactly one of transactionId and idempotencyKey',
    path: ['transactionId'],
  });
export type StopRequest = z.infer<typeof StopRequest>;

/** 202 from stop: asked, and it takes effect before any further attempt. */
export const StopPending = z.object({
  message: z.string(),
  transactionId: z.string(),
  status: z.literal('unknown'),
  state: RecoveryStateField,
});

/** Query of GET /api/recoveries: newest first, a page at a time. */
export const RecoveriesQuery = z
  .object({
    status: z.enum(recoveryStatuses).optional().describe('unknown: still being worked on'),
    state: z.enum(recoveryStates).optional(),
    limit: z.coerce.number().int().min(1).max(100).default(20),
    before: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe('The last transactionId of the previous page: the page after it'),
    customerEmail: CustomerEmail.optional().describe(
      'Only this customer’s recoveries (the customerEmail given to execute)',
    ),
  })
  .strict();

export const RecoveryList = z.object({
  data: z.array(StatusRecord),
  hasMore: z.boolean().describe('Another page follows: ask again with before = the last transactionId'),
});

/** 503 from execute: Temporal could not be reached. */
export const EngineUnavailableBody = z.object({
  error: z.literal('Internal error').describe('As every 5xx answer'),
  message: z.string().describe('What to do: retry, and with which idempotencyKey'),
  transactionId: z
    .string()
    .optional()
    .describe(
      'Present when the recovery was recorded: retrying resumes it (same idempotencyKey; without one, the same request within 5 minutes)',
    ),
  requestId: z.string(),
});
