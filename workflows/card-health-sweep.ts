import {
  continueAsNew,
  executeChild,
  isCancellation,
  patched,
  proxyActivities,
  workflowInfo,
} from '@temporalio/workflow';
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

/** A day's sweep a run left to its next one, to start its history over: the accounts it had not taken on yet. */
export interface UnfinishedSweep {
  day: string;
  accountIds: string[];
}

/** Workflow version: the daily sweep starts its history over when Temporal suggests it, also mid-day. */
const historyFullPatch = 'card-sweep-history-full';

/**
 * Temporal suggests starting the history over: each account's child sweep adds about 7 events, so a day of
 * a few thousand accounts alone would reach the 51,200 that end a workflow. (`patched`, asked only once it
 * is suggested: a run an earlier worker took past that point replays as it ran, and stops from here on.)
 */
function historyFull(): boolean {
  return workflowInfo().continueAsNewSuggested && patched(historyFullPatch);
}

/**
 * Sweeps `accountIds` on `day`, `parallelSweeps` at a time, until all are taken or the history is full;
 * returns those not taken on (sweeps under way when it fills up are waited for).
 */
async function sweepAccounts(day: string, accountIds: readonly string[]): Promise<string[]> {
  const waiting = [...accountIds];
  const lane = async () => {
    for (let id = next(); id !== undefined; id = next()) await sweepOnce(id, day);
  };
  const next = () => (historyFull() ? undefined : waiting.shift());
  await Promise.all(Array.from({ length: parallelSweeps }, lane));
  return waiting;
}

/**
 * The deployment's daily card health sweep (started by every worker, once): each day at the sweep hour it
 * sweeps every account whose sweep is enabled, each in its own child workflow `card-sweep-<clientId>-<date>`,
 * `parallelSweeps` at a time: a slow or failing account holds one lane, never the others. When Temporal
 * suggests starting the history over, it continues as new, handing a day's sweep under way to the next
 * run (`unfinished`), which sweeps the accounts left before anything else: each is swept once a day.
 */
export async function cardHealthSweepWorkflow(unfinished?: UnfinishedSweep): Promise<void> {
  let left: UnfinishedSweep | null = null;
  const sweep = async (day: string, accountIds: readonly string[]) => {
    const rest = await sweepAccounts(day, accountIds);
    if (rest.length > 0) left = { day, accountIds: rest };
  };
  if (unfinished) await sweep(unfinished.day, unfinished.accountIds);
  if (!left)
    await everyDay(
      async (nowMs) => sweep(sweepDay(nowMs), await cardSweepTargets()),
      () => left !== null || historyFull(),
    );
  await continueAsNew<typeof cardHealthSweepWorkflow>(...(left ? [left] : []));
}
