import { randomUUID } from 'node:crypto';
import { isGrpcCancelledError, WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { CardSweepResult } from '../activities/card-sweep.js';
import {
  cardHealthSweepWorkflowId,
  cardSweepWorkflowId,
  dataRetentionWorkflowId,
} from '../domain/card-health.js';
import { searchAttributeKeys } from '../domain/search-attributes.js';
import type { TaskQueues } from '../worker/task-queues.js';
import { cardHealthSweepWorkflow, cardSweepWorkflow } from '../workflows/card-health-sweep.js';
import { dataRetentionWorkflow } from '../workflows/data-retention.js';

/**
 * Starts the deployment's daily workflows unless they are already running: every worker calls this on
 * start, and the first one wins. Returns their workflow ids.
 */
export async function ensureDailyWorkflows(
  temporal: Client,
  queues: TaskQueues,
): Promise<{ cardHealthSweep: string; dataRetention: string }> {
  const daily = {
    cardHealthSweep: [cardHealthSweepWorkflowId(queues.recovery), cardHealthSweepWorkflow],
    dataRetention: [dataRetentionWorkflowId(queues.recovery), dataRetentionWorkflow],
  } as const;
  for (const [workflowId, workflow] of Object.values(daily))
    try {
      await temporal.workflow.start(workflow, { workflowId, taskQueue: queues.recovery });
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
  return { cardHealthSweep: daily.cardHealthSweep[0], dataRetention: daily.dataRetention[0] };
}

/** An operator's sweep of one account: its workflow, and what it did, or null if it was not done in time. */
export interface CardSweepRun {
  workflowId: string;
  result: CardSweepResult | null;
}

/**
 * Sweeps one account now, outside the daily run, and waits up to `waitMs` for what it did (the operator's
 * `sweep`). Past that the result is null and the workflow carries on: no worker polls its task queue yet, or
 * the gateway has many cards to page through.
 */
export async function runCardSweep(
  temporal: Client,
  queues: TaskQueues,
  accountId: string,
  waitMs: number,
): Promise<CardSweepRun> {
  const workflowId = cardSweepWorkflowId(accountId, `manual-${randomUUID().slice(0, 8)}`);
  const handle = await temporal.workflow.start(cardSweepWorkflow, {
    workflowId,
    taskQueue: queues.recovery,
    args: [{ accountId }],
    typedSearchAttributes: [{ key: searchAttributeKeys.accountId, value: accountId }],
  });
  // The wait is an abort, not a gRPC deadline: the server answers a long poll a second before the caller's
  // deadline, so under a short one the client polls again and again, and the poll the deadline ends is at
  // times cut off by the server first, failing as CANCELLED rather than DEADLINE_EXCEEDED (3 waits of 30
  // with a 1 s deadline). An abort ends the one poll in flight, and only the abort reads as "not done".
  const wait = AbortSignal.timeout(waitMs);
  try {
    return { workflowId, result: await temporal.withAbortSignal(wait, () => handle.result()) };
  } catch (error) {
    if (wait.aborted && isGrpcCancelledError(error)) return { workflowId, result: null };
    throw error;
  }
}
