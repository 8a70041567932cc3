import {
  WorkflowNotFoundError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
  WorkflowUpdateStage,
  type Client,
} from '@temporalio/client';
import { statusOf, type StopReason } from '../domain/recovery.js';
import { within } from '../runtime/within.js';
import type { Stores } from '../store/index.js';
import type { RecoveryDoc } from '../store/recoveries.js';
import type { TaskQueues } from '../worker/task-queues.js';
import { startStopped } from './recovery-start.js';
import { settleStopped } from './stop-settlement.js';
import { findRecovery, type RecoveryRef } from './status-record.js';
import { stopUpdate } from '../workflows/recovery-definitions.js';

/**
 * How long a stop waits for the recovery to end. A queued recovery stops at once; one whose attempt is
 * under way (or whose ambiguous charge is being looked up) stops right after it.
 */
const waitMs = 5_000;

export type StopOutcome =
  | { kind: 'not_found' }
  /**
   * Recoup collected the payment before the stop could take effect (also an attempt under way that collected
   * it first). Not one paid elsewhere: that is `stopped`, however often it is asked.
   */
  | { kind: 'ended'; doc: RecoveryDoc }
  | { kind: 'stopped'; doc: RecoveryDoc }
  /** Not ended within the wait: it stops right after the attempt under way. */
  | { kind: 'pending'; doc: RecoveryDoc };

/** What asking a recovery's workflow to stop came to. */
type Asked = 'ended' | 'pending' | 'no_workflow';

/** 'ended' once `end` settles within the wait, else 'pending' (a failure after the wait is nobody's). */
async function settle(end: Promise<unknown>): Promise<Asked> {
  const ended = end.then(() => 'ended' as const);
  ended.catch(() => undefined);
  return (await within(waitMs, ended)) ?? 'pending';
}

/** Asks the recovery's workflow to stop (stopUpdate) and waits for it to end, within the wait. */
async function askToStop(temporal: Client, doc: RecoveryDoc, reason: StopReason): Promise<Asked> {
  try {
    // Until a worker accepts the update the client sends it again and again: with no worker taking the
    // workflow's tasks, the ask is given up at the wait (the update stays in its history, and is taken
    // when a worker comes back).
    const update = await temporal.withDeadline(Date.now() + waitMs, () =>
      temporal.workflow
        .getHandle(doc.workflowId)
        .startUpdate(stopUpdate, { args: [{ reason }], waitForStage: WorkflowUpdateStage.ACCEPTED }),
    );
    return await settle(update.result());
  } catch (error) {
    // Completed meanwhile (the read model has its end), or never started.
    if (error instanceof WorkflowNotFoundError) return 'no_workflow';
    if (error instanceof WorkflowUpdateRPCTimeoutOrCancelledError) return 'pending';
    throw error;
  }
}

/**
 * A recovery that had ended when the stop came: one whose payment Recoup collected ends as it did; one that
 * ended without it (failed, blocked, stopped, paid elsewhere, a Proof Mode control) keeps its outcome, and is
 * settled as the stop says (settleStopped). Paid elsewhere reads `succeeded` too, but is no collection: a
 * stop asked again (its answer lost) is answered as the first was.
 */
async function settleEnded(stores: Stores, doc: RecoveryDoc, reason: StopReason): Promise<StopOutcome> {
  if (doc.state === 'succeeded') return { kind: 'ended', doc };
  await settleStopped(stores, doc, reason, new Date());
  return { kind: 'stopped', doc: (await stores.recoveries.find(doc.accountId, doc.publicId)) ?? doc };
}

/**
 * Stops one of an account's recoveries before any further attempt: the payment was made elsewhere or is no
 * longer owed. A recovery whose workflow never started (its intake died, or its start failed and nobody
 * retried) is stopped by starting that workflow told to stop (startStopped). Used by `POST
 * /api/recovery/stop`, `recoup recoveries stop` and account closure.
 */
export async function stopRecovery(
  deps: { stores: Stores; temporal: Client; queues: TaskQueues },
  accountId: string,
  ref: RecoveryRef,
  reason: StopReason,
): Promise<StopOutcome> {
  const { recoveries } = deps.stores;
  const doc = await findRecovery(deps.stores, accountId, ref);
  if (!doc) return { kind: 'not_found' };
  if (statusOf(doc.state) !== 'unknown') return settleEnded(deps.stores, doc, reason);
  // Recorded before the workflow is asked: a lookup of an ambiguous charge under way from now on only reads
  // (one that would send its request again could make the payment after the customer paid elsewhere), and
  // an end without the payment that the ask does not reach in time is settled as it says (below).
  await recoveries.askStop(doc._id, reason, new Date());
  let asked = await askToStop(deps.temporal, doc, reason);
  let now = (await recoveries.find(accountId, doc.publicId)) ?? doc;
  if (asked === 'no_workflow' && statusOf(now.state) === 'unknown') {
    const stopping = await startStopped(deps.temporal, deps.queues, now, reason);
    // A late retry of the intake started the workflow first: that one is stopped instead.
    asked = stopping ? await settle(stopping.result()) : await askToStop(deps.temporal, now, reason);
    now = (await recoveries.find(accountId, doc.publicId)) ?? now;
  }
  // The attempt under way may be the last, and this ask may not reach the workflow before it ends (the
  // charge holds its task): an end without the payment is settled as the recorded stop says — by the
  // workflow recording its end, or below, if that came first.
  if (asked === 'pending' && statusOf(now.state) === 'unknown') return { kind: 'pending', doc: now };
  if (now.state === 'paid_elsewhere' || now.state === 'stopped') return { kind: 'stopped', doc: now };
  // Ended otherwise meanwhile: collected (409), or unpaid, and then settled as one that had ended.
  return statusOf(now.state) === 'unknown'
    ? { kind: 'ended', doc: now }
    : settleEnded(deps.stores, now, reason);
}
