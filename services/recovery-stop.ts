import { setTimeout as delay } from 'node:timers/promises';
import { WorkflowNotFoundError, WorkflowUpdateStage, type Client } from '@temporalio/client';
import { statusOf, type StopReason } from '../domain/recovery.js';
import type { Stores } from '../store/index.js';
import type { RecoveryDoc } from '../store/recoveries.js';
import { findRecovery, type RecoveryRef } from './status-record.js';
import { stopUpdate } from '../workflows/recovery-definitions.js';

/**
 * How long a stop waits for the recovery to end. A queued recovery stops at once; one whose attempt is
 * under way (or whose ambiguous charge is being looked up) stops right after it.
 */
const waitMs = 5_000;

export type StopOutcome =
  | { kind: 'not_found' }
  /** Ended before the stop could take effect (also an attempt under way that collected the payment first). */
  | { kind: 'ended'; doc: RecoveryDoc }
  | { kind: 'stopped'; doc: RecoveryDoc }
  /** Not ended within the wait: it stops right after the attempt under way. */
  | { kind: 'pending'; doc: RecoveryDoc };

/** Asks the recovery's workflow to stop (stopUpdate); true when it has ended within the wait. */
async function askToStop(temporal: Client, doc: RecoveryDoc, reason: StopReason): Promise<boolean> {
  try {
    const update = await temporal.workflow
      .getHandle(doc.workflowId)
      .startUpdate(stopUpdate, { args: [{ reason }], waitForStage: WorkflowUpdateStage.ACCEPTED });
    const timer = new AbortController();
    const timeout = delay(waitMs, false, { signal: timer.signal }).catch(() => false);
    return await Promise.race([update.result().then(() => true), timeout]).finally(() => timer.abort());
  } catch (error) {
    // The workflow completed meanwhile: the read model has its end.
    if (error instanceof WorkflowNotFoundError) return true;
    throw error;
  }
}

/**
 * Stops one of an account's recoveries before any further attempt: the payment was made elsewhere or is no
 * longer owed. Used by `POST /api/recovery/stop` and `recoup recoveries stop`.
 */
export async function stopRecovery(
  deps: { stores: Stores; temporal: Client },
  accountId: string,
  ref: RecoveryRef,
  reason: StopReason,
): Promise<StopOutcome> {
  const { recoveries } = deps.stores;
  const doc = await findRecovery(deps.stores, accountId, ref);
  if (!doc) return { kind: 'not_found' };
  if (statusOf(doc.state) !== 'unknown') return { kind: 'ended', doc };
  const ended = await askToStop(deps.temporal, doc, reason);
  const now = (await recoveries.find(accountId, doc.publicId)) ?? doc;
  if (!ended) return { kind: 'pending', doc: now };
  return now.state === 'paid_elsewhere' || now.state === 'stopped'
    ? { kind: 'stopped', doc: now }
    : { kind: 'ended', doc: now };
}
