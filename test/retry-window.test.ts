import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type Stack } from './support/stack.js';
import { stackOnTimeSkipping, startTimeSkipping } from './support/time-skipping.js';

// retryPolicy.maxDays (decisions, account settings) bounds a recovery in time as maxAttempts bounds it in
// attempts. On Temporal's time-skipping server, with the real API, workers, activities and FerretDB.

let env: TestWorkflowEnvironment;
let stack: Stack;
let n = 0;
const amount = () => 5000 + (n += 1);
const day = 86_400_000;

beforeAll(async () => {
  env = await startTimeSkipping();
  stack = await stackOnTimeSkipping(env);
});
afterAll(async () => {
  await stack?.close();
  await env?.teardown();
});

/** Runs a recovery that declines every time to its end on an account with `retryPolicy`. */
async function failingRecovery(retryPolicy: { maxAttempts: number; maxDays: number }) {
  // riskSkipThreshold 100: only the retry policy ends the recovery, never a skip for low odds.
  const { apiKey, account } = await stack.createAccount({ retryPolicy, riskSkipThreshold: 100 });
  const answer = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
    key: apiKey,
    body: {
      amount: amount(),
      paymentMethodToken: 'tok_decline_do_not_honor',
      originalDeclineCode: 'do_not_honor',
    },
  });
  expect(answer.status).toBe(202);
  const id = String(answer.body.transactionId);
  const handle = env.client.workflow.getHandle(
    (await stack.stores.recoveries.find(account.id, id))!.workflowId,
  );
  await handle.result();
  const startedAt = (await handle.describe()).startTime.getTime();
  const final = (await stack.stores.recoveries.find(account.id, id))!;
  const events = await stack.stores.events.list({ accountId: account.id, limit: 100 });
  return { id, final, startedAt, times: final.attempts.map((a) => a.at.getTime()), events };
}

describe('retryPolicy.maxDays', () => {
  it('{ maxAttempts: 20, maxDays: 3 }: every attempt falls within 3 days of the start, then the recovery fails', async () => {
    const out = await failingRecovery({ maxAttempts: 20, maxDays: 3 });
    expect(out.final).toMatchObject({
      state: 'failed',
      strategyUsed: 'all_failed',
      recommendedAction: 'retry_later',
    });
    // The days ran out before the attempts did.
    expect(out.times.length).toBeGreaterThan(0);
    expect(out.times.length).toBeLessThan(20);
    for (const t of out.times) {
      expect(t).toBeGreaterThanOrEqual(out.startedAt);
      expect(t - out.startedAt).toBeLessThanOrEqual(3 * day);
    }
    expect(out.final.endedAt).toBeInstanceOf(Date);
    expect(out.final.endedAt!.getTime() - out.startedAt).toBeLessThanOrEqual(3 * day);
    expect(out.events.filter((e) => e.type === 'recovery.failed').map((e) => e.payload)).toEqual([
      expect.objectContaining({ serviceTransactionId: out.id, recommendedAction: 'retry_later' }),
    ]);
  });

  it('the same recovery with maxDays 21 goes on past day 3 (the control case: the bound above is the setting’s)', async () => {
    const out = await failingRecovery({ maxAttempts: 8, maxDays: 21 });
    expect(out.final.state).toBe('failed');
    expect(out.times).toHaveLength(8);
    expect(Math.max(...out.times) - out.startedAt).toBeGreaterThan(3 * day);
    expect(Math.max(...out.times) - out.startedAt).toBeLessThanOrEqual(21 * day);
  });
});
