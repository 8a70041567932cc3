import { statusOf } from '../domain/recovery.js';
import type { Stores } from '../store/index.js';
import type { AttemptRecord, RecoveryDoc } from '../store/recoveries.js';

/** Which recovery: either form of its transaction id, or the idempotency key it was executed with. */
export type RecoveryRef = { transactionId: string } | { idempotencyKey: string };

/** The account's recovery that `ref` names, or null (also for another account's). */
export function findRecovery(
  stores: Stores,
  accountId: string,
  ref: RecoveryRef,
): Promise<RecoveryDoc | null> {
  return 'transactionId' in ref
    ? stores.recoveries.find(accountId, ref.transactionId)
    : stores.recoveries.findByKey(accountId, ref.idempotencyKey);
}

/** One charge of a recovery as the merchant sees it: when, where, how it ended, and the gateway's id. */
function attemptView(a: AttemptRecord) {
  return {
    attempt: a.no,
    at: a.at.toISOString(),
    gateway: a.gateway,
    role: a.role,
    outcome: a.outcome,
    declineCode: a.declineCode,
    gatewayTransactionId: a.gatewayTransactionId,
  };
}

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
    attempts: [...doc.attempts].sort((a, b) => a.no - b.no).map(attemptView),
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
