import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRecentPoller } from '../worker/pollers.js';
import { startStack, type Stack } from './support/stack.js';

// What the container health check (worker/healthcheck.ts) and `npm start`'s readiness wait rely on.
let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.close());

describe('hasRecentPoller', () => {
  it('sees the workers of this host polling each of their task queues', async () => {
    for (const queue of Object.values(stack.queues)) {
      await expect
        .poll(() => hasRecentPoller(stack.temporal, queue, { now: new Date() }), { timeout: 10_000 })
        .toBe(true);
      expect(
        await hasRecentPoller(stack.temporal, queue, { now: new Date(), identitySuffix: `@${hostname()}` }),
      ).toBe(true);
    }
  });

  it('does not count another host, a queue nobody polls, or a poll older than two minutes', async () => {
    const queue = stack.queues.recovery;
    const now = new Date();
    expect(await hasRecentPoller(stack.temporal, queue, { now, identitySuffix: '@some-other-host' })).toBe(
      false,
    );
    expect(await hasRecentPoller(stack.temporal, `${queue}-unpolled`, { now })).toBe(false);
    const later = new Date(now.getTime() + 3 * 60_000);
    expect(await hasRecentPoller(stack.temporal, queue, { now: later })).toBe(false);
  });
});
