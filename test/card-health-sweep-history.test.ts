import type { temporal } from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cardHealthSweepWorkflowId,
  cardSweepWorkflowId,
  nextSweepAt,
  sweepDay,
} from '../domain/card-health.js';
import { cardHealthSweepWorkflow } from '../workflows/card-health-sweep.js';
import { poll } from './support/poll.js';
import type { Stack } from './support/stack.js';
import { skipTo, stackOnTimeSkipping, startTimeSkipping } from './support/time-skipping.js';

// The daily card health sweep of a deployment with many accounts: each account's child sweep adds about 7
// events to the sweep's history, and Temporal ends a workflow at 51,200. The time-skipping server suggests
// continuing as new past 4,096 events, which one day of 760 accounts goes past on its own.

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

describe('the daily card health sweep of many accounts', () => {
  it(
    'continues as new in the middle of a day when Temporal suggests it, and the next run sweeps the accounts left: each once',
    {
      timeout: 300_000,
    },
    async () => {
      const now = new Date(await env.currentTimeMs());
      await skipTo(env, Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1, 12));
      const created = [];
      for (let i = 0; i < accounts; i += 1)
        created.push(await stack.createAccount({ cardHealthSweep: { enabled: true, daysBeforeExpiry: 7 } }));
      const workflowId = cardHealthSweepWorkflowId(stack.queues.recovery);
      const first = await env.client.workflow.start(cardHealthSweepWorkflow, {
        workflowId,
        taskQueue: stack.queues.recovery,
      });

      const sweepAt = nextSweepAt(await env.currentTimeMs());
      await skipTo(env, sweepAt + 60_000);
      const runs = await poll(
        () => runsFrom(workflowId, first.firstExecutionRunId),
        (r) => childSweeps(r).length >= accounts,
        { timeoutMs: 240_000, everyMs: 1_000 },
      );

      // That day's sweep took two runs or more, each ending well short of Temporal's limit.
      expect(runs.length).toBeGreaterThan(1);
      for (const events of runs.slice(0, -1)) expect(events.length).toBeLessThan(4_400);
      const day = sweepDay(sweepAt);
      expect(childSweeps(runs).sort()).toEqual(
        created.map((c) => cardSweepWorkflowId(c.account.id, day)).sort(),
      );
    },
  );
});
