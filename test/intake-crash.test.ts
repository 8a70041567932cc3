import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admitRecovery } from '../api/admit-recovery.js';
import { startRecovery } from '../api/start-recovery.js';
import { recoveryInputOf, startStopped } from '../services/recovery-start.js';
import { stopRecovery } from '../services/recovery-stop.js';
import { RecoveryRequest } from '../domain/recovery-request.js';
import { cardKeyOf } from '../runtime/crypto.js';
import { taskQueues } from '../worker/task-queues.js';
import { call, startStack, type Stack } from './support/stack.js';

// An API process can die (or its store fail) anywhere between claiming a request's idempotency key,
// storing its recovery and starting its workflow. A retry of the request then carries on where it stopped
// — once the intake had more than a minute to get there itself — instead of answering 409 forever.

let stack: Stack;
let n = 0;

beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.close());

const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000);

/** A fresh account and a request on a card of its own that the test gateway recovers at once. */
async function merchant(fields: Record<string, unknown> = {}) {
  const { account, apiKey } = await stack.createAccount();
  n += 1;
  const body = {
    paymentMethodToken: `tok_crash_${n}`,
    amount: 3000 + n,
    originalDeclineCode: 'try_again_later',
    ...fields,
  };
  return {
    account,
    body,
    request: RecoveryRequest.parse(body),
    execute: (changes: Record<string, unknown> = {}) =>
      call(stack.baseUrl, 'POST', '/api/recovery/execute', { key: apiKey, body: { ...body, ...changes } }),
    isPastDue: async (email: string) =>
      (
        await call(stack.baseUrl, 'GET', `/api/recovery/paywall-status?customerEmail=${email}`, {
          key: apiKey,
        })
      ).body.isPastDue,
    stop: (body: Record<string, unknown>) =>
      call(stack.baseUrl, 'POST', '/api/recovery/stop', { key: apiKey, body }),
    statusByKey: (key: string) =>
      call(stack.baseUrl, 'GET', `/api/recovery/status?idempotencyKey=${key}`, { key: apiKey }),
    charges: () => stack.stores.sandbox.countForToken('test', body.paymentMethodToken),
  };
}

describe('an idempotency key claimed by an intake that stored no recovery', () => {
  it('is taken over by a retry after a minute: the recovery runs under the claim’s transaction id', async () => {
    const m = await merchant({ idempotencyKey: 'inv-claimed' });
    const claimed = randomUUID();
    await stack.stores.claims.claimKey(m.account.id, 'inv-claimed', claimed, minutesAgo(2));

    const res = await m.execute();
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, transactionId: claimed });
    expect((await m.statusByKey('inv-claimed')).body).toMatchObject({
      transactionId: claimed,
      status: 'succeeded',
    });
    const again = await m.execute();
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ existingTransactionId: claimed, existingStatus: 'succeeded' });
    expect(await m.charges()).toBe(1);
  });

  it('is taken over when that intake had claimed the card and amount too: that velocity claim is the same transaction’s', async () => {
    const m = await merchant({ idempotencyKey: 'inv-velocity-claimed' });
    const claimed = randomUUID();
    const at = minutesAgo(2);
    await stack.stores.claims.claimKey(m.account.id, 'inv-velocity-claimed', claimed, at);
    const cardKey = cardKeyOf(m.account.id, m.body.paymentMethodToken);
    await stack.stores.claims.claimVelocity(m.account.id, cardKey, m.body.amount, 'USD', claimed, at);

    const res = await m.execute();
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, transactionId: claimed });
  });

  it('is still refused while its intake may be on its way (claimed under a minute ago)', async () => {
    const m = await merchant({ idempotencyKey: 'inv-in-flight' });
    const claimed = randomUUID();
    await stack.stores.claims.claimKey(m.account.id, 'inv-in-flight', claimed, minutesAgo(0.5));

    const res = await m.execute();
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ existingTransactionId: claimed, existingStatus: 'unknown' });
    expect(await stack.stores.recoveries.find(m.account.id, claimed)).toBeNull();
  });

  it('is refused for good once older than the shortest data retention (its recovery may have been deleted): 409, nothing stored or charged', async () => {
    const m = await merchant({ idempotencyKey: 'inv-purged' });
    const claimed = randomUUID();
    await stack.stores.claims.claimKey(m.account.id, 'inv-purged', claimed, minutesAgo(91 * 24 * 60));

    const res = await m.execute();
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({
      message: 'This idempotencyKey was already used.',
      existingTransactionId: claimed,
      existingStatus: 'unknown',
      existingRecovered: false,
    });
    expect(await stack.stores.recoveries.find(m.account.id, claimed)).toBeNull();
    expect((await m.statusByKey('inv-purged')).status).toBe(404);
    expect(await m.charges()).toBe(0);
  });

  it('taken over by two retries at once: one recovery and one charge; the other retry gets a 409 naming it', async () => {
    const m = await merchant({ idempotencyKey: 'inv-raced' });
    const claimed = randomUUID();
    await stack.stores.claims.claimKey(m.account.id, 'inv-raced', claimed, minutesAgo(2));

    const answers = await Promise.all([m.execute(), m.execute()]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    expect(answers.find((a) => a.status === 200)?.body).toMatchObject({ transactionId: claimed });
    expect(answers.find((a) => a.status === 409)?.body).toMatchObject({ existingTransactionId: claimed });
    expect(await m.charges()).toBe(1);
  });

  it('left by a request the velocity rule refused (its release failed) answers as the velocity rule does', async () => {
    const m = await merchant();
    const first = await m.execute();
    expect(first.status).toBe(200);
    await stack.stores.claims.claimKey(m.account.id, 'inv-refused', randomUUID(), minutesAgo(2));

    const res = await m.execute({ idempotencyKey: 'inv-refused' });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({
      message: expect.stringContaining('same card and amount'),
      existingTransactionId: first.body.transactionId,
      existingStatus: 'succeeded',
    });
    expect(await m.charges()).toBe(1);
  });
});

