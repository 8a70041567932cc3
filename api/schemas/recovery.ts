import { z } from 'zod';
import { RecommendedActionSchema as RecommendedAction } from '../../domain/events.js';

export const Strategy = z
  .enum(['primary', 'backup_gateway', 'fallback_token', 'smart_retry', 'all_failed', 'holdout'])
  .describe(
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

export const RateLimitBody = z.object({ error: z.string(), retryAfter: z.string().describe('Seconds') });

export const StatusRecord = z.object({
  transactionId: z.string(),
  status: z.enum(['succeeded', 'failed', 'blocked', 'unknown']),
  state: z
    .enum([
      'processing',
      'queued',
      'reconciling',
      'succeeded',
      'failed',
      'blocked',
      'holdout',
      'paid_elsewhere',
    ])
    .describe(
      'paid_elsewhere: a billing platform reported the invoice paid outside Recoup (status succeeded)',
    ),
  recovered: z.boolean(),
  amount: z.int(),
  currency: z.string(),
  recoveredAt: z.iso.datetime().nullable(),
  strategyUsed: Strategy,
  attemptCount: z.int(),
  lastDeclineCode: z.string(),
  nextAttemptAt: z.iso.datetime().optional(),
  holdout: z.boolean().optional(),
  isSimulated: z.boolean().optional(),
  recommendedAction: RecommendedAction.optional(),
  recommendedActionReason: z.string().optional(),
});

export const StatusQuery = z
  .object({ idempotencyKey: z.string().min(1, 'must not be empty').max(128) })
  .strict();
export const StatusParams = z.object({ transactionId: z.string().min(1).max(200) });
