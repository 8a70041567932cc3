import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RecoveryRequest } from '../domain/recovery-request.js';
import { cardKeyOf } from '../runtime/crypto.js';
import { call, startStack, type Stack } from './support/stack.js';

// A customer with more recoveries than any one read of the customer index used to take (500): the paywall
// and the listing of their recoveries still see every one.

let stack: Stack;
let apiKey: string;
const email = 'many@example.com';
const count = 502;
const base = Date.parse('2026-01-05T10:00:00Z');
/** The customer's recoveries, oldest first: the oldest still owed, every later one recovered. */
const ids: string[] = [];

beforeAll(async () => {
  stack = await startStack({ worker: false });
  const created = await stack.createAccount();
  apiKey = created.apiKey;
  const { account } = created;
  const { recoveries } = stack.stores;
  for (let i = 0; i < count; i += 1) {
    const transactionId = randomUUID();
    const at = new Date(base + i * 60_000);
    const token = `tok_many_${i}`;
    await recoveries.create({
      transactionId,
      accountId: account.id,
      workflowId: `recovery/${account.id}/${transactionId}`,
      cardKey: cardKeyOf(account.id, token),
      request: RecoveryRequest.parse({ paymentMethodToken: token, amount: 1000 + i, customerEmail: email }),
      isSimulated: account.testMode,
      now: at,
    });
    await recoveries.update(
      transactionId,
      i === 0
        ? { state: 'failed', endedAt: at }
        : { state: 'succeeded', recoveredAt: at, endedAt: at, strategyUsed: 'primary' },
      at,
    );
    ids.push(transactionId);
  }
}, 300_000);
afterAll(() => stack.close());

const get = (path: string) => call(stack.baseUrl, 'GET', path, { key: apiKey });
const customer = `customerEmail=${encodeURIComponent(email)}`;

describe(`a customer with ${count} recoveries`, () => {
  it('is past due for the oldest one, still unpaid, on the paywall and to the risk screen', async () => {
    expect((await get(`/api/recovery/paywall-status?${customer}`)).body).toEqual({
      isPastDue: true,
      totalOwedCents: 1000,
      currency: 'USD',
      failedPaymentCount: 1,
      oldestFailureAt: new Date(base).toISOString(),
      byCurrency: { USD: 1000 },
    });
    const risk = await call(stack.baseUrl, 'POST', '/api/predict/risk', {
      key: apiKey,
      body: {
        paymentMethodToken: 'tok_visa',
        amount: 1999,
        customerEmail: email,
        scheduledDate: '2026-12-09',
      },
    });
    const { factors } = risk.body.prediction as { factors: Array<{ factor: string }> };
    expect(factors.map((f) => f.factor)).toEqual(['customer_past_due']);
  });

  it('lists every one, newest first, a page at a time, and by status', async () => {
    const listed: string[] = [];
    let page: { data: Array<{ transactionId: string }>; hasMore: boolean };
    let pages = 0;
    do {
      const before = listed.length > 0 ? `&before=${listed[listed.length - 1]}` : '';
      const res = await get(`/api/recoveries?${customer}&limit=100${before}`);
      expect(res.status).toBe(200);
      page = res.body as typeof page;
      listed.push(...page.data.map((r) => r.transactionId));
      pages += 1;
    } while (page.hasMore && pages < 10);
    expect(pages).toBe(6);
    expect(listed).toEqual([...ids].reverse());
    const failed = await get(`/api/recoveries?${customer}&status=failed`);
    expect(failed.body).toEqual({
      data: [expect.objectContaining({ transactionId: ids[0] })],
      hasMore: false,
    });
  });
});