describe('a recovery stored by an intake that never started its workflow', () => {
  it('is started by a retry of its key after a minute, under its own id', async () => {
    const m = await merchant({ idempotencyKey: 'inv-stored' });
    const admitted = await admitRecovery(stack.stores, m.account, m.request, minutesAgo(2));
    if (admitted.kind !== 'admitted') throw new Error('not admitted');

    const res = await m.execute();
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, transactionId: admitted.doc._id });
    expect((await m.statusByKey('inv-stored')).body).toMatchObject({
      transactionId: admitted.doc._id,
      status: 'succeeded',
    });
    expect((await m.execute()).status).toBe(409);
    expect(await m.charges()).toBe(1);
  });

  it('without a key, is started by a retry of the same request (the velocity rule finds it)', async () => {
    const m = await merchant();
    const admitted = await admitRecovery(stack.stores, m.account, m.request, minutesAgo(2));
    if (admitted.kind !== 'admitted') throw new Error('not admitted');

    const res = await m.execute();
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, transactionId: admitted.doc._id });
    const again = await m.execute();
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({
      existingTransactionId: admitted.doc._id,
      existingStatus: 'succeeded',
    });
  });

  it('is not resumed by another request the velocity rule finds (one with a key of its own): 409', async () => {
    const m = await merchant();
    const admitted = await admitRecovery(stack.stores, m.account, m.request, minutesAgo(2));
    if (admitted.kind !== 'admitted') throw new Error('not admitted');
    const other = await m.execute({ idempotencyKey: 'inv-other' });
    expect(other.status).toBe(409);
    expect(other.body).toMatchObject({ existingTransactionId: admitted.doc._id });
    expect(await m.charges()).toBe(0);
  });

  it('whose customer index entry failed after the insert is indexed once when resumed: the paywall sees it', async () => {
    const email = `crash${n + 1}@example.com`;
    const m = await merchant({ idempotencyKey: 'inv-unindexed', customerEmail: email });
    // Stored without the index entry, as when the entry's claim threw right after the insert.
    const { customerEmail: _, ...unindexed } = m.request;
    const admitted = await admitRecovery(stack.stores, m.account, unindexed, minutesAgo(2));
    if (admitted.kind !== 'admitted') throw new Error('not admitted');
    await stack.stores.db
      .collection<{ _id: string }>('recoveries')
      .updateOne({ _id: admitted.doc._id }, { $set: { customerEmail: email, request: m.request } });
    expect(await stack.stores.recoveries.forCustomer(m.account.id, email)).toEqual([]);

    expect((await m.execute()).status).toBe(200);
    const doc = await stack.stores.recoveries.find(m.account.id, admitted.doc._id);
    if (!doc) throw new Error('the recovery vanished');
    // Resumed again (two more retries racing): still one entry.
    await Promise.all([
      stack.stores.recoveries.indexCustomer(doc),
      stack.stores.recoveries.indexCustomer(doc),
    ]);
    const owed = await stack.stores.recoveries.forCustomer(m.account.id, email);
    expect(owed.map((r) => [r._id, r.state])).toEqual([[admitted.doc._id, 'succeeded']]);
  });

  it('is left alone while its intake may still start it (stored under a minute ago)', async () => {
    const m = await merchant({ idempotencyKey: 'inv-starting' });
    const admitted = await admitRecovery(stack.stores, m.account, m.request, minutesAgo(0.5));
    if (admitted.kind !== 'admitted') throw new Error('not admitted');

    const res = await m.execute();
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ existingTransactionId: admitted.doc._id, existingStatus: 'unknown' });
    expect(await m.charges()).toBe(0);
  });

  it('is left alone once its workflow has written to it (a queued recovery charging its retry reads processing too)', async () => {
    const m = await merchant({ idempotencyKey: 'inv-written' });
    const admitted = await admitRecovery(stack.stores, m.account, m.request, minutesAgo(2));
    if (admitted.kind !== 'admitted') throw new Error('not admitted');
    // What a running workflow writes: the state, later than the insert.
    await stack.stores.recoveries.update(admitted.doc._id, { state: 'processing' }, minutesAgo(1));

    const res = await m.execute();
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ existingTransactionId: admitted.doc._id, existingStatus: 'unknown' });
    expect(res.body.message).toBe('This idempotencyKey was already used.');
    expect(await m.charges()).toBe(0);
  });

  it('is not started twice when its workflow does run (workers far behind): 409, no second run', async () => {
    const m = await merchant({ idempotencyKey: 'inv-behind' });
    const admitted = await admitRecovery(stack.stores, m.account, m.request, minutesAgo(2));
    if (admitted.kind !== 'admitted') throw new Error('not admitted');
    const { doc } = admitted;
    // Started on a task queue no worker polls: the workflow exists, and has recorded nothing yet.
    await startRecovery(stack.temporal, taskQueues(`nobody-${n}`), doc.workflowId, recoveryInputOf(doc), {
      wait: false,
    });
    try {
      const res = await m.execute();
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({
        message: expect.stringContaining('already under way'),
        existingTransactionId: doc._id,
        existingStatus: 'unknown',
      });
      expect(await m.charges()).toBe(0);
    } finally {
      await stack.temporal.workflow.getHandle(doc.workflowId).terminate('test over');
    }
  });
});

