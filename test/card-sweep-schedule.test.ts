import { Client, WorkflowNotFoundError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CardSweepResult } from '../activities/card-sweep.js';
import { cardSweepWorkflowId, sweepDay, sweepHourUtc } from '../domain/card-health.js';
import { ensureDailyWorkflows } from '../services/card-sweep.js';
import { cardOnFile } from './support/cards.js';
import type { Stack } from './support/stack.js';
import { skipTo, stackOnTimeSkipping, startTimeSkipping } from './support/time-skipping.js';
import { startReceiver, type Receiver } from './support/webhook-receiver.js';

// The daily card health sweep on Temporal's time-skipping server: a month of daily sweeps in seconds, with
// the real workers, activities and FerretDB.

let env: TestWorkflowEnvironment;
let stack: Stack;
let receiver: Receiver;
const day = 86_400_000;

beforeAll(async () => {
  env = await startTimeSkipping();
  stack = await stackOnTimeSkipping(env);
  receiver = await startReceiver({ now: () => env.currentTimeMs() });
});
afterAll(async () => {
  await receiver?.close();
  await stack?.close();
  await env?.teardown();
});

/**
 * The result of an account's sweep of the day of `at`, read with a plain client: the environment's own
 * client would let the server skip time while it waits, and run days the test has not reached yet.
 */
async function sweepOf(accountId: string, at: number): Promise<CardSweepResult> {
  return new Client({ connection: env.connection }).workflow
    .getHandle<() => Promise<CardSweepResult>>(cardSweepWorkflowId(accountId, sweepDay(at)))
    .result();
}

describe('the daily card health sweep', () => {
  it('warns about a card on the first day it is within daysBeforeExpiry, once, and sweeps only enabled accounts, day after day', async () => {
    const now = new Date(await env.currentTimeMs());
    // Noon on the 1st of next month; the card is valid to the end of that month.
    const start = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1, 12);
    const expiry = { expMonth: new Date(start).getUTCMonth() + 1, expYear: new Date(start).getUTCFullYear() };
    const lastValidDay = Date.UTC(expiry.expYear, expiry.expMonth, 0);
    const warningDay = lastValidDay - 7 * day; // 7 days before: daysBeforeExpiry
    await skipTo(env, start);

    const saveCard = (accountId: string, token: string) =>
      stack.stores.sandbox.saveCard(cardOnFile(accountId, token, { now: new Date(start), expires: expiry }));
    // Ahead of it: three accounts whose gateway cannot be reached (their sweep is enabled on the warning
    // day), each sweep failing for half an hour in its own lane, and a sound account with nothing to sweep.
    const broken = await Promise.all(
      [1, 2, 3].map(() =>
        stack.createAccount({}, [
          {
            name: 'stripe',
            kind: 'stripe',
            test: false,
            credentials: { secretKey: 'sk_test_unreachable', apiBase: 'http://127.0.0.1:9' },
          },
        ]),
      ),
    );
    await stack.createAccount({ cardHealthSweep: { enabled: true, daysBeforeExpiry: 7 } });
    const on = await stack.createAccount({
      webhookUrl: receiver.url,
      cardHealthSweep: { enabled: true, daysBeforeExpiry: 7 },
    });
    const off = await stack.createAccount({ webhookUrl: receiver.url });
    await saveCard(on.account.id, `tok_visa_on_${on.account.id}`);
    await saveCard(off.account.id, `tok_visa_off_${off.account.id}`);

    const workflowId = (await ensureDailyWorkflows(env.client, stack.queues)).cardHealthSweep;
    const firstRun = (await env.client.workflow.getHandle(workflowId).describe()).runId;
    const warnings = async (accountId: string) =>
      (await stack.stores.events.list({ accountId, limit: 100 })).filter(
        (e) => e.type === 'card.expiring_soon',
      );

    // The day before the card enters the window: swept, nothing to warn about.
    await skipTo(env, warningDay - day + 12 * 3_600_000);
    expect(await warnings(on.account.id)).toHaveLength(0);
    expect(await sweepOf(on.account.id, warningDay - day)).toMatchObject({
      outcome: 'swept',
      cards: 1,
      expiringSoon: 0,
      warned: 0,
    });

    const sweepBroken = (enabled: boolean) =>
      Promise.all(
        broken.map((b) =>
          stack.stores.accounts.updateSettings(b.account.id, {
            ...b.account.settings,
            cardHealthSweep: { enabled, daysBeforeExpiry: 7 },
          }),
        ),
      );
    await sweepBroken(true);

    // That day's sweep at the sweep hour warns, with 7 days to go: at once, not after the failing sweeps
    // (four lanes: the sound account's frees one at once).
    await skipTo(env, warningDay + 12 * 3_600_000);
    const [warning, ...more] = await warnings(on.account.id);
    expect(more).toHaveLength(0);
    const sweptAt = warningDay + sweepHourUtc * 3_600_000;
    expect(warning!.createdAt.getTime()).toBeGreaterThanOrEqual(sweptAt);
    expect(warning!.createdAt.getTime() - sweptAt).toBeLessThan(5 * 60_000);
    expect(warning!.payload).toMatchObject({
      event: 'card.expiring_soon',
      paymentMethodToken: `tok_visa_on_${on.account.id}`,
      daysUntilExpiry: 7,
      preemptive: true,
      customerEmail: 'ada@example.com',
    });
    expect(await sweepOf(on.account.id, warningDay)).toMatchObject({ expiringSoon: 1, warned: 1 });
    // The unreachable gateways' sweeps were given up on that day (the Temporal UI shows them failed).
    for (const b of broken) {
      const handle = env.client.workflow.getHandle(cardSweepWorkflowId(b.account.id, sweepDay(warningDay)));
      expect((await handle.describe()).status.name).toBe('FAILED');
    }
    await sweepBroken(false);

    // Every later day sees the card again, and never warns twice; after it expires it is no longer counted.
    await skipTo(env, lastValidDay + 3 * day);
    expect(await warnings(on.account.id)).toHaveLength(1);
    expect(await sweepOf(on.account.id, warningDay + day)).toMatchObject({ expiringSoon: 1, warned: 0 });
    expect(await sweepOf(on.account.id, lastValidDay)).toMatchObject({ expiringSoon: 1, warned: 0 });
    expect(await sweepOf(on.account.id, lastValidDay + day)).toMatchObject({ cards: 1, expiringSoon: 0 });

    // The account whose sweep is off is never swept, on any day.
    expect(await warnings(off.account.id)).toHaveLength(0);
    await expect(sweepOf(off.account.id, warningDay)).rejects.toBeInstanceOf(WorkflowNotFoundError);

    // A month of days later the daily workflow has started a new history and goes on sweeping.
    await skipTo(env, start + 33 * day);
    const latest = await env.client.workflow.getHandle(workflowId).describe();
    expect(latest.status.name).toBe('RUNNING');
    expect(latest.runId).not.toBe(firstRun);
    expect(await sweepOf(on.account.id, start + 32 * day)).toMatchObject({ outcome: 'swept', cards: 1 });
    await env.client.workflow.getHandle(workflowId).terminate('test done');
  });
});
