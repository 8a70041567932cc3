import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { searchAttributeKeys } from '../domain/search-attributes.js';
import { call, type Stack } from './support/stack.js';
import { skipTo, stackOnTimeSkipping, startTimeSkipping } from './support/time-skipping.js';

// Operators list recoveries waiting for an attempt with `NextAttemptAt < "…"` in the Temporal UI (README,
// docs/recovery-engine.md): only queued recoveries may carry it.

let env: TestWorkflowEnvironment;
let stack: Stack;

beforeAll(async () => {
  env = await startTimeSkipping();
  stack = await stackOnTimeSkipping(env);
});
afterAll(async () => {
  await stack?.close();
  await env?.teardown();
});

describe('the NextAttemptAt search attribute', () => {
  it.each([
    ['recovered at its retry', 'tok_visa', 'succeeded'],
    ['blocked at its retry', 'tok_decline_stolen_card', 'failed'],
  ])(
    'is set while a recovery is queued and gone once it is %s',
    async (_, paymentMethodToken, finalState) => {
      // Three days before next month's 15th, 10:00 UTC: insufficient funds wait for the payday.
      const now = new Date(await env.currentTimeMs());
      await skipTo(env, Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 12, 10));
      const { apiKey, account } = await stack.createAccount();
      const queued = await call<{ transactionId: string; nextAttemptAt: string }>(
        stack.baseUrl,
        'POST',
        '/api/recovery/execute',
        {
          key: apiKey,
          body: { amount: 2500, paymentMethodToken, originalDeclineCode: 'insufficient_funds' },
        },
      );
      expect(queued.status).toBe(202);
      const doc = await stack.stores.recoveries.find(account.id, queued.body.transactionId);
      const handle = env.client.workflow.getHandle(doc!.workflowId);
      const waiting = (await handle.describe()).typedSearchAttributes;
      expect(waiting.get(searchAttributeKeys.nextAttemptAt)?.toISOString()).toBe(queued.body.nextAttemptAt);

      await handle.result();
      const ended = (await handle.describe()).typedSearchAttributes;
      expect(ended.get(searchAttributeKeys.recoveryState)).toBe(finalState);
      expect(ended.get(searchAttributeKeys.nextAttemptAt)).toBeUndefined();
    },
  );
});
