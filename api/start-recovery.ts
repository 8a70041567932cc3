import { WithStartWorkflowOperation, type Client } from '@temporalio/client';
import type { FirstPhaseOutcome, RecoveryInput } from '../domain/recovery.js';
import { within } from '../runtime/within.js';
import { recoveryStartOptions } from '../services/recovery-start.js';
import type { TaskQueues } from '../worker/task-queues.js';
import { recoveryWorkflow } from '../workflows/recovery.js';
import { answeredProcessingUpdate, executeUpdate } from '../workflows/recovery-definitions.js';

/** How long an execute call waits for the workflow's first phase before answering 202. */
export const firstPhaseDeadlineMs = 25_000;

/** What execute answers: the first phase's outcome, or "still processing" under the id the merchant keeps. */
export type FirstAnswer = FirstPhaseOutcome | { kind: 'processing'; transactionId: string };

/**
 * Starts the recovery's workflow and, with `wait`, asks it for its first-phase outcome in one round trip
 * (update-with-start). The workflow id is the business key: a second start for it attaches instead.
 * Answers "still processing" under the bare id without `wait`, or when the first phase outlives the
 * deadline — then only once the workflow has taken note of it (or with the outcome, which came first after
 * all), so the id the merchant is given is the one its webhooks carry. A note that cannot reach the
 * workflow in time (a charge holds its task) is replaced by `claimProcessing`, the store's claim that the
 * first phase's failure also takes (RecoveryContext.failureId): whichever claims first decides the id. The
 * workflow carries on regardless. With `onlyIfNew`, a workflow of that id that exists already (or ran) is
 * not attached to: WorkflowExecutionAlreadyStartedError.
 */
export async function startRecovery(
  temporal: Client,
  queues: TaskQueues,
  workflowId: string,
  input: RecoveryInput,
  opts:
    | { wait: false; onlyIfNew?: boolean }
    | { wait: true; claimProcessing: () => Promise<boolean>; deadlineMs?: number; onlyIfNew?: boolean },
): Promise<FirstAnswer> {
  const processing = { kind: 'processing', transactionId: input.transactionId } as const;
  const options = recoveryStartOptions(queues, workflowId, input, opts.onlyIfNew ? 'FAIL' : 'USE_EXISTING');
  if (!opts.wait) {
    // The caller answers now, with the bare id: a failure in the first phase keeps it (see RecoveryContext).
    await temporal.workflow.start(recoveryWorkflow, {
      ...options,
      args: [{ ...input, answeredAtStart: true }],
    });
    return processing;
  }
  // One deadline for the start and the first phase together.
  const deadline = Date.now() + (opts.deadlineMs ?? firstPhaseDeadlineMs);
  const start = new WithStartWorkflowOperation(recoveryWorkflow, options);
  // Until a worker accepts the update, the client sends it again and again: with no worker polling (all
  // down, or far behind) the start would never answer. Past the deadline it fails instead, and the caller
  // finds the workflow started (202, still processing) or not (503).
  const update = await temporal.withDeadline(deadline, () =>
    temporal.workflow.startUpdateWithStart(executeUpdate, {
      startWorkflowOperation: start,
      updateId: input.transactionId,
      waitForStage: 'ACCEPTED',
    }),
  );
  const outcome = await bounded(temporal, Math.max(0, deadline - Date.now()), () => update.result());
  if (outcome) return outcome;
  // A workflow that has ended since takes no note: its first phase has answered the first update by then.
  // Bounded too: workers that take no task for this long cannot end the first phase either meanwhile.
  const note = await bounded(temporal, answeredNoteMs, () =>
    temporal.workflow
      .getHandle(workflowId)
      .executeUpdate(answeredProcessingUpdate, { updateId: `${input.transactionId}/answered-processing` })
      .catch(() => update.result())
      .then((first) => ({ first })),
  );
  if (note) return note.first ?? processing;
  if (await opts.claimProcessing()) return processing;
  // The first phase failed first and claimed FAILED_API_: its answer is on its way, under that id.
  return (
    (await bounded(temporal, answeredNoteMs, () => update.result())) ?? {
      kind: 'processing',
      transactionId: `FAILED_API_${input.transactionId}`,
    }
  );
}

/**
 * `call`'s value, or null once `ms` have passed. Its requests to Temporal stop a moment later: an update's
 * result is polled for, and an update sent again, for as long as they are not answered, so a request
 * given up on must not poll on in the background.
 */
function bounded<T>(temporal: Client, ms: number, call: () => Promise<T>): Promise<T | null> {
  return within(ms, temporal.withDeadline(Date.now() + ms + givenUpAfterMs, call));
}

/** How long after `bounded` gives up its requests to Temporal are cut off (the race is decided by then). */
const givenUpAfterMs = 1_000;

/**
 * How long the note that the answer is "still processing" may take to reach the workflow: a charge under
 * way (a local activity) holds the workflow task until the SDK renews it, 8 s into the 10 s task timeout.
 */
const answeredNoteMs = 15_000;
