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

const { cardSweepPage, cardSweepTargets } = proxyActivities<Activities>({
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
 * A day's sweep a run left to its next one, to start its history over. Paged: the last page of accounts
 * fetched (`after`, its last id; null: none yet) and those of it not taken on yet, so it is never larger
 * than a page. A run of earlier code left every account it had not taken on (`accountIds`, no `after`).
 */
export interface UnfinishedSweep {
  day: string;
  after?: string | null;
  accountIds: string[];
}

/**
 * Accounts fetched at once, in id order, after the last one fetched: an activity's result and a run's input
 * must stay far below Temporal's 2 MB a payload (100 ids are a few kB), however many accounts there are.
 */
export const cardSweepPageSize = 100;

/** Workflow version: the daily sweep starts its history over when Temporal suggests it, also mid-day. */
const historyFullPatch = 'card-sweep-history-full';

/** Workflow version: the daily sweep pages through the accounts instead of reading them all at once. */
const pagesPatch = 'card-sweep-pages';

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
 * returns those not taken on (sweeps under way when it fills up are waited for). Earlier code's sweep of
 * a day, all its accounts read at once, kept step for step for the runs that began a day so.
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

/** `sweepAccounts`, as a day's sweep left unfinished (old shape: every account it had left). */
async function sweepListed(day: string, accountIds: readonly string[]): Promise<UnfinishedSweep | null> {
  const rest = await sweepAccounts(day, accountIds);
  return rest.length > 0 ? { day, accountIds: rest } : null;
}

/**
 * Sweeps a day's accounts page by page from `from` on, until the last page is done or the history is full;
 * returns what is left (sweeps under way when it fills up are waited for). A lane that finds the page
 * taken fetches the next (the others wait for it), so a slow account holds one lane, never a page's end.
 * An account enabled later that day is swept that day too if it sorts after the pages already fetched.
 */
async function sweepPages(from: UnfinishedSweep): Promise<UnfinishedSweep | null> {
  const { day } = from;
  const waiting = [...from.accountIds];
  let after = from.after ?? null;
  let more = true; // Whether a page may follow `after`.
  let fetching: Promise<void> | null = null;
  const fetchPage = async () => {
    const page = await cardSweepPage({ after, limit: cardSweepPageSize });
    waiting.push(...page);
    after = page.at(-1) ?? after;
    more = page.length === cardSweepPageSize;
    fetching = null;
  };
  const next = async (): Promise<string | undefined> => {
    for (;;) {
      if (historyFull()) return undefined;
      const id = waiting.shift();
      if (id !== undefined || !more) return id;
      await (fetching ??= fetchPage());
    }
  };
  const lane = async () => {
    for (let id = await next(); id !== undefined; id = await next()) await sweepOnce(id, day);
  };
  await Promise.all(Array.from({ length: parallelSweeps }, lane));
  return waiting.length > 0 || more ? { day, after, accountIds: waiting } : null;
}

/**
 * One day's sweep. (`patched` asked as it starts: a day an earlier worker began reading every account
 * at once replays so, and a run of earlier code under way pages from its next day on.)
 */
async function sweepDayOf(day: string): Promise<UnfinishedSweep | null> {
  if (patched(pagesPatch)) return sweepPages({ day, after: null, accountIds: [] });
  return sweepListed(day, await cardSweepTargets());
}

/**
 * The deployment's daily card health sweep (started by every worker, once): each day at the sweep hour it
 * sweeps every account whose sweep is enabled, each in its own child workflow `card-sweep-<clientId>-<date>`,
 * `parallelSweeps` at a time: a slow or failing account holds one lane, never the others. It reads the
 * accounts a page at a time, in id order. When Temporal suggests starting the history over, it continues
 * as new, handing a day's sweep under way to the next run (`unfinished`: where the paging was, and the
 * accounts of the last page not yet taken on), which goes on from there before anything else: each
 * account is swept once a day. A run of earlier code hands over every account it had left, swept as such.
 */
export async function cardHealthSweepWorkflow(unfinished?: UnfinishedSweep): Promise<void> {
  let left: UnfinishedSweep | null = null;
  if (unfinished)
    left = await (unfinished.after === undefined
      ? sweepListed(unfinished.day, unfinished.accountIds)
      : sweepPages(unfinished));
  if (!left)
    await everyDay(
      async (nowMs) => {
        left = await sweepDayOf(sweepDay(nowMs));
      },
      () => left !== null || historyFull(),
    );
  await continueAsNew<typeof cardHealthSweepWorkflow>(...(left ? [left] : []));
}
