import { statusOf } from '../domain/recovery.js';
import type { RecoveryDoc } from '../store/recoveries.js';

/** The spec's status record, from the read model. */
export function statusRecord(doc: RecoveryDoc) {
  const status = statusOf(doc.state);
  const recovered = doc.state === 'succeeded';
  return {
    transactionId: doc.publicId,
    status,
    state: doc.state,
    recovered,
    amount: doc.amount,
    currency: doc.currency,
    recoveredAt: doc.recoveredAt?.toISOString() ?? null,
    strategyUsed: doc.strategyUsed ?? (doc.state === 'holdout' ? 'holdout' : 'primary'),
    attemptCount: doc.attempts.filter((a) => a.outcome !== 'not_charged').length,
    lastDeclineCode: doc.lastDeclineCode ?? '',
    ...(doc.nextAttemptAt && doc.state === 'queued'
      ? { nextAttemptAt: doc.nextAttemptAt.toISOString() }
      : {}),
    ...(doc.state === 'holdout' ? { holdout: true } : {}),
    ...(recovered
      ? {}
      : doc.recommendedAction
        ? {
            recommendedAction: doc.recommendedAction,
            recommendedActionReason: doc.recommendedActionReason ?? '',
          }
        : {}),
    ...(doc.isSimulated ? { isSimulated: true } : {}),
  };
}
