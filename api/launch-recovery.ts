import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { recoveryInputOf } from '../services/recovery-start.js';
import type { Stores } from '../store/index.js';
import type { RecoveryDoc } from '../store/recoveries.js';
import type { TaskQueues } from '../worker/task-queues.js';
import { duplicate, mayBeUnstarted } from './admit-recovery.js';
import { HttpError } from './http-error.js';
import { answerFor, stillProcessing } from './recovery-answer.js';
import type { Reply } from './route.js';
import { startRecovery } from './start-recovery.js';

interface Deps {
  stores: Stores;
  temporal: Client;
  queues: TaskQueues;
  clock: () => Date;
  /** How long execute waits for the first phase (`firstPhaseDeadlineMs` unless a test says otherwise). */
  firstPhaseDeadlineMs?: number;
}

/** How long a request waits for Temporal to say whether a workflow exists. */
const existsWithinMs = 5_000;

/** Whether the workflow exists: true, false, or null when Temporal cannot say (within 5 s). */
export async function workflowExists(temporal: Client, workflowId: string): Promise<boolean | null> {
  try {
    await temporal.withDeadline(Date.now() + existsWithinMs, () =>
      temporal.workflow.getHandle(workflowId).describe(),
    );
    return true;
  } catch (error) {
    return error instanceof WorkflowNotFoundError ? false : null;
  }
}

/**
 * Starts (or resumes) a recovery's workflow and answers with its first phase (with `wait`; else at once,
 * as still processing). A recovery is never left
 * silently unstarted: if Temporal fails, either nothing exists and every claim is released (safe to
 * retry), or the recovery is marked so that a retry of the request (by its idempotency key, or within the
 * 5-minute velocity window) resumes it under the same workflow id — which Temporal runs at most once. A
 * recovery whose intake died before starting it (`mayBeUnstarted`) is indexed under its customer, as its
 * intake would have, and started only if Temporal has no workflow of its id (else it is a duplicate, 409).
 */
export async function launchRecovery(
  deps: Deps,
  doc: RecoveryDoc,
  requestId: string,
  wait = true,
): Promise<Reply> {
  const { recoveries } = deps.stores;
  const unstarted = mayBeUnstarted(doc, deps.clock());
  if (unstarted) await recoveries.indexCustomer(doc);
  const input = recoveryInputOf(doc);
  try {
    const answer = await startRecovery(
      deps.temporal,
      deps.queues,
      doc.workflowId,
      input,
      wait
        ? {
            wait,
            onlyIfNew: unstarted,
            claimProcessing: () => recoveries.claimAnswer(doc.accountId, doc._id, 'processing'),
            ...(deps.firstPhaseDeadlineMs ? { deadlineMs: deps.firstPhaseDeadlineMs } : {}),
          }
        : { wait, onlyIfNew: unstarted },
    );
    if (doc.startFailed) await recoveries.update(doc._id, { startFailed: false }, deps.clock());
    return answer.kind === 'processing'
      ? stillProcessing(answer.transactionId)
      : answerFor(answer, doc._id, doc.isSimulated);
  } catch (error) {
    if (unstarted && error instanceof WorkflowExecutionAlreadyStartedError)
      throw duplicate(doc._id, doc, 'This recovery is already under way.');
    const exists = await workflowExists(deps.temporal, doc.workflowId);
    if (exists) return stillProcessing(wait ? await processingId(deps.stores, doc) : doc._id);
    if (exists === false) {
      await recoveries.discard(doc._id);
      await deps.stores.claims.releaseVelocity(doc.accountId, doc.cardKey, doc.amount, doc.currency, doc._id);
      if (doc.idempotencyKey) await deps.stores.claims.releaseKey(doc.accountId, doc.idempotencyKey);
      throw new HttpError(
        503,
        {
          error: 'Internal error',
          message: 'The recovery engine is unavailable; nothing was started, so it is safe to retry.',
          requestId,
        },
        { 'Retry-After': '5' },
        error,
      );
    }
    await recoveries.update(doc._id, { startFailed: true }, deps.clock());
    // Without a key, only the velocity rule finds the recovery again: for its 5 minutes.
    const retry = doc.idempotencyKey
      ? 'retry with the same idempotencyKey'
      : 'retry the same request within 5 minutes (later, stop this recovery with POST /api/recovery/stop before executing anew)';
    throw new HttpError(
      503,
      {
        error: 'Internal error',
        message: `The recovery engine is unavailable; ${retry} to resume this recovery.`,
        transactionId: doc._id,
        requestId,
      },
      { 'Retry-After': '5' },
      error,
    );
  }
}

/**
 * The id a 202 gives for a recovery whose workflow runs though its start answered with an error (the
 * workflow never heard of this 202): the bare id once claimed in the store, as execute claims it when its
 * note cannot reach the workflow (startRecovery); FAILED_API_ when the first phase's failure claimed first,
 * since that is the id its webhook carries.
 */
async function processingId(stores: Stores, doc: RecoveryDoc): Promise<string> {
  return (await stores.recoveries.claimAnswer(doc.accountId, doc._id, 'processing'))
    ? doc._id
    : `FAILED_API_${doc._id}`;
}
