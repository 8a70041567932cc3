import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDailyWorkflows } from '../services/card-sweep.js';
import { call, type Stack } from './support/stack.js';
import { skipTo, stackOnTimeSkipping, startTimeSkipping } from './support/time-skipping.js';

// The daily data retention on Temporal's time-skipping server: three months of days in seconds, with the
// real workers, activities and FerretDB.

let env: TestWorkflowEnvironment;
let stack: Stack;
const day = 86_400_000;

beforeAll(async () => {
  env = await startTimeSkipping();
  stack = await stackOnTimeSkipping(env);
});
afterAll(async () => {
  await stack?.close();
  await env?.teardown();
});

describe('the daily data retention', () => {
  it('deletes an account’s records once they are older than dataRetentionDays, and no one else’s', async () => {
    const start = await env.currentTimeMs();
    const recover = async (settings: Record<string, unknown>) => {
      const { account, apiKey } = await stack.createAccount(settings);
      const res = await call<{ transactionId: string }>(stack.baseUrl, 'POST', '/api/recovery/execute', {
        key: apiKey,
        body: { paymentMethodToken: 'tok_visa', originalDeclineCode: 'try_again_later', amount: 2500 },
      });
      expect(res.status).toBe(200);
      return { accountId: account.id, transactionId: res.body.transactionId };
    };
    const limited = await recover({ dataRetentionDays: 90 });
    const unlimited = await recover({});
    await ensureDailyWorkflows(env.client, stack.queues);
    const kept = async (r: { accountId: string; transactionId: string }) => ({
      recovery: (await stack.stores.recoveries.find(r.accountId, r.transactionId)) !== null,
      // recovery.success to an unreachable endpoint: given up on after 24 hours, then purgeable.
      events: (await stack.stores.events.list({ accountId: r.accountId })).length,
    });

    await skipTo(env, start + 89 * day);
    expect(await kept(limited)).toEqual({ recovery: true, events: 1 });
    await skipTo(env, start + 92 * day);
    expect(await kept(limited)).toEqual({ recovery: false, events: 0 });
    expect(await kept(unlimited)).toEqual({ recovery: true, events: 1 });
  }, 180_000);
});
