import { randomUUID } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cardSweepActivities } from '../activities/card-sweep.js';
import type { Stores } from '../store/index.js';
import { cardOnFile } from './support/cards.js';
import { activityDeps, startStack, type Stack } from './support/stack.js';

// An account closed while its card health sweep pages through its cards: the closure deletes what the sweep
// wrote, so the sweep must write no more once it has begun.

let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.close();
});

/** The stores, but the account is closed as soon as the test gateway has given the sweep its first page of cards. */
function closedAfterFirstPage(accountId: string): Stores {
  const { sandbox, accounts } = stack.stores;
  let pages = 0;
  return {
    ...stack.stores,
    sandbox: {
      ...sandbox,
      listCards: async (...args: Parameters<typeof sandbox.listCards>) => {
        const page = await sandbox.listCards(...args);
        pages += 1;
        if (pages === 1) await accounts.shut(accountId);
        return page;
      },
    },
  };
}

describe('an account closed in the middle of its card health sweep', () => {
  it('is warned about no more: the cards of the pages after the closure are not read', async () => {
    const { account } = await stack.createAccount({
      cardHealthSweep: { enabled: true, daysBeforeExpiry: 30 },
    });
    // A first page (100 cards, in token order) of cards good for years, then one that expires this month.
    const run = randomUUID().slice(0, 8);
    const lasting = { expMonth: 12, expYear: new Date().getUTCFullYear() + 3 };
    await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        stack.stores.sandbox.saveCard(
          cardOnFile(account.id, `tok_visa_${run}_a${String(i).padStart(3, '0')}`, { expires: lasting }),
        ),
      ),
    );
    await stack.stores.sandbox.saveCard(cardOnFile(account.id, `tok_visa_${run}_b_expiring`));

    const activities = cardSweepActivities({
      ...activityDeps(stack),
      stores: closedAfterFirstPage(account.id),
    });
    const result = await new MockActivityEnvironment().run(
      (input: { accountId: string; asOf: number }) => activities.sweepAccountCards(input),
      { accountId: account.id, asOf: Date.now() },
    );
    expect(result).toEqual({ outcome: 'disabled', gateway: 'test', cards: 100, expiringSoon: 0, warned: 0 });
    expect(await stack.stores.events.list({ accountId: account.id, limit: 10 })).toEqual([]);
  });
});
