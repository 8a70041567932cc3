import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayConfig } from '../domain/settings.js';
import { eventsOf } from './support/events.js';
import { onServer, submitPage } from './support/pages.js';
import { poll } from './support/poll.js';
import { call, startStack, type Stack } from './support/stack.js';

// Customer-facing rules no other test pinned: the paywall's oldestFailureAt, and a card-update link that
// names a queued recovery on another card than its own (decisions, "Hosted links": the link's transactionId).

let stack: Stack;
let n = 0;
/** A fresh amount per request keeps the 5-minute velocity rule out of unrelated cases. */
const amount = () => 4000 + (n += 1);

/** A test gateway under a name no other test file charges: its sandbox counts are this file's alone. */
const gateway = (name: string): GatewayConfig => ({ name, kind: 'test', test: true, credentials: {} });

const execute = (key: string, body: Record<string, unknown>) =>
  call(stack.baseUrl, 'POST', '/api/recovery/execute', { key, body: { amount: amount(), ...body } });

beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.close());

describe('GET /api/recovery/paywall-status: oldestFailureAt', () => {
  it('is the createdAt of the oldest unrecovered failure, not the newest, nor an older recovered one', async () => {
    const { apiKey, account } = await stack.createAccount();
    const customerEmail = 'oldest@example.com';
    const recordOf = async (res: { body: Record<string, unknown> }) =>
      (await stack.stores.recoveries.find(account.id, String(res.body.transactionId)))!;

    // Recovered at once: paid, so not a failure the paywall counts.
    const paid = await execute(apiKey, {
      customerEmail,
      paymentMethodToken: 'tok_gaps_paid',
      originalDeclineCode: 'try_again_later',
    });
    expect(paid.body).toMatchObject({ success: true });
    // Then two failures queued for later retries, one after the other.
    const older = await execute(apiKey, {
      customerEmail,
      paymentMethodToken: 'tok_gaps_older',
      originalDeclineCode: 'insufficient_funds',
    });
    const newer = await execute(apiKey, {
      customerEmail,
      paymentMethodToken: 'tok_gaps_newer',
      originalDeclineCode: 'do_not_honor',
    });
    expect([older.status, newer.status]).toEqual([202, 202]);
    const [paidAt, olderAt, newerAt] = [
      (await recordOf(paid)).createdAt,
      (await recordOf(older)).createdAt,
      (await recordOf(newer)).createdAt,
    ];
    expect(paidAt.getTime()).toBeLessThan(olderAt.getTime());
    expect(olderAt.getTime()).toBeLessThan(newerAt.getTime());

    const res = await call(
      stack.baseUrl,
      'GET',
      `/api/recovery/paywall-status?customerEmail=${encodeURIComponent(customerEmail)}`,
      { key: apiKey },
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      isPastDue: true,
      failedPaymentCount: 2,
      oldestFailureAt: olderAt.toISOString(),
    });
    expect(res.body.totalOwedCents).toBe((await recordOf(older)).amount + (await recordOf(newer)).amount);
  });
});

describe('a card-update link naming a queued recovery on another card (decisions: the link’s transactionId)', () => {
  it('completing the link retries that recovery at once with the new card; its own card is not charged', async () => {
    const gw = 'gaps-link';
    const { apiKey, account } = await stack.createAccount({}, [gateway(gw)]);
    // Queued on card A (insufficient funds waits for a better time)…
    const queued = await execute(apiKey, {
      paymentMethodToken: 'tok_gaps_link_card_a',
      originalDeclineCode: 'insufficient_funds',
    });
    expect(queued.status).toBe(202);
    const transactionId = String(queued.body.transactionId);
    // …and a link for card B, which no recovery is queued on, naming A's recovery.
    const link = await call<{ url: string; token: string }>(
      stack.baseUrl,
      'POST',
      '/api/recovery/update-card/generate',
      { key: apiKey, body: { paymentMethodToken: 'tok_gaps_link_card_b', transactionId } },
    );
    expect(link.status).toBe(200);

    const page = await submitPage(onServer(stack.baseUrl, link.body.url), {
      number: '4242 4242 4242 4242',
      expiry: '12/34',
      cvc: '123',
    });
    expect(page.status).toBe(200);
    const events = await eventsOf(stack, account.id, ['card.updated', 'recovery.success']);
    const updated = events.find((e) => e.type === 'card.updated')!.payload;
    expect(updated).toMatchObject({
      oldPaymentMethodToken: 'tok_gaps_link_card_b',
      newPaymentMethodToken: expect.stringMatching(/^tok_visa_/) as string,
    });
    if (updated.event !== 'card.updated') throw new Error('expected card.updated');
    const newCard = updated.newPaymentMethodToken;

    const done = await poll(
      () => stack.stores.recoveries.find(account.id, transactionId),
      (doc) => doc?.state === 'succeeded',
    );
    expect(done).toMatchObject({ state: 'succeeded', attempts: [{ gateway: gw, outcome: 'approved' }] });
    const charge = await stack.stores.db
      .collection('sandboxCharges')
      .findOne({ transactionId: done!.gatewayTransactionId });
    expect(charge).toMatchObject({ gateway: gw, token: newCard, amount: done!.amount, approved: true });
    expect(await stack.stores.sandbox.countForToken(gw, newCard)).toBe(1);
    expect(await stack.stores.sandbox.countForToken(gw, 'tok_gaps_link_card_a')).toBe(0);
    expect(events.find((e) => e.type === 'recovery.success')!.payload).toMatchObject({
      serviceTransactionId: transactionId,
    });
  });
});
