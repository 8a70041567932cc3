import { WithStartWorkflowOperation, type Client, type WorkflowStartOptions } from '@temporalio/client';
import type { FirstPhaseOutcome, RecoveryInput } from '../domain/recovery.js';
import { searchAttributeKeys } from '../domain/search-attributes.js';
import type { TaskQueues } from '../worker/task-queues.js';
import { recoveryWorkflow } from '../workflows/recovery.js';
import { executeUpdate } from '../workflows/recovery-definitions.js';

/** How long an execute call waits for the workflow's first phase before answering 202. */
export const firstPhaseDeadlineMs = 25_000;

/**
 * Starts the recovery's workflow and, with `wait`, asks it for its first-phase outcome in one round trip
 * (update-with-start). The workflow id is the business key: a second start for it attaches instead.
 * Returns null without `wait`, or when the first phase outlives the deadline; the workflow carries on
 * regardless.
 */
export async function startRecovery(
  temporal: Client,
  queues: TaskQueues,
  workflowId: string,
  input: RecoveryInput,
  wait = true,
): Promise<FirstPhaseOutcome | null> {
  const r = input.request;
  const options: WorkflowStartOptions<typeof recoveryWorkflow> & {
    workflowIdConflictPolicy: 'USE_EXISTING';
  } = {
    workflowId,
    taskQueue: r.isTrialConversion ? queues.critical : queues.recovery,
    args: [input],
    workflowIdConflictPolicy: 'USE_EXISTING',
    workflowIdReusePolicy: 'REJECT_DUPLICATE',
    typedSearchAttributes: [
      { key: searchAttributeKeys.accountId, value: input.accountId },
      { key: searchAttributeKeys.recoveryState, value: 'processing' },
      { key: searchAttributeKeys.declineCode, value: r.originalDeclineCode ?? 'unknown' },
    ],
  };
  if (!wait) {
    await temporal.workflow.start(recoveryWorkflow, options);
    return null;
  }
  const start = new WithStartWorkflowOperation(recoveryWorkflow, options);
  const update = await temporal.workflow.startUpdateWithStart(executeUpdate, {
    startWorkflowOperation: start,
    updateId: input.transactionId,
    waitForStage: 'ACCEPTED',
  });
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<null>(
    (resolve) => (timer = setTimeout(() => resolve(null), firstPhaseDeadlineMs)),
  );
  try {
    return await Promise.race([update.result(), deadline]);
  } finally {
    clearTimeout(timer);
  }
}
