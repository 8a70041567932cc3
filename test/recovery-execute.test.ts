import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startStack, type Stack } from './support/stack.js';

let stack: Stack;
let key: string;
let n = 0;
/** A fresh amount per request keeps the 5-minute velocity rule out of unrelated tests. */
const amount = () => 1000 + (n += 1);

beforeAll(async () => {
  stack = await startStack();
  key = (await stack.createAccount()).apiKey;
});
afterAll(() => stack.close());

describe('execute', () => {
  it('recovers a technical decline at once: 200, success, primary', async () => {
    const res = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key,
      body: { paymentMethodToken: 'tok_visa', amount: amount(), originalDeclineCode: 'try_again_later' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      success: true,
      error: null,
      strategyUsed: 'primary',
      gatewaysAttempted: 1,
      recoveryEngineApplied: true,
    });
    expect(res.body.ai).toMatchObject({ dataSource: 'static' });
    const status = await call(
      stack.baseUrl,
      'GET',
      `/api/recovery/status/${String(res.body.transactionId)}`,
      { key },
    );
    expect(status.body).toMatchObject({
      status: 'succeeded',
      recovered: true,
      attemptCount: 1,
      strategyUsed: 'primary',
    });
  });
});