describe('a recovery whose workflow never started, stopped by the merchant', () => {
  it('is stopped by a workflow started told to stop: 200 stopped, nothing charged, and a retry of its key cannot start it', async () => {
    const m = await merchant({ idempotencyKey: 'inv-never', customerEmail: `never${n + 1}@example.com` });
    const admitted = await admitRecovery(stack.stores, m.account, m.request, minutesAgo(2));
    if (admitted.kind !== 'admitted') throw new Error('not admitted');
    const { doc } = admitted;

    const res = await m.stop({ transactionId: doc._id, reason: 'not_owed' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ transactionId: doc._id, status: 'failed', state: 'stopped' });
    // The stop is the workflow's, visible to operators in the Temporal UI: it ended without a screen or charge.
    const run = await stack.temporal.workflow.getHandle(doc.workflowId).describe();
    expect(run.status.name).toBe('COMPLETED');

    const retry = await m.execute();
    expect(retry.status).toBe(409);
    expect(retry.body).toMatchObject({ existingTransactionId: doc._id, existingStatus: 'failed' });
    expect(await m.charges()).toBe(0);
    // No longer owed: the customer is not past due.
    expect(await m.isPastDue(m.request.customerEmail!)).toBe(false);
  });

  it('paid elsewhere by idempotency key, likewise: succeeded, not recovered, nothing charged', async () => {
    const m = await merchant({ idempotencyKey: 'inv-never-paid' });
    const admitted = await admitRecovery(stack.stores, m.account, m.request, minutesAgo(2));
    if (admitted.kind !== 'admitted') throw new Error('not admitted');
    // Marked as a start that failed, as the intake does when Temporal fails it (503).
    await stack.stores.recoveries.update(admitted.doc._id, { startFailed: true }, minutesAgo(2));

    const res = await m.stop({ idempotencyKey: 'inv-never-paid', reason: 'paid_elsewhere' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'succeeded', state: 'paid_elsewhere', recovered: false });
    expect((await m.execute()).status).toBe(409);
    expect(await m.charges()).toBe(0);
  });

  it('with no worker to run the stop, answers pending after its wait, not never', async () => {
    const m = await merchant({ idempotencyKey: 'inv-unworked' });
    const admitted = await admitRecovery(stack.stores, m.account, m.request, minutesAgo(2));
    if (admitted.kind !== 'admitted') throw new Error('not admitted');
    const { doc } = admitted;
    const queues = taskQueues(`nobody-${n}`);
    const startedAt = Date.now();
    try {
      const outcome = await stopRecovery(
        { stores: stack.stores, temporal: stack.temporal, queues },
        m.account.id,
        { transactionId: doc._id },
        'not_owed',
      );
      expect(outcome.kind).toBe('pending');
      expect(Date.now() - startedAt).toBeLessThan(15_000);
    } finally {
      await stack.temporal.workflow.getHandle(doc.workflowId).terminate('test over');
    }
  });

  it('a retry of its intake that started the workflow first is not started over: that workflow is asked to stop', async () => {
    const m = await merchant({ idempotencyKey: 'inv-raced' });
    const admitted = await admitRecovery(stack.stores, m.account, m.request, minutesAgo(2));
    if (admitted.kind !== 'admitted') throw new Error('not admitted');
    const { doc } = admitted;
    const queues = taskQueues(`nobody-${n}`);
    await startRecovery(stack.temporal, queues, doc.workflowId, recoveryInputOf(doc), { wait: false });
    try {
      // The stop's own start loses to the running workflow (Temporal runs one per id).
      expect(await startStopped(stack.temporal, queues, doc, 'not_owed')).toBeNull();
      const run = await stack.temporal.workflow.getHandle(doc.workflowId).describe();
      expect(run.status.name).toBe('RUNNING');
    } finally {
      await stack.temporal.workflow.getHandle(doc.workflowId).terminate('test over');
    }
  });
});
