import { randomUUID } from 'node:crypto';
import { isGrpcDeadlineError, WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
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
  try {
    return { workflowId, result: await temporal.withDeadline(Date.now() + waitMs, () => handle.result()) };
  } catch (error) {
    if (isGrpcDeadlineError(error)) return { workflowId, result: null };
    throw error;
  }
}
