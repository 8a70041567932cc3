import { WithStartWorkflowOperation, type Client } from '@temporalio/client';
import type { FirstPhaseOutcome, RecoveryInput } from '../domain/recovery.js';
import { within } from '../runtime/within.js';
import { recoveryStartOptions } from '../services/recovery-start.js';
import type { TaskQueues } from '../worker/task-queues.js';
import { recoveryWorkflow } from '../workflows/recovery.js';
import { answeredProcessingUpdate, executeUpdate } from '../workflows/recovery-definitions.js';

/** How long an execute call waits for the workflow's first phase before answering 202. */
export const firstPhaseDeadlineMs = 25_000;

/**
 * Starts the recovery's workflow and, with `wait`, asks it for its first-phase outcome in one round trip
 * (update-with-start). The workflow id is the business key: a second start for it attaches instead.
 * Returns null without `wait`, or when the first phase outlives the deadline — then only once the workflow
 * has taken note that the answer is "still processing" under the bare id (or it returns the outcome, which
 * came first after all), so the id the merchant is given is the one its webhooks carry. The workflow
 * carries on regardless. With `onlyIfNew`, a workflow of that id that exists already (or ran) is not
 * attached to: WorkflowExecutionAlreadyStartedError.
 */
export async function startRecovery(
  temporal: Client,
  queues: TaskQueues,
  workflowId: string,
  input: RecoveryInput,
  opts: { wait: boolean; deadlineMs?: number; onlyIfNew?: boolean },
): Promise<FirstPhaseOutcome | null> {
  const options = recoveryStartOptions(queues, workflowId, input, opts.onlyIfNew ? 'FAIL' : 'USE_EXISTING');
  if (!opts.wait) {
    // The caller answers now, with the bare id: a failure in the first phase keeps it (see RecoveryContext).
    await temporal.workflow.start(recoveryWorkflow, {
      ...options,
      args: [{ ...input, answeredAtStart: true }],
    });
    return null;
  }
  const start = new WithStartWorkflowOperation(recoveryWorkflow, options);
  const update = await temporal.workflow.startUpdateWithStart(executeUpdate, {
    startWorkflowOperation: start,
    updateId: input.transactionId,
    waitForStage: 'ACCEPTED',
  });
  const outcome = await within(opts.deadlineMs ?? firstPhaseDeadlineMs, update.result());
  if (outcome) return outcome;
  // A workflow that has ended since takes no note: its first phase has answered the first update by then.
  // Bounded too: workers that take no task for this long cannot end the first phase either meanwhile.
  const noted = temporal.workflow
    .getHandle(workflowId)
    .executeUpdate(answeredProcessingUpdate, { updateId: `${input.transactionId}/answered-processing` })
    .catch(() => update.result());
  return within(answeredNoteMs, noted);
}

/**
 * How long the note that the answer is "still processing" may take to reach the workflow: a charge under
 * way (a local activity) holds the workflow task until the SDK renews it, 8 s into the 10 s task timeout.
 */
const answeredNoteMs = 15_000;
