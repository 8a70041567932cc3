import { randomBytes, randomUUID } from 'node:crypto';
import { WorkflowNotFoundError } from '@temporalio/client';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RetentionResult } from '../activities/data-retention.js';
import { createActivities } from '../activities/index.js';
import { Settings } from '../domain/settings.js';
import { cardKeyOf } from '../runtime/crypto.js';
import {
  strandedResumedWithinMs,
  webhookDeliveryLifetimeMs,
  webhookMaxAttempts,
  webhookWorkflowId,
} from '../domain/webhooks.js';
import { purgeAccountData } from '../services/data-retention.js';
import { collections } from '../store/collections.js';
import { createEventStore, type Delivery, type DeliveryAttempt, type EventRecord } from '../store/events.js';
import type { ConsumptionDoc } from '../store/links.js';
import { storeEvent } from './support/events.js';
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

const nothing = {
  recoveries: 0,
  events: 0,
  pulses: 0,
  links: 0,
  platformEvents: 0,
  learnedAttempts: 0,
  predictions: 0,
  predictionOutcomes: 0,
  unlinked: 0,
  proofModeGroups: 0,
};

describe('data retention', () => {
  it('deletes what is older than dataRetentionDays and keeps what is under way and the idempotency keys', async () => {
    const m = await merchant({ dataRetentionDays: 90 });
    const events = await stack.stores.events.list({ accountId: m.account.id });
    const account = { id: m.account.id, days: 90 };
    const now = Date.now();

    expect(await purgeAccountData(stack.stores, account, new Date(now + 89 * day))).toEqual(nothing);
    // 94 days on, the link too has been expired (72 hours after it was minted) for longer than 90 days.
    const purged = await purgeAccountData(stack.stores, account, new Date(now + 94 * day));
    // What the recovered payment's attempt left goes too: its row of the learned statistics, and the card's
    // attempt budget no longer names it; nor do the 5-minute duplicate claims of both recoveries (the
    // queued one's included: they are older than any rule or retry looks back).
    expect(purged).toEqual({
      recoveries: 1,
      events: events.length,
      pulses: 1,
      links: 1,
      platformEvents: 1,
      learnedAttempts: 1,
      predictions: 0,
      predictionOutcomes: 0,
      unlinked: 3,
      proofModeGroups: 0,
    });
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

  it('leaves nothing that ties a deleted recovery to its customer or card, in each record derived from it', async () => {
    const { account, apiKey } = await stack.createAccount({
      webhookUrl: receiver.url,
      dataRetentionDays: 90,
      proofMode: { enabled: true, controlPercent: 0 },
    });
    const customerEmail = 'wes@example.com';
    const execute = (paymentMethodToken: string, originalDeclineCode: string) =>
      call(stack.baseUrl, 'POST', '/api/recovery/execute', {
        key: apiKey,
        body: {
          paymentMethodToken,
          originalDeclineCode,
          amount: 2500,
          customerEmail,
          idempotencyKey: paymentMethodToken,
        },
      });
    const recovered = await execute('tok_wes_card', 'try_again_later');
    const blocked = await execute('tok_wes_stolen', 'stolen_card');
    expect([recovered.status, blocked.status]).toEqual([200, 403]);
    const docs = await Promise.all(
      ['tok_wes_card', 'tok_wes_stolen'].map((k) => stack.stores.recoveries.findByKey(account.id, k)),
    );
    // The customer paid the blocked one on their own: settled, it goes too.
    await stack.stores.recoveries.update(docs[1]!._id, { paidOnTheirOwnAt: new Date() }, new Date());
    const { retentionNotices, learning } = stack.stores;
    expect(await retentionNotices.claim(account.id, customerEmail, 'evt-wes', new Date(), 30 * day)).toBe(
      true,
    );
    // A test-mode account: what its sandbox recoveries taught.
    const stats = await learning.stats(account.id, true);
    expect(stats.byCode).not.toEqual({});

    const purged = await purgeAccountData(
      stack.stores,
      { id: account.id, days: 90 },
      new Date(Date.now() + 94 * day),
    );
    // The card's attempt budget, two duplicate claims, two customer index entries, the stolen card's block
    // and the retention notice; the customer's Proof Mode group.
    expect(purged).toMatchObject({ recoveries: 2, learnedAttempts: 1, unlinked: 7, proofModeGroups: 1 });

    const names = [...docs.map((d) => d!._id), ...docs.map((d) => d!.workflowId)];
    const ofAccount = { _id: { $regex: `^${account.id}:` } };
    const left = async (collection: string) =>
      stack.stores.db.collection<{ _id: string }>(collection).find(ofAccount).toArray();
    for (const collection of [
      collections.cardBudgets,
      collections.velocity,
      collections.customerRecoveries,
      collections.blockedCards,
      collections.retentionNotices,
    ]) {
      const kept = await left(collection);
      // Kept, numbered, for the counts and rules they serve; naming none of the deleted recoveries.
      expect(kept.length, collection).toBeGreaterThan(0);
      for (const name of names) expect(JSON.stringify(kept), collection).not.toContain(name);
    }
    expect(await left(collections.holdouts)).toEqual([]);
    expect(JSON.stringify(await left(collections.retentionNotices))).not.toContain('evt-wes');
    const attempts = stack.stores.db.collection(collections.attempts);
    expect(await attempts.countDocuments({ accountId: account.id })).toBe(0);
    // What the attempts taught stays in the account's counts.
    expect(await learning.stats(account.id, true)).toEqual(stats);
    // The stolen card is still refused; its block no longer names the recovery.
    const stolen = await stack.stores.recoveries.blockedCard(
      cardKeyOf(account.id, 'tok_wes_stolen'),
      new Date(Date.now() - day),
    );
    expect(stolen).toMatchObject({ declineCode: 'stolen_card', transactionId: 'erased' });
  });

  it('keeps the Proof Mode group of a customer seen within the retention, and forgets one not seen since', async () => {
    const accountId = `acct_${randomUUID().slice(0, 8)}`;
    const { holdouts } = stack.stores;
    const drawnAt = new Date(Date.now() - 200 * day);
    for (const customer of ['seen@example.com', 'gone@example.com'])
      expect(await holdouts.assign(accountId, customer, () => true, drawnAt)).toBe(true);
    // A recovery of the first reads her group 150 days later, 50 days ago.
    const seenAt = new Date(drawnAt.getTime() + 150 * day);
    expect(await holdouts.assign(accountId, 'seen@example.com', () => false, seenAt)).toBe(true);

    const purged = await purgeAccountData(stack.stores, { id: accountId, days: 90 }, new Date());
    expect(purged.proofModeGroups).toBe(1);
    expect(await holdouts.assign(accountId, 'seen@example.com', () => false, new Date())).toBe(true);
    // Drawn afresh.
    expect(await holdouts.assign(accountId, 'gone@example.com', () => false, new Date())).toBe(false);
  });

  it('the daily run deletes the uses of hosted links that are gone, in every account', async () => {
    // No retention: a use whose link is gone names a card and leads nowhere, whatever the account keeps.
    const { account } = await stack.createAccount({});
    const uses = stack.stores.db.collection<ConsumptionDoc>(collections.linkConsumptions);
    const orphan: ConsumptionDoc = {
      _id: randomUUID(),
      accountId: account.id,
      at: new Date(),
      eventId: randomUUID(),
      outcome: { kind: 'card_updated', newPaymentMethodToken: 'tok_orphan_card', eligibleGateways: ['test'] },
      effectsDoneAt: new Date(),
    };
    await uses.insertOne(orphan);
    expect((await dailyRun(Date.now())).orphanedLinkUses).toBeGreaterThanOrEqual(1);
    expect(await uses.findOne({ _id: orphan._id })).toBeNull();
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

  it('deletes risk predictions and their outcomes older than dataRetentionDays, and keeps what they calibrated', async () => {
    const { account, apiKey } = await stack.createAccount({
      webhookUrl: receiver.url,
      dataRetentionDays: 90,
    });
    const post = (path: string, body: Record<string, unknown>) =>
      call<{ prediction: { predictionId: string } }>(stack.baseUrl, 'POST', path, { key: apiKey, body });
    const predict = async () =>
      (
        await post('/api/predict/risk', {
          paymentMethodToken: 'tok_visa',
          amount: 1999,
          scheduledDate: '2026-12-09',
        })
      ).body.prediction.predictionId;
    const reported = await predict();
    await predict();
    const report = () => post('/api/predict/outcome', { predictionId: reported, outcome: 'failed' });
    expect((await report()).status).toBe(200);
    // A test-mode account: its sandbox predictions calibrate the sandbox's bands.
    const calibration = await stack.stores.predictions.calibration(account.id, true);
    expect(calibration).not.toEqual({});

    const purge = (days: number) =>
      purgeAccountData(stack.stores, { id: account.id, days: 90 }, new Date(Date.now() + days * day));
    expect(await purge(89)).toMatchObject({ predictions: 0, predictionOutcomes: 0 });
    expect(await purge(91)).toMatchObject({ predictions: 2, predictionOutcomes: 1 });
    for (const collection of [collections.predictions, collections.predictionOutcomes])
      expect(
        await stack.stores.db.collection(collection).countDocuments({ accountId: account.id }),
        collection,
      ).toBe(0);
    // What the outcome taught stays; the prediction gone, its outcome is not reported (and counted) again.
    expect(await stack.stores.predictions.calibration(account.id, true)).toEqual(calibration);
    expect((await report()).status).toBe(404);
    expect(await stack.stores.predictions.calibration(account.id, true)).toEqual(calibration);
  });

  it('is off by default', () => {
    expect(Settings.parse({ webhookUrl: 'https://merchant.example/hooks' }).dataRetentionDays).toBeNull();
  });
});

/** The daily activity as the data retention workflow runs it, on `asOf`. */
function dailyRun(asOf: number): Promise<RetentionResult> {
  const activities = createActivities(activityDeps(stack));
  return new MockActivityEnvironment().run<[], RetentionResult, () => Promise<RetentionResult>>(() =>
    activities.purgeExpiredData({ asOf }),
  );
}

const hour = 3_600_000;
const ago = (ms: number) => new Date(Date.now() - ms);

/** The `n`-th attempt of a delivery, made at `at`: acknowledged, refused, or not sent (the settings stopped it). */
function attempt(n: number, at: Date, outcome: 'acknowledged' | 'refused' | 'not_sent'): DeliveryAttempt {
  const statusCode = { acknowledged: 200, refused: 500, not_sent: null }[outcome];
  return { attempt: n, at, statusCode, error: outcome === 'acknowledged' ? null : outcome, latencyMs: 5 };
}

/** A delivery begun at `at` with these attempts, one a second. */
function delivery(deliveryId: string, at: Date, outcomes: Array<Parameters<typeof attempt>[2]>): Delivery {
  const attempts = outcomes.map((o, i) => attempt(i + 1, new Date(at.getTime() + i * 1000), o));
  return { deliveryId, startedAt: at, attempts };
}

describe('data retention of webhook events', () => {
  const old = ago(100 * day);
  const failedAll = Array<'refused'>(webhookMaxAttempts).fill('refused');
  // Each created 100 days ago, past a retention of 90; whether it goes depends on its latest delivery.
  const cases: Array<[string, boolean, Pick<EventRecord, 'deliveryStatus' | 'deliveries'>]> = [
    [
      'delivered',
      false,
      { deliveryStatus: 'delivered', deliveries: [delivery('initial', old, ['acknowledged'])] },
    ],
    [
      'failed after its whole schedule',
      false,
      { deliveryStatus: 'failed', deliveries: [delivery('initial', old, failedAll)] },
    ],
    ['suppressed when published', false, { deliveryStatus: 'suppressed', deliveries: [] }],
    [
      'delivered, with a resend retrying since an hour ago',
      true,
      {
        deliveryStatus: 'delivered',
        deliveries: [
          delivery('initial', old, ['acknowledged']),
          delivery('resend-1', ago(hour), ['refused']),
        ],
      },
    ],
    [
      'suppressed an hour ago, its workflow waiting out the schedule',
      true,
      {
        deliveryStatus: 'suppressed',
        deliveries: [{ ...delivery('initial', ago(hour), ['refused', 'not_sent']), stopped: 'suppressed' }],
      },
    ],
    [
      'delivered, with a resend stopped an hour ago',
      true,
      {
        deliveryStatus: 'delivered',
        deliveries: [
          delivery('initial', old, ['acknowledged']),
          { ...delivery('resend-1', ago(hour), ['refused', 'not_sent']), stopped: 'undeliverable' },
        ],
      },
    ],
    [
      'pending on a delivery recorded 100 days ago that never started',
      false,
      { deliveryStatus: 'pending', deliveries: [delivery('initial', old, [])] },
    ],
  ];

  it.each(cases)('%s: kept today %s, while its latest delivery may still run', async (_name, kept, facts) => {
    const { account } = await stack.createAccount({ webhookUrl: receiver.url, dataRetentionDays: 90 });
    const eventId = await storeEvent(stack.stores.events, account.id, {
      createdAt: old,
      status: facts.deliveryStatus,
      deliveries: facts.deliveries,
    });
    const purge = (at: Date) => purgeAccountData(stack.stores, { id: account.id, days: 90 }, at);
    expect((await purge(new Date())).events).toBe(kept ? 0 : 1);
    // 27 hours on, a delivery begun an hour ago is past its whole schedule (24 h, and 3 h to spare): ended.
    expect((await purge(new Date(Date.now() + 27 * hour))).events).toBe(kept ? 1 : 0);
    expect(await stack.stores.events.get(eventId)).toBeNull();
  });

  it('a resend under way keeps its old event until it ends: it is acknowledged, not cut short', async () => {
    let acknowledging = false;
    const flaky = await startReceiver({ answer: () => ({ status: acknowledging ? 200 : 500 }) });
    try {
      const { account, apiKey } = await stack.createAccount({ webhookUrl: flaky.url, dataRetentionDays: 90 });
      const eventId = await storeEvent(stack.stores.events, account.id, {
        createdAt: old,
        status: 'delivered',
        deliveries: [delivery('initial', old, ['acknowledged'])],
      });
      const resent = await call(stack.baseUrl, 'POST', `/api/events/${eventId}/resend`, {
        key: apiKey,
        body: {},
      });
      expect(resent.status).toBe(202);
      // Today's run comes while the resend is retrying (its first attempt refused); then the endpoint is back.
      await poll(
        () => flaky.received.length,
        (n) => n >= 1,
      );
      await dailyRun(Date.now());
      expect(await stack.stores.events.get(eventId)).not.toBeNull();
      acknowledging = true;
      const outcome = await stack.temporal.workflow.getHandle(webhookWorkflowId(eventId, 1)).result();
      expect(outcome).toMatchObject({ delivered: true });
      expect(await stack.stores.events.get(eventId)).toMatchObject({ deliveryStatus: 'delivered' });
    } finally {
      await flaky.close();
    }
  });
});

describe('events left pending with nothing delivering them', () => {
  const postsOf = (eventId: string) =>
    receiver.received.filter((r) => r.headers['x-service-event-id'] === eventId);

  it('the daily run starts a delivery recorded but never started, and only once', async () => {
    // No retention: the run resumes the events of every account.
    const { account } = await stack.createAccount({ webhookUrl: receiver.url });
    // Recorded as publish records it, by a process that died before starting the delivery; its publisher
    // (an API request the merchant retries as a new event) never publishes that eventId again.
    const stranded = await storeEvent(stack.stores.events, account.id, { createdAt: ago(10 * 60_000) });
    // Recorded a moment ago: its publisher is starting it.
    const fresh = await storeEvent(stack.stores.events, account.id, { createdAt: ago(1_000) });

    expect((await dailyRun(Date.now())).resumedEvents).toBeGreaterThanOrEqual(1);
    const delivered = await poll(
      () => stack.stores.events.get(stranded),
      (e) => e?.deliveryStatus === 'delivered',
    );
    expect(delivered?.deliveries.map((d) => [d.deliveryId, d.attempts.length])).toEqual([['initial', 1]]);
    expect(postsOf(stranded)).toHaveLength(1);
    expect(await stack.stores.events.get(fresh)).toMatchObject({ deliveryStatus: 'pending' });
    await expect(
      stack.temporal.workflow.getHandle(webhookWorkflowId(fresh)).describe(),
    ).rejects.toBeInstanceOf(WorkflowNotFoundError);

    // Were its attempt lost and the event read as stranded again, its workflow id is taken: no second run.
    const handle = stack.temporal.workflow.getHandle(webhookWorkflowId(stranded));
    const { runId } = await handle.describe();
    await stack.stores.db.collection<{ _id: string }>(collections.events).updateOne(
      { _id: stranded },
      // As a lost attempt would leave it: pending, its delivery started 10 minutes ago and never attempted.
      {
        $set: {
          deliveryStatus: 'pending',
          'deliveries.0.attempts': [],
          unattemptedSince: ago(10 * 60_000),
        },
      },
    );
    expect((await dailyRun(Date.now())).resumedEvents).toBeGreaterThanOrEqual(1);
    expect(await handle.describe()).toMatchObject({ runId, status: { name: 'COMPLETED' } });
    expect(postsOf(stranded)).toHaveLength(1);
    await stack.stores.events.remove([fresh, stranded]);
  });

  it('one that cannot be started (sealed under a master key since lost) holds up none of the others', async () => {
    const { account } = await stack.createAccount({ webhookUrl: receiver.url });
    const lostKey = createEventStore(stack.stores.db, randomBytes(32));
    const unreadable = await storeEvent(lostKey, account.id, {
      type: 'recovery.skipped_high_risk',
      createdAt: ago(20 * 60_000),
    });
    const stranded = await storeEvent(stack.stores.events, account.id, { createdAt: ago(10 * 60_000) });
    await dailyRun(Date.now());
    const delivered = await poll(
      () => stack.stores.events.get(stranded),
      (e) => e?.deliveryStatus === 'delivered',
    );
    expect(delivered?.deliveryStatus).toBe('delivered');
    expect(postsOf(unreadable)).toHaveLength(0);
    await stack.stores.events.remove([unreadable, stranded]);
  });

  it("marks one stranded for days failed instead of sending its stale news (resend is the merchant's choice)", async () => {
    const { account } = await stack.createAccount({ webhookUrl: receiver.url });
    const stale = await storeEvent(stack.stores.events, account.id, {
      type: 'recovery.failed',
      createdAt: ago(3 * day),
    });
    await dailyRun(Date.now());
    expect(await stack.stores.events.get(stale)).toMatchObject({ deliveryStatus: 'failed' });
    await expect(
      stack.temporal.workflow.getHandle(webhookWorkflowId(stale)).describe(),
    ).rejects.toBeInstanceOf(WorkflowNotFoundError);
    expect(postsOf(stale)).toHaveLength(0);
    await stack.stores.events.remove([stale]);
  });

  it('starts a resend the merchant asked for that was recorded but never started, however old its event', async () => {
    const { account } = await stack.createAccount({ webhookUrl: receiver.url });
    // Failed days ago; the merchant's resend was recorded 10 minutes ago by a process that then died.
    const failedAttempt = { attempt: 1, at: ago(3 * day), statusCode: 500, error: null, latencyMs: 5 };
    const resent = await storeEvent(stack.stores.events, account.id, {
      type: 'recovery.failed',
      createdAt: ago(3 * day),
      deliveries: [
        { deliveryId: 'initial', startedAt: ago(3 * day), attempts: [failedAttempt] },
        { deliveryId: 'resend-1', startedAt: ago(10 * 60_000), attempts: [] },
      ],
    });
    expect((await dailyRun(Date.now())).resumedEvents).toBeGreaterThanOrEqual(1);
    const delivered = await poll(
      () => stack.stores.events.get(resent),
      (e) => e?.deliveryStatus === 'delivered',
    );
    expect(delivered?.deliveries.map((d) => [d.deliveryId, d.attempts.length])).toEqual([
      ['initial', 1],
      ['resend-1', 1],
    ]);
    expect(postsOf(resent)).toHaveLength(1);
    await stack.stores.events.remove([resent]);
  });

  it('deletes one older than its account keeps anything instead of sending it', async () => {
    const { account } = await stack.createAccount({ webhookUrl: receiver.url, dataRetentionDays: 90 });
    const stranded = await storeEvent(stack.stores.events, account.id, { createdAt: ago(100 * day) });
    expect((await dailyRun(Date.now())).events).toBeGreaterThanOrEqual(1);
    expect(await stack.stores.events.get(stranded)).toBeNull();
    await expect(
      stack.temporal.workflow.getHandle(webhookWorkflowId(stranded)).describe(),
    ).rejects.toBeInstanceOf(WorkflowNotFoundError);
  });

  it('deletes one older than its account keeps whose resend, recorded over a day ago, never started, instead of starting it', async () => {
    const { account } = await stack.createAccount({ webhookUrl: receiver.url, dataRetentionDays: 90 });
    // Failed 100 days ago; a resend recorded by a process that then died, long enough ago that no delivery
    // of it may still run (the purge deletes the event), recently enough to be started were it still there.
    const recordedAt = ago(webhookDeliveryLifetimeMs + 3 * hour);
    expect(Date.now() - recordedAt.getTime()).toBeLessThan(strandedResumedWithinMs);
    const resent = await storeEvent(stack.stores.events, account.id, {
      type: 'recovery.failed',
      createdAt: ago(100 * day),
      deliveries: [
        delivery('initial', ago(100 * day), ['refused']),
        { deliveryId: 'resend-1', startedAt: recordedAt, attempts: [] },
      ],
    });
    expect((await dailyRun(Date.now())).events).toBeGreaterThanOrEqual(1);
    expect(await stack.stores.events.get(resent)).toBeNull();
    await expect(
      stack.temporal.workflow.getHandle(webhookWorkflowId(resent, 1)).describe(),
    ).rejects.toBeInstanceOf(WorkflowNotFoundError);
    expect(postsOf(resent)).toHaveLength(0);
  });
});
