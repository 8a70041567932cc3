import { randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { CardSweepResult } from '../activities/card-sweep.js';
import { cardHealthSweepWorkflowId, cardSweepWorkflowId } from '../domain/card-health.js';
import { searchAttributeKeys } from '../domain/search-attributes.js';
import type { TaskQueues } from '../worker/task-queues.js';
import { cardHealthSweepWorkflow, cardSweepWorkflow } from '../workflows/card-health-sweep.js';

/**
 * Starts the deployment's daily card health sweep unless it is already running: every worker calls this on
 * start, and the first one wins. Returns its workflow id.
 */
export async function ensureCardHealthSweep(temporal: Client, queues: TaskQueues): Promise<string> {
  const workflowId = cardHealthSweepWorkflowId(queues.recovery);
  try {
    await temporal.workflow.start(cardHealthSweepWorkflow, { workflowId, taskQueue: queues.recovery });
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
  return workflowId;
}

/** Sweeps one account now, outside the daily run, and waits for what it did (the operator's `sweep`). */
export async function runCardSweep(
  temporal: Client,
  queues: TaskQueues,
  accountId: string,
): Promise<{ workflowId: string; result: CardSweepResult }> {
  const workflowId = cardSweepWorkflowId(accountId, `manual-${randomUUID().slice(0, 8)}`);
  const result = await temporal.workflow.execute(cardSweepWorkflow, {
    workflowId,
    taskQueue: queues.recovery,
    args: [{ accountId }],
    typedSearchAttributes: [{ key: searchAttributeKeys.accountId, value: accountId }],
  });
  return { workflowId, result };
}
