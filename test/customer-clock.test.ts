import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startStack, type Stack } from './support/stack.js';

// The customer's clock changes with daylight saving; the screen records the changes through the recovery's
// window (test/execute-rules.test.ts) and the workflow plans with them. No real zone changes its offset in
// the weeks after any day this test may run on, so the screen here adds one for a marked customer: their
// clock goes forward an hour two hours after the failure.

const hour = 3_600_000;
const springing = 'spring@example.com';
let stack: Stack;

beforeAll(async () => {
  stack = await startStack({
    activities: (made) => ({
      ...made,
      async screenRecovery(input) {
        const screen = await made.screenRecovery(input);
        if (input.request.customerEmail !== springing) return screen;
        const at = Math.ceil(input.now / hour) * hour + hour;
        return { ...screen, offsetChanges: [{ at, offsetMinutes: screen.offsetMinutes + 60 }] };
      },
    }),
  });
});
afterAll(() => stack.close());

describe('a recovery whose customer’s clock goes forward before its retry', () => {
  it('plans the retry for the same local hour: an hour earlier than on a clock that stays', async () => {
    const { apiKey } = await stack.createAccount();
    let amount = 3000;
    const queued = async (customerEmail: string) => {
      const res = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
        key: apiKey,
        body: {
          paymentMethodToken: 'tok_decline_insufficient_funds',
          originalDeclineCode: 'insufficient_funds',
          amount: (amount += 1),
          customerEmail,
        },
      });
      expect(res.status).toBe(202);
      return Date.parse(String(res.body.nextAttemptAt));
    };
    // Both failures within one clock hour, so both plans weigh the same hours (taken again if they straddle one).
    for (let tries = 0; tries < 3; tries += 1) {
      const hourOf = Math.floor(Date.now() / hour);
      const plain = await queued('steady@example.com');
      const spring = await queued(springing);
      if (Math.floor(Date.now() / hour) !== hourOf) continue;
      expect(plain).toBeGreaterThan(Date.now() + 2 * hour);
      expect(spring).toBe(plain - hour);
      return;
    }
    throw new Error('every pair of failures straddled an hour');
  });
});
