import {
  WorkflowExecutionAlreadyStartedError,
  type Client,
  type WorkflowHandle,
  type WorkflowStartOptions,
} from '@temporalio/client';
import type { RecoveryInput, StopReason } from '../domain/recovery.js';
import { searchAttributeKeys } from '../domain/search-attributes.js';
import type { RecoveryDoc } from '../store/recoveries.js';
import type { TaskQueues } from '../worker/task-queues.js';
import { recoveryWorkflow } from '../workflows/recovery.js';

/** What the recovery workflow of a stored recovery is started with. */
export function recoveryInputOf(doc: RecoveryDoc): RecoveryInput {
  return {
    accountId: doc.accountId,
    transactionId: doc._id,
    request: doc.request,
    ...(doc.connector ? { connector: doc.connector } : {}),
  };
}

/**
 * How a recovery's workflow is started. The workflow id is the business key and a closed one is never run
 * again (REJECT_DUPLICATE); a running one is attached to (USE_EXISTING) or refused (FAIL):
 * WorkflowExecutionAlreadyStartedError.
 */
export function recoveryStartOptions(
  queues: TaskQueues,
  workflowId: string,
  input: RecoveryInput,
  conflict: 'USE_EXISTING' | 'FAIL',
): WorkflowStartOptions<typeof recoveryWorkflow> & { workflowIdConflictPolicy: 'USE_EXISTING' | 'FAIL' } {
  const r = input.request;
  return {
    workflowId,
    taskQueue: r.isTrialConversion ? queues.critical : queues.recovery,
    args: [input],
    workflowIdConflictPolicy: conflict,
    workflowIdReusePolicy: 'REJECT_DUPLICATE',
    typedSearchAttributes: [
      { key: searchAttributeKeys.accountId, value: input.accountId },
      { key: searchAttributeKeys.recoveryState, value: 'processing' },
      { key: searchAttributeKeys.declineCode, value: r.originalDeclineCode ?? 'unknown' },
    ],
  };
}

/**
 * Stops a recovery whose workflow never started (its intake died, or Temporal failed its start and nobody
 * retried) by starting the workflow told to stop at once: it records the stop, with no screen and no
 * charge, and ends. Returns the started workflow's handle (the caller decides how long to wait for its end),
 * or null when a workflow of the recovery's id exists or ran — a late retry of the intake started it first
 * (Temporal runs one per id), and that workflow is to be stopped instead.
 */
export async function startStopped(
  temporal: Client,
  queues: TaskQueues,
  doc: RecoveryDoc,
  reason: StopReason,
): Promise<WorkflowHandle<typeof recoveryWorkflow> | null> {
  const input = { ...recoveryInputOf(doc), stopBeforeStart: reason };
  try {
    return await temporal.workflow.start(
      recoveryWorkflow,
      recoveryStartOptions(queues, doc.workflowId, input, 'FAIL'),
    );
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) return null;
    throw error;
  }
}
