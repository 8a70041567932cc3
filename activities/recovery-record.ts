import type { EventPayload } from '../domain/events.js';
import { settleStopped } from '../services/stop-settlement.js';
import type { RecoveryPatch } from '../store/recoveries.js';
import type { ActivityDeps } from './deps.js';

/** A read-model change as a workflow sends it: dates travel as ISO strings. */
export type RecordPatch = Omit<RecoveryPatch, 'nextAttemptAt' | 'recoveredAt' | 'endedAt'> & {
  nextAttemptAt?: string | null;
  recoveredAt?: string | null;
};

const toDate = (iso: string | null | undefined) =>
  iso === undefined ? undefined : iso === null ? null : new Date(iso);

export function recordActivities(deps: ActivityDeps) {
  return {
    /** Updates the recovery's read model (status lookups, paywall and reports read it). */
    async recordRecovery(input: {
      transactionId: string;
      patch: RecordPatch;
      /** The recovery reaches a final state with this write (counted once, for metrics). */
      ends?: boolean;
    }): Promise<void> {
      const { nextAttemptAt, recoveredAt, ...rest } = input.patch;
      const dates = { nextAttemptAt: toDate(nextAttemptAt), recoveredAt: toDate(recoveredAt) };
      const patch: RecoveryPatch = { ...rest };
      if (dates.nextAttemptAt !== undefined) patch.nextAttemptAt = dates.nextAttemptAt;
      if (dates.recoveredAt !== undefined) patch.recoveredAt = dates.recoveredAt;
      const now = deps.clock();
      // Kept apart from updatedAt: the Proof Mode report asks whether a payment stopped as paid elsewhere
      // did so within its observation window, and an erasure later moves updatedAt.
      if (input.ends) patch.endedAt = now;
      await deps.stores.recoveries.update(input.transactionId, patch, now);
      if (input.ends && patch.state) deps.metrics.recoveryEnded(patch.state);
      // A stop asked during the attempt that ended it (recorded before its workflow was asked): an end
      // without the payment is settled as the stop said (the stop settles it instead if this end came first).
      const ended = input.ends ? await deps.stores.recoveries.findById(input.transactionId) : null;
      if (ended?.stopAsked) await settleStopped(deps.stores, ended, ended.stopAsked, now);
    },

    /**
     * Claims FAILED_API_ as the id of a failure ending the first phase; false when execute, tired of waiting,
     * already answered 202 under the bare id (which the failure then keeps).
     */
    async claimFailureId(input: { accountId: string; transactionId: string }): Promise<boolean> {
      return deps.stores.recoveries.claimAnswer(input.accountId, input.transactionId, 'failure');
    },

    /** Records an event (validated against the catalogue) and hands it to its delivery workflow. */
    async emitEvent(input: { accountId: string; eventId: string; payload: EventPayload }): Promise<void> {
      await deps.events.publish(input.accountId, input.payload, { eventId: input.eventId });
    },
  };
}
