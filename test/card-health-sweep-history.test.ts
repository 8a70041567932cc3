import { defaultPayloadConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cardSweepActivities } from '../activities/card-sweep.js';
import {
  cardHealthSweepWorkflowId,
  cardSweepWorkflowId,
  nextSweepAt,
  sweepDay,
} from '../domain/card-health.js';
import { Settings } from '../domain/settings.js';
import {
  cardHealthSweepWorkflow,
  cardSweepPageSize,
  type UnfinishedSweep,
} from '../workflows/card-health-sweep.js';
import { poll } from './support/poll.js';
import { activityDeps, unreachableWebhookUrl, type Stack } from './support/stack.js';
import { skipTo, stackOnTimeSkipping, startTimeSkipping } from './support/time-skipping.js';

// The daily card health sweep of a deployment with many accounts: each account's child sweep adds about 7
// events to the sweep's history, and Temporal ends a workflow at 51,200. The time-skipping server suggests
// continuing as new past 4,096 events, which one day of 760 accounts goes past on its own. Temporal also
// refuses a payload over 2 MB (about 50,000 account ids): the sweep reads the accounts a page at a time,
// and a run hands the next one no more than a page.

let env: TestWorkflowEnvironment;
let stack: Stack;
const accounts = 760;

beforeAll(async () => {
  env = await startTimeSkipping();
  stack = await stackOnTimeSkipping(env);
});
afterAll(async () => {
  await stack?.close();
  await env?.teardown();
});

type Event = temporal.api.history.v1.IHistoryEvent;

/** The events of each run of the daily sweep, from `runId` on, following its continue-as-new chain. */
async function runsFrom(workflowId: string, runId: string): Promise<Event[][]> {
  const runs: Event[][] = [];
  for (let run: string | null | undefined = runId; run;) {
    const { events } = await env.client.workflow.getHandle(workflowId, run).fetchHistory();
    runs.push(events ?? []);
    run = events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
  }
  return runs;
}

const childSweeps = (runs: Event[][]) =>
  runs.flat().flatMap((e) => e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId ?? []);

const decode = (payloads: temporal.api.common.v1.IPayloads | null | undefined): unknown => {
  const [payload] = payloads?.payloads ?? [];
  return payload ? defaultPayloadConverter.fromPayload(payload) : undefined;
};

/** What a run was handed by the one before it (its continue-as-new input); undefined for none. */
const inputOf = (events: Event[]) =>
  decode(events[0]?.workflowExecutionStartedEventAttributes?.input) as UnfinishedSweep | undefined;

/** Each activity a run completed: its type and its result. */
function activityResults(events: Event[]): Array<{ type: string; result: unknown }> {
  const types = new Map<string, string>();
  for (const e of events) {
    const scheduled = e.activityTaskScheduledEventAttributes;
    if (scheduled) types.set(String(e.eventId), scheduled.activityType?.name ?? '');
  }
  return events.flatMap((e) => {
    const completed = e.activityTaskCompletedEventAttributes;
    if (!completed) return [];
    return [{ type: types.get(String(completed.scheduledEventId)) ?? '', result: decode(completed.result) }];
  });
}

const sweepOn = { cardHealthSweep: { enabled: true, daysBeforeExpiry: 7 } };

/** An account whose sweep is enabled, with this id (to sort where a test needs it). */
const createWithId = (id: string) =>
  stack.stores.accounts.create({
    id,
    name: 'Test merchant',
    settings: Settings.parse({ webhookUrl: unreachableWebhookUrl, ...sweepOn }),
    gateways: [{ name: 'test', kind: 'test', test: true, credentials: {} }],
  });

