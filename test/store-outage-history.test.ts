import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createActivities } from '../activities/index.js';
import { serverClock } from '../scripts/time-skipping.js';
import { createWorkers, runWorkers } from '../worker/create-worker.js';
import { activityDeps, call, type Stack } from './support/stack.js';
import { stackOnTimeSkipping, startTimeSkipping } from './support/time-skipping.js';

// A recovery whose read-model writes fail for minutes (MongoDB failing over, or down): each write is a
// local activity retried until it succeeds. Temporal ends a workflow at 51,200 history events, so the
// retries must not add events at the pace of the worker's heartbeats of the workflow task (every 8 s).

let env: TestWorkflowEnvironment;
let stack: Stack;
let stopWorkers: () => void = () => undefined;
let workersDone: Promise<void> = Promise.resolve();
/** recordRecovery fails this many times, then works: 1+2+4+8+16+32+60 s of backoff, about two minutes. */
const failures = 7;
let failed = 0;

beforeAll(async () => {
  env = await startTimeSkipping();
  stack = await stackOnTimeSkipping(env, { worker: false, firstPhaseDeadlineMs: 1_000 });
  const activities = createActivities({ ...activityDeps(stack), clock: serverClock });
  const workers = await createWorkers({
    connection: env.nativeConnection,
    namespace: 'default',
    queues: stack.queues,
    activities: {
      ...activities,
      recordRecovery: async (input: Parameters<typeof activities.recordRecovery>[0]) => {
        if (failed < failures) {
          failed += 1;
          throw new Error('MongoServerSelectionError: connection refused');
        }
        return activities.recordRecovery(input);
      },
    },
    source: { workflowBundle: { codePath: inject('workflowBundlePath') } },
  });
  workersDone = runWorkers(workers, new Promise<void>((resolve) => (stopWorkers = resolve)));
});
afterAll(async () => {
  stopWorkers();
  await workersDone;
  await stack?.close();
  await env?.teardown();
});

/** Runs a recovery that is charged at once to its end; returns its final state and its history's events. */
async function recover(amount: number) {
  const { apiKey, account } = await stack.createAccount();
  const answer = await call<{ transactionId: string }>(stack.baseUrl, 'POST', '/api/recovery/execute', {
    key: apiKey,
    body: { amount, paymentMethodToken: 'tok_visa', originalDeclineCode: 'try_again_later' },
  });
  const doc = await stack.stores.recoveries.find(account.id, answer.body.transactionId);
  const handle = env.client.workflow.getHandle(doc!.workflowId);
  await handle.result();
  const final = await stack.stores.recoveries.find(account.id, answer.body.transactionId);
  return { state: final?.state, events: (await handle.fetchHistory()).events ?? [] };
}

describe('a recovery while its store writes fail', () => {
  it(
    'waits between retries on workflow timers, so its history hardly grows, and recovers once they work',
    {
      timeout: 240_000,
    },
    async () => {
      const outage = await recover(2500);
      expect(failed).toBe(failures);
      expect(outage.state).toBe('succeeded');
      const sound = await recover(2600);
      expect(sound.state).toBe('succeeded');

      // The retries past 10 s wait on timers (6 events each); the worker heartbeats the workflow task while
      // it holds it (3 events every 8 s) only for the first 15 s. Waiting in the worker for all two minutes
      // had added 47 events.
      expect(outage.events.length - sound.events.length).toBeLessThan(25);
      const timers = outage.events.flatMap(
        (e) => e.timerStartedEventAttributes?.startToFireTimeout?.seconds ?? [],
      );
      expect(timers.map(Number)).toEqual([16, 32, 64]);
    },
  );
});
