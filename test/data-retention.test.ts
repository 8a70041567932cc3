import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError } from '@temporalio/client';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RetentionResult } from '../activities/data-retention.js';
import { createActivities } from '../activities/index.js';
import { Settings } from '../domain/settings.js';
import { purgeAccountData } from '../services/data-retention.js';
import { collections } from '../store/collections.js';
import { onServer } from './support/pages.js';
import { poll } from './support/poll.js';
import { activityDeps, call, startStack, type Stack } from './support/stack.js';
import { startReceiver, type Receiver } from './support/webhook-receiver.js';

const day = 86_400_000;
let stack: Stack;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
  stack = await startStack();
});
afterAll(async () => {
  await stack.close();
  await receiver.close();
});

/** An account with one of each record: a recovered and a queued recovery, a pulse, a link, a platform event. */
async function merchant(settings: Record<string, unknown>) {
  const { account, apiKey } = await stack.createAccount({ webhookUrl: receiver.url, ...settings });
  const post = (path: string, body: unknown) =>
    call<{ transactionId: string; url: string }>(stack.baseUrl, 'POST', path, { key: apiKey, body });
  const recovered = await post('/api/recovery/execute', {
    paymentMethodToken: 'tok_visa',
    originalDeclineCode: 'try_again_later',
    amount: 2500,
    idempotencyKey: 'order-1',
  });
  const queued = await post('/api/recovery/execute', {
    paymentMethodToken: 'tok_visa',
    originalDeclineCode: 'insufficient_funds',
    amount: 4000,
  });
  expect([recovered.status, queued.status]).toEqual([200, 202]);
  await post('/api/recovery/pulse', { amount: 900 });
  const link = await post('/api/recovery/update-card/generate', { paymentMethodToken: 'tok_visa' });
  await stack.stores.connectorEvents.receive(account.id, 'chargebee', 'ev_1', 'payment_failed', new Date());
  // Every webhook delivered: a delivery still under way is never purged.
  await poll(
    () => stack.stores.events.list({ accountId: account.id }),
    (events) => events.length > 0 && events.every((e) => e.deliveryStatus === 'delivered'),
  );
  return {
    account,
    apiKey,
    post,
    recovered: recovered.body.transactionId,
    queued: queued.body.transactionId,
    link,
  };
}

const nothing = { recoveries: 0, events: 0, pulses: 0, links: 0, platformEvents: 0 };