describe('the daily card health sweep of many accounts', () => {
  it('reads the accounts whose sweep is enabled a page at a time, in id order, after the last one read', async () => {
    const activities = cardSweepActivities(activityDeps(stack));
    for (let i = 0; i < 10; i += 1) await stack.createAccount(sweepOn);
    const off = await stack.createAccount();
    const closing = await stack.createAccount(sweepOn);
    await stack.stores.accounts.shut(closing.account.id);

    const limit = 7;
    const pages: string[][] = [];
    let after: string | null = null;
    for (;;) {
      const page: string[] = await activities.cardSweepPage({ after, limit });
      pages.push(page);
      // Enabled after the first page was read: one sorting before it (read the next day), one after.
      if (pages.length === 1) await Promise.all(['acct_0', 'acct_zzzz'].map(createWithId));
      if (page.length < limit) break;
      after = page.at(-1)!;
    }
    const read = pages.flat();
    for (const page of pages) expect(page.length).toBeLessThanOrEqual(limit);
    expect(pages.length).toBeGreaterThan(1);
    expect(read).toEqual([...read].sort());
    expect(new Set(read).size).toBe(read.length);
    expect(read).toContain('acct_zzzz');
    expect(read).not.toContain('acct_0');
    expect(read).not.toContain(off.account.id);
    expect(read).not.toContain(closing.account.id);
    // Exactly the accounts read all at once, but for the one enabled before the pages already read.
    const everyOne = await stack.stores.accounts.sweepEnabled();
    expect(read).toEqual(everyOne.filter((id) => id !== 'acct_0').sort());
  });

  it(
    'continues as new in the middle of a day when Temporal suggests it, handing the next run no more than a page of accounts: each swept once',
    {
      timeout: 420_000,
    },
    async () => {
      const now = new Date(await env.currentTimeMs());
      await skipTo(env, Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1, 12));
      for (let i = 0; i < accounts; i += 1) await stack.createAccount(sweepOn);
      const workflowId = cardHealthSweepWorkflowId(stack.queues.recovery);
      const first = await env.client.workflow.start(cardHealthSweepWorkflow, {
        workflowId,
        taskQueue: stack.queues.recovery,
      });

      const sweepAt = nextSweepAt(await env.currentTimeMs());
      const day = sweepDay(sweepAt);
      const runs = () => runsFrom(workflowId, first.firstExecutionRunId);
      // To the sweep hour only: the server skips no further while the sweep is under way.
      await skipTo(env, sweepAt);
      await poll(runs, (r) => childSweeps(r).length >= cardSweepPageSize, { timeoutMs: 120_000 });
      // Enabled once that day's sweep is under way, with an id that sorts after every other: its page is
      // yet to be read, so it is swept that day too.
      const late = await createWithId('acct_zzzzzzzzzzzzzzzzzzzzzzzz');
      const expected = (await stack.stores.accounts.sweepEnabled()).map((id) => cardSweepWorkflowId(id, day));
      expect(expected).toContain(cardSweepWorkflowId(late.account.id, day));
      expect(expected.length).toBeGreaterThan(accounts);
      const all = await poll(runs, (r) => childSweeps(r).length >= expected.length, {
        timeoutMs: 240_000,
        everyMs: 1_000,
      });

      // That day's sweep took two runs or more, each ending well short of Temporal's limit.
      expect(all.length).toBeGreaterThan(1);
      for (const events of all.slice(0, -1)) expect(events.length).toBeLessThan(4_400);

      // No payload grows with the number of accounts: each activity read one page (the accounts read
      // through several), and each run was handed where the paging was and no more than a page.
      const results = all.flatMap(activityResults);
      const pages = results.map((r) => r.result as string[]);
      const handed = all.slice(1).flatMap((events) => inputOf(events) ?? []);
      expect
        .soft(Math.max(...pages.map((p) => p.length)), 'the largest activity result')
        .toBeLessThanOrEqual(cardSweepPageSize);
      expect
        .soft(Math.max(...handed.map((h) => h.accountIds.length)), 'the largest continue-as-new input')
        .toBeLessThanOrEqual(cardSweepPageSize);
      expect(new Set(results.map((r) => r.type))).toEqual(new Set(['cardSweepPage']));
      expect(pages.length).toBeGreaterThanOrEqual(Math.ceil(expected.length / cardSweepPageSize));
      expect(handed.length).toBeGreaterThan(0);
      for (const input of handed) expect(input).toMatchObject({ day, after: expect.any(String) });

      // Every account, the late one too, swept exactly once that day: one child each, none refused as
      // already started, each completed.
      expect(childSweeps(all).sort()).toEqual(expected.sort());
      expect(all.flat().filter((e) => e.startChildWorkflowExecutionFailedEventAttributes)).toEqual([]);
      const completed = await poll(
        runs,
        (r) =>
          r.flat().filter((e) => e.childWorkflowExecutionCompletedEventAttributes).length >= expected.length,
        { timeoutMs: 60_000, everyMs: 1_000 },
      );
      expect(
        completed
          .flat()
          .flatMap(
            (e) => e.childWorkflowExecutionCompletedEventAttributes?.workflowExecution?.workflowId ?? [],
          )
          .sort(),
      ).toEqual(expected);
      await env.client.workflow.getHandle(workflowId).terminate('test done');
    },
  );

  it('a run handed a day under way goes on from it: the rest of a page and the pages after it, or the accounts a run of earlier code listed', async () => {
    // Sorting after every other account, in this order.
    const [x1, x2, x3, x4] = ['1', '2', '3', '4'].map((n) => `acct_zzzzzzzzzzzzzzzzzzzzzzzz${n}`);
    for (const id of [x1!, x2!, x3!, x4!]) await createWithId(id);
    const now = await env.currentTimeMs();
    const handedOver = async (name: string, unfinished: UnfinishedSweep) => {
      const handle = await env.client.workflow.start(cardHealthSweepWorkflow, {
        workflowId: `${cardHealthSweepWorkflowId(stack.queues.recovery)}-${name}`,
        taskQueue: stack.queues.recovery,
        args: [unfinished],
      });
      const runs = () => runsFrom(handle.workflowId, handle.firstExecutionRunId);
      // Swept, once it waits for the next day's sweep hour (its one timer; the server skips no time here).
      await poll(runs, (r) => r.flat().some((e) => e.timerStartedEventAttributes), { timeoutMs: 60_000 });
      const [events, ...later] = await runs();
      await handle.terminate('test done');
      expect(later).toEqual([]);
      return { swept: childSweeps([events!]), pages: activityResults(events!) };
    };

    // Paged: the rest of the page that ended at x2, then the pages after it; x1 was taken before.
    const paged = sweepDay(now + 2 * 86_400_000);
    expect(await handedOver('paged', { day: paged, after: x2!, accountIds: [x2!] })).toEqual({
      swept: [x2, x3, x4].map((id) => cardSweepWorkflowId(id!, paged)),
      pages: [{ type: 'cardSweepPage', result: [x3, x4] }],
    });

    // Earlier code's shape (no `after`): the accounts it listed, and no others that day.
    const listed = sweepDay(now + 3 * 86_400_000);
    expect(await handedOver('listed', { day: listed, accountIds: [x1!, x3!] })).toEqual({
      swept: [x1, x3].map((id) => cardSweepWorkflowId(id!, listed)),
      pages: [],
    });
  });
});
