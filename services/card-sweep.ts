import { randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
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