describe('data retention', () => {
  it('deletes what is older than dataRetentionDays and keeps what is under way and the idempotency keys', async () => {
    const m = await merchant({ dataRetentionDays: 90 });
    const events = await stack.stores.events.list({ accountId: m.account.id });
    const account = { id: m.account.id, days: 90 };
    const now = Date.now();

    expect(await purgeAccountData(stack.stores, account, new Date(now + 89 * day))).toEqual(nothing);
    // 94 days on, the link too has been expired (72 hours after it was minted) for longer than 90 days.
    const purged = await purgeAccountData(stack.stores, account, new Date(now + 94 * day));
    expect(purged).toEqual({ recoveries: 1, events: events.length, pulses: 1, links: 1, platformEvents: 1 });
    expect(await purgeAccountData(stack.stores, account, new Date(now + 94 * day))).toEqual(nothing);

    const status = (id: string) =>
      call(stack.baseUrl, 'GET', `/api/recovery/status/${id}`, { key: m.apiKey });
    expect((await status(m.recovered)).status).toBe(404);
    expect((await status(m.queued)).body).toMatchObject({ state: 'queued' });
    expect(await stack.stores.events.list({ accountId: m.account.id })).toEqual([]);
    expect((await fetch(onServer(stack.baseUrl, m.link.body.url))).status).toBe(404);
    // The deleted recovery's key stays used: it names the workflow and the gateway's attempt keys.
    const again = await m.post('/api/recovery/execute', {
      paymentMethodToken: 'tok_visa',
      originalDeclineCode: 'try_again_later',
      amount: 2600,
      idempotencyKey: 'order-1',
    });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ existingTransactionId: m.recovered });
  });

  it('the daily activity purges only the accounts with a retention, each by its own', async () => {
    const keeps = await merchant({});
    const short = await merchant({ dataRetentionDays: 90 });
    const long = await merchant({ dataRetentionDays: 365 });
    const activities = createActivities(activityDeps(stack));
    const asOf = Date.now() + 100 * day;
    const result = await new MockActivityEnvironment().run<
      [],
      RetentionResult,
      () => Promise<RetentionResult>
    >(() => activities.purgeExpiredData({ asOf }));
    // The first test's account (retention 90) has nothing left to lose: its other recovery is queued.
    expect(result).toMatchObject({ accounts: 3, recoveries: 1, pulses: 1, links: 1, platformEvents: 1 });
    for (const [m, kept] of [
      [keeps, true],
      [short, false],
      [long, true],
    ] as const)
      expect(await stack.stores.recoveries.find(m.account.id, m.recovered), m.account.id).toEqual(
        kept ? expect.objectContaining({ state: 'succeeded' }) : null,
      );
    // When each attempt was first sent goes after 90 days in every account, one without a retention too.
    expect(result.attemptSends).toBeGreaterThanOrEqual(3);
    const sends = stack.stores.db.collection(collections.attemptSends);
    for (const m of [keeps, short, long])
      expect(await sends.countDocuments({ accountId: m.account.id })).toBe(0);
  });

  it('keeps a payment the customer still owes, however old: the paywall still reads it as past due', async () => {
    const { account, apiKey } = await stack.createAccount({
      webhookUrl: receiver.url,
      dataRetentionDays: 90,
    });
    const customerEmail = 'owes@example.com';
    const execute = (body: Record<string, unknown>) =>
      call<{ transactionId: string }>(stack.baseUrl, 'POST', '/api/recovery/execute', {
        key: apiKey,
        body: { paymentMethodToken: 'tok_visa', amount: 3100, customerEmail, ...body },
      });
    const blocked = await execute({ originalDeclineCode: 'lost_card' });
    const written = await execute({
      paymentMethodToken: 'tok_mastercard',
      originalDeclineCode: 'insufficient_funds',
      amount: 3200,
    });
    expect([blocked.status, written.status]).toEqual([403, 202]);
    const stop = await call(stack.baseUrl, 'POST', '/api/recovery/stop', {
      key: apiKey,
      body: { transactionId: written.body.transactionId, reason: 'not_owed' },
    });
    expect(stop.status).toBe(200);

    // The written-off payment goes; the blocked one is still owed and stays.
    const purged = await purgeAccountData(
      stack.stores,
      { id: account.id, days: 90 },
      new Date(Date.now() + 94 * day),
    );
    expect(purged.recoveries).toBe(1);
    expect(await stack.stores.recoveries.find(account.id, written.body.transactionId)).toBeNull();
    const paywall = await call(
      stack.baseUrl,
      'GET',
      `/api/recovery/paywall-status?customerEmail=${encodeURIComponent(customerEmail)}`,
      { key: apiKey },
    );
    expect(paywall.body).toMatchObject({ isPastDue: true, totalOwedCents: 3100 });

    // Once its billing platform reports the blocked payment paid (paid_after_end), it is settled and goes.
    const [owed] = await stack.stores.recoveries.forCustomer(account.id, customerEmail);
    expect(owed).toMatchObject({ state: 'blocked' });
    const paidAt = new Date(Date.now() + 2 * day);
    await stack.stores.recoveries.update(owed!._id, { paidOnTheirOwnAt: paidAt }, paidAt);
    const later = await purgeAccountData(
      stack.stores,
      { id: account.id, days: 90 },
      new Date(Date.now() + 94 * day),
    );
    expect(later.recoveries).toBe(1);
    expect(await stack.stores.recoveries.find(account.id, owed!._id)).toBeNull();
  });

  it('deletes an erased customer’s payment still owed once it ended longer ago: the paywall no longer reads it', async () => {
    const { account, apiKey } = await stack.createAccount({
      webhookUrl: receiver.url,
      dataRetentionDays: 90,
    });
    const customerEmail = 'erased.owes@example.com';
    const blocked = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: apiKey,
      body: {
        paymentMethodToken: 'tok_erased_owes',
        originalDeclineCode: 'lost_card',
        amount: 3300,
        customerEmail,
        idempotencyKey: 'owed-1',
      },
    });
    expect(blocked.status).toBe(403);
    const erased = await poll(
      () => call(stack.baseUrl, 'POST', '/api/customers/erase', { key: apiKey, body: { customerEmail } }),
      (r) => r.status === 200,
    );
    expect(erased.body).toMatchObject({ recoveries: 1 });

    const purge = (days: number) =>
      purgeAccountData(stack.stores, { id: account.id, days: 90 }, new Date(Date.now() + days * day));
    expect((await purge(89)).recoveries).toBe(0);
    expect((await purge(94)).recoveries).toBe(1);
    expect(await stack.stores.recoveries.findByKey(account.id, 'owed-1')).toBeNull();
  });

  it('counts a recovery’s age from when it was settled, not from a later write such as an erasure', async () => {
    const { account, apiKey } = await stack.createAccount({
      webhookUrl: receiver.url,
      dataRetentionDays: 90,
    });
    const execute = (idempotencyKey: string, body: Record<string, unknown>) =>
      call(stack.baseUrl, 'POST', '/api/recovery/execute', {
        key: apiKey,
        body: { paymentMethodToken: `tok_${idempotencyKey}`, amount: 2500, idempotencyKey, ...body },
      });
    const customerEmail = 'settled.long.ago@example.com';
    const keys = ['settled_erased', 'settled_paid_late', 'settled_legacy'] as const;
    const answers = await Promise.all([
      execute(keys[0], { originalDeclineCode: 'try_again_later', customerEmail }),
      execute(keys[1], { originalDeclineCode: 'lost_card' }),
      execute(keys[2], { originalDeclineCode: 'try_again_later' }),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 403, 200]);
    const find = (key: string) => stack.stores.recoveries.findByKey(account.id, key);
    // Their workflows have made their last write.
    for (const key of keys)
      await stack.temporal.workflow
        .getHandle((await find(key))!.workflowId)
        .result()
        .catch((error: unknown) => expect(error).toBeInstanceOf(WorkflowNotFoundError));
    const [erased, paidLate, legacy] = await Promise.all(keys.map(async (k) => (await find(k))!._id));
    // All three ended 100 days ago; the customer paid one on their own 10 days ago, and one ended before
    // endedAt was recorded (its last write was then).
    const recoveries = stack.stores.db.collection<{ _id: string }>(collections.recoveries);
    const daysAgo = (n: number) => new Date(Date.now() - n * day);
    await recoveries.updateMany({ _id: { $in: [erased!, paidLate!] } }, { $set: { endedAt: daysAgo(100) } });
    await recoveries.updateOne({ _id: paidLate! }, { $set: { paidOnTheirOwnAt: daysAgo(10) } });
    await recoveries.updateOne(
      { _id: legacy! },
      { $unset: { endedAt: '' }, $set: { updatedAt: daysAgo(100) } },
    );
    // The first one's customer is erased today, which rewrites it.
    const erasure = await poll(
      () => call(stack.baseUrl, 'POST', '/api/customers/erase', { key: apiKey, body: { customerEmail } }),
      (r) => r.status === 200,
    );
    expect(erasure.body).toMatchObject({ recoveries: 1 });

    const purged = await purgeAccountData(stack.stores, { id: account.id, days: 90 }, new Date());
    expect(purged.recoveries).toBe(2);
    expect(await find(keys[0])).toBeNull();
    expect(await find(keys[2])).toBeNull();
    expect(await find(keys[1])).toMatchObject({ state: 'blocked' });
  });

  it('forgets answer claims made before the cutoff, of that account only', async () => {
    const [{ account }, { account: other }] = await Promise.all([
      stack.createAccount({ dataRetentionDays: 90 }),
      stack.createAccount({ dataRetentionDays: 90 }),
    ]);
    const [old, recent, othersOld] = [randomUUID(), randomUUID(), randomUUID()];
    const { recoveries } = stack.stores;
    expect(await recoveries.claimAnswer(account.id, old, 'processing')).toBe(true);
    expect(await recoveries.claimAnswer(account.id, recent, 'failure')).toBe(true);
    expect(await recoveries.claimAnswer(other.id, othersOld, 'processing')).toBe(true);
    // Claims are dated when made: two of them made 100 days ago, one 80.
    const claims = stack.stores.db.collection<{ _id: string }>(collections.answerClaims);
    const daysAgo = (n: number) => new Date(Date.now() - n * day);
    await claims.updateMany({ _id: { $in: [old, othersOld] } }, { $set: { at: daysAgo(100) } });
    await claims.updateOne({ _id: recent }, { $set: { at: daysAgo(80) } });

    await purgeAccountData(stack.stores, { id: account.id, days: 90 }, new Date());
    expect(await recoveries.answerClaimOf(old)).toBeNull();
    expect(await recoveries.answerClaimOf(recent)).toBe('failure');
    expect(await recoveries.answerClaimOf(othersOld)).toBe('processing');
  });

  it.each([
    [null, true],
    [90, true],
    [3650, true],
    [89, false],
    [3651, false],
    [180.5, false],
  ])('dataRetentionDays %j is %s', (days, valid) => {
    const parsed = Settings.safeParse({
      webhookUrl: 'https://merchant.example/hooks',
      dataRetentionDays: days,
    });
    expect(parsed.success).toBe(valid);
  });

  it('is off by default', () => {
    expect(Settings.parse({ webhookUrl: 'https://merchant.example/hooks' }).dataRetentionDays).toBeNull();
  });
});
