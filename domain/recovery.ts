import type { RecommendedAction } from './declines.js';
import type { ConnectorSource } from './connectors.js';
import type { RecoveryRequest } from './recovery-request.js';

/** strategyUsed values (decisions.md). */
export type Strategy =
  'primary' | 'backup_gateway' | 'fallback_token' | 'smart_retry' | 'all_failed' | 'holdout';

/** Fine-grained state of a recovery; `status` is derived from it. */
export type RecoveryState =
  | 'processing'
  | 'queued'
  | 'reconciling'
  | 'succeeded'
  | 'failed'
  | 'blocked'
  | 'holdout'
  /** Paid outside Recoup (reported by a billing platform or the merchant); Recoup stopped retrying it. */
  | 'paid_elsewhere'
  /** The merchant stopped the recovery: the payment is no longer owed (subscription cancelled, invoice voided). */
  | 'stopped';

/** Every state, once (a missing one does not compile). */
const stateSet: Record<RecoveryState, true> = {
  processing: true,
  queued: true,
  reconciling: true,
  succeeded: true,
  failed: true,
  blocked: true,
  holdout: true,
  paid_elsewhere: true,
  stopped: true,
};
export const recoveryStates = Object.keys(stateSet) as RecoveryState[];

/** Why a merchant (or a billing platform) stops a recovery. */
export type StopReason = 'paid_elsewhere' | 'not_owed';

/** Status values of the spec; every not-yet-final state reads `unknown`. */
export type RecoveryStatus = 'succeeded' | 'failed' | 'blocked' | 'unknown';

export const recoveryStatuses: readonly RecoveryStatus[] = ['succeeded', 'failed', 'blocked', 'unknown'];

export function statusOf(state: RecoveryState): RecoveryStatus {
  if (state === 'succeeded' || state === 'failed' || state === 'blocked') return state;
  if (state === 'paid_elsewhere') return 'succeeded';
  return state === 'holdout' || state === 'stopped' ? 'failed' : 'unknown';
}

/**
 * Whether the customer still owes the payment of a recovery (the paywall's past due): not when it was paid
 * (by Recoup or elsewhere, a Proof Mode control included) or written off, while it ran or after it ended.
 */
export function stillOwed(r: {
  state: RecoveryState;
  paidOnTheirOwnAt?: Date;
  writtenOffAt?: Date;
}): boolean {
  if (r.paidOnTheirOwnAt !== undefined || r.writtenOffAt !== undefined) return false;
  return statusOf(r.state) !== 'succeeded' && r.state !== 'stopped';
}

/** What the recovery workflow is started with: ids and request data, never secrets. */
export interface RecoveryInput {
  accountId: string;
  transactionId: string;
  request: RecoveryRequest;
  /** The billing platform that reported the failure: a recovered payment is written back to its invoice. */
  connector?: ConnectorSource;
  /**
   * Started without waiting for the first phase (a billing platform's failure): the intake answered at once
   * with the bare id, which a failure must then keep, in its webhook too.
   */
  answeredAtStart?: true;
  /**
   * Stopped before its workflow ever started (the intake died, or Temporal failed it, and nobody retried):
   * the workflow records the stop and ends, with no screen and no attempt. Started by the stop itself, so
   * Temporal's one-run-per-id decides between it and a late retry of the intake.
   */
  stopBeforeStart?: StopReason;
}

/** The engine's explanation of its chosen plan: the `ai` object of the result. */
export interface Prediction {
  score: number;
  confidence: number;
  reasoning: string;
  dataSource: 'static' | 'blended';
}

/** The answer of the workflow's first phase, which the API maps to 200, 202 or 403. */
export type FirstPhaseOutcome =
  | {
      kind: 'succeeded';
      strategy: Strategy;
      gatewaysAttempted: number;
      gatewayTransactionId: string;
      ai: Prediction;
    }
  | {
      kind: 'failed';
      gatewaysAttempted: number;
      declineCode: string | null;
      recommendedAction: RecommendedAction;
      reason: string;
      ai: Prediction;
    }
  | { kind: 'queued'; nextAttemptAt: string; reason: string; ai: Prediction }
  | { kind: 'unknown'; reason: string }
  | { kind: 'blocked'; declineCode: string; reason: string; recommendedAction: RecommendedAction }
  | { kind: 'holdout'; ai: Prediction };

/** Workflow id: the business key, so Temporal itself refuses a second run for one recovery. */
export function recoveryWorkflowId(accountId: string, key: string): string {
  return `recovery/${accountId}/${key}`;
}

/** One attempt's gateway idempotency key and network-budget claim id: `${workflowId}/${attemptNo}`. */
export function attemptKeyOf(workflowId: string, attemptNo: number): string {
  return `${workflowId}/${attemptNo}`;
}

/** Whether a gateway's reference (an order id) is one of Recoup's attempt keys (`attemptKeyOf`). */
export function isAttemptKey(reference: string): boolean {
  return /^recovery\/[^/]+\/.+\/\d+$/.test(reference);
}
