import { continueAsNew, executeChild, isCancellation, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { CardSweepResult } from '../activities/card-sweep.js';
import { cardSweepWorkflowId, sweepDay } from '../domain/card-health.js';
import { searchAttributeKeys } from '../domain/search-attributes.js';
import { everyDay } from './daily.js';

const { cardSweepTargets } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '10 seconds', backoffCoefficient: 2, maximumInterval: '10 minutes' },
});

/**
 * A sweep pages through the gateway's cards and reports each page with a heartbeat: a worker that dies is
 * noticed within two minutes and the retry goes on from the last page. A gateway that keeps failing (a
 * revoked key, an outage) is given up on after about half an hour; the next day's sweep tries again.
 */
const { sweepAccountCards } = proxyActivities<Activities>({
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '2 minutes',
  retry: {
    initialInterval: '1 minute',
    backoffCoefficient: 2,
    maximumInterval: '15 minutes',
    maximumAttempts: 6,
  },
});

/** One account's card health sweep, as of the workflow's clock. */
export async function cardSweepWorkflow(input: { accountId: string }): Promise<CardSweepResult> {
  return sweepAccountCards({ accountId: input.accountId, asOf: Date.now() });
}

/** How many accounts are swept at once. */
const parallelSweeps = 4;

/** Sweeps one account as a child workflow named for the day; a sweep that fails waits for the next day. */
async function sweepOnce(accountId: string, day: string): Promise<void> {
  try {
    await executeChild(cardSweepWorkflow, {
      workflowId: cardSweepWorkflowId(accountId, day),
      args: [{ accountId }],
      typedSearchAttributes: [{ key: searchAttributeKeys.accountId, value: accountId }],
    });
  } catch (error) {
    // Failed (the Temporal UI shows why) or already swept today: the other accounts go on either way.
    if (isCancellation(error)) throw error;
  }
}

/**
 * The deployment's daily card health sweep (started by every worker, once): each day at the sweep hour it
 * sweeps every account whose sweep is enabled, each in its own child workflow `card-sweep-<clientId>-<date>`,
 * `parallelSweeps` at a time: a slow or failing account holds one lane, never the others.
 */
export async function cardHealthSweepWorkflow(): Promise<void> {
  await everyDay(async (nowMs) => {
    const today = sweepDay(nowMs);
    const waiting = await cardSweepTargets();
    const lane = async () => {
      for (let id = waiting.shift(); id !== undefined; id = waiting.shift()) await sweepOnce(id, today);
    };
    await Promise.all(Array.from({ length: parallelSweeps }, lane));
  });
  await continueAsNew<typeof cardHealthSweepWorkflow>();
}
