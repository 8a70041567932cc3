import type { FirstPhaseOutcome } from '../domain/recovery.js';
import { reply, type Reply } from './route.js';

/** What a Proof Mode control's answer says, as its message and as its failure's reason. */
const heldOut = 'Proof Mode control group: no recovery attempt was made';

/** Maps the workflow's first-phase outcome to the spec's HTTP answer (200, 202 or 403). */
export function answerFor(outcome: FirstPhaseOutcome, transactionId: string, isSimulated: boolean): Reply {
  const simulated = isSimulated ? { isSimulated: true } : {};
  switch (outcome.kind) {
    case 'succeeded':
      return reply(200, {
        success: true,
        message: 'Payment recovered',
        error: null,
        transactionId,
        strategyUsed: outcome.strategy,
        gatewaysAttempted: outcome.gatewaysAttempted,
        recoveryEngineApplied: true,
        ai: outcome.ai,
        ...simulated,
      });
    case 'failed':
      return reply(200, {
        success: false,
        message: 'Payment could not be recovered',
        error: outcome.reason,
        transactionId: `FAILED_API_${transactionId}`,
        strategyUsed: 'all_failed',
        gatewaysAttempted: outcome.gatewaysAttempted,
        recoveryEngineApplied: true,
        recommendedAction: outcome.recommendedAction,
        recommendedActionReason: outcome.reason,
        ai: outcome.ai,
        ...simulated,
      });
    case 'holdout':
      return reply(200, {
        success: false,
        holdout: true,
        message: heldOut,
        // Not recovered, so not null (the spec's `error` is null on success only): why no attempt was made.
        error: heldOut,
        transactionId,
        strategyUsed: 'holdout',
        gatewaysAttempted: 0,
        recoveryEngineApplied: false,
        ai: outcome.ai,
        ...simulated,
      });
    case 'queued':
      return reply(202, {
        message: `Queued for a smart retry at ${outcome.nextAttemptAt}. ${outcome.reason}`,
        transactionId,
        status: 'queued',
        nextAttemptAt: outcome.nextAttemptAt,
      });
    case 'unknown':
      return reply(202, {
        message: `The gateway's answer was ambiguous (${outcome.reason}); the charge may have gone through. Do not retry this payment: the outcome follows by webhook.`,
        transactionId,
        status: 'unknown',
      });
    case 'blocked':
      return reply(403, {
        error: 'Payment blocked; do not retry',
        declineCode: outcome.declineCode,
        action: 'blocked',
        recommendedAction: outcome.recommendedAction,
        recommendation: outcome.reason,
      });
  }
}

/** 202 when the first phase has not finished within the request's deadline; the webhook follows. */
export function stillProcessing(transactionId: string): Reply {
  return reply(202, {
    message: 'The recovery is still processing; its outcome follows by webhook and on the status endpoint.',
    transactionId,
    status: 'unknown',
  });
}
