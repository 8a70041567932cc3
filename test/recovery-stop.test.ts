import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnvOf, runCli } from './support/cli.js';
import { eventsOf } from './support/events.js';
import { poll } from './support/poll.js';
import { call, startStack, type Stack } from './support/stack.js';

let stack: Stack;
let n = 0;
const masterKey = randomBytes(32);

beforeAll(async () => {
  stack = await startStack({ masterKey });
});
afterAll(() => stack.close());

type Account = Awaited<ReturnType<Stack['createAccount']>>;

/** A recovery queued for a smart-time retry (insufficient funds), for a customer with an email. */
async function queued(account?: Account) {
  const acct = account ?? (await stack.createAccount());
  n += 1;
  const email = `stop${n}@example.com`;
  const idempotencyKey = `inv-stop-${n}`;
  const body = {
    paymentMethodToken: 'tok_decline_insufficient_funds',
    amount: 2000 + n,
    originalDeclineCode: 'insufficient_funds',
    customerEmail: email,
    idempotencyKey,
  };
  const res = await call(stack.baseUrl, 'POST', '/api/recovery/execute', { key: acct.apiKey, body });
  expect(res).toMatchObject({ status: 202, body: { status: 'queued' } });
  const transactionId = String(res.body.transactionId);
  const doc = await stack.stores.recoveries.find(acct.account.id, transactionId);
  return { account: acct, transactionId, idempotencyKey, email, body, workflowId: doc!.workflowId };
}

const stop = (key: string, body: Record<string, unknown>) =>
  call(stack.baseUrl, 'POST', '/api/recovery/stop', { key, body });
const status = (key: string, id: string) => call(stack.baseUrl, 'GET', `/api/recovery/status/${id}`, { key });
const paywall = (key: string, email: string) =>
  call(stack.baseUrl, 'GET', `/api/recovery/paywall-status?customerEmail=${encodeURIComponent(email)}`, {
    key,
  });
const workflowStatus = async (workflowId: string) =>
  (await stack.temporal.workflow.getHandle(workflowId).describe()).status.name;

describe('POST /api/recovery/stop: a queued recovery stops before its next attempt', () => {
  it('not_owed: 200 with the record (failed, state stopped), the workflow ends, the customer is no longer past due, no webhook', async () => {
    const q = await queued();
    const key = q.account.apiKey;
    expect((await paywall(key, q.email)).body).toMatchObject({ isPastDue: true, failedPaymentCount: 1 });
    const attemptsBefore = (await stack.stores.recoveries.find(q.account.account.id, q.transactionId))!
      .attempts.length;

    const res = await stop(key, { transactionId: q.transactionId, reason: 'not_owed' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      transactionId: q.transactionId,
      status: 'failed',
      state: 'stopped',
      recovered: false,
      recommendedAction: 'monitor',
      recommendedActionReason: 'The merchant stopped the recovery: the payment is no longer owed.',
    });
    expect(res.body).not.toHaveProperty('nextAttemptAt');
    expect((await status(key, q.transactionId)).body).toEqual(res.body);
    expect(await workflowStatus(q.workflowId)).toBe('COMPLETED');
    const after = await stack.stores.recoveries.find(q.account.account.id, q.transactionId);
    expect(after!.attempts).toHaveLength(attemptsBefore);
    expect((await paywall(key, q.email)).body).toMatchObject({ isPastDue: false, failedPaymentCount: 0 });
    // Neither the queue nor the stop sends a webhook.
    expect(await eventsOf(stack, q.account.account.id, [])).toEqual([]);
  });

  it('paid_elsewhere, by idempotency key: 200 succeeded but not recovered, and not past due', async () => {
    const q = await queued();
    const key = q.account.apiKey;
    const res = await stop(key, { idempotencyKey: q.idempotencyKey, reason: 'paid_elsewhere' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      transactionId: q.transactionId,
      status: 'succeeded',
      state: 'paid_elsewhere',
      recovered: false,
      recoveredAt: null,
    });
    expect(await workflowStatus(q.workflowId)).toBe('COMPLETED');
    expect((await paywall(key, q.email)).body).toMatchObject({ isPastDue: false });
  });

  it('paid_elsewhere asked again (its answer was lost): 200 again with the same record, never 409', async () => {
    const q = await queued();
    const key = q.account.apiKey;
    const first = await stop(key, { transactionId: q.transactionId, reason: 'paid_elsewhere' });
    expect(first).toMatchObject({ status: 200, body: { status: 'succeeded', state: 'paid_elsewhere' } });
    expect(await stop(key, { transactionId: q.transactionId, reason: 'paid_elsewhere' })).toMatchObject({
      status: 200,
      body: first.body,
    });
    // Word that it is not owed after all leaves it paid elsewhere.
    expect(await stop(key, { idempotencyKey: q.idempotencyKey, reason: 'not_owed' })).toMatchObject({
      status: 200,
      body: first.body,
    });
    expect((await stack.stores.recoveries.find(q.account.account.id, q.transactionId))!.writtenOffAt).toBe(
      undefined,
    );
  });

  it('a request executed again after its recovery was paid elsewhere is a 409 naming it succeeded but not recovered', async () => {
    const q = await queued();
    const key = q.account.apiKey;
    const stopped = await stop(key, { transactionId: q.transactionId, reason: 'paid_elsewhere' });
    expect(stopped).toMatchObject({ status: 200, body: { status: 'succeeded', state: 'paid_elsewhere' } });
    const attempts = (await stack.stores.recoveries.find(q.account.account.id, q.transactionId))!.attempts;

    const again = await call(stack.baseUrl, 'POST', '/api/recovery/execute', { key, body: q.body });
    expect(again).toMatchObject({
      status: 409,
      body: {
        error: 'Duplicate request',
        existingTransactionId: q.transactionId,
        existingStatus: 'succeeded',
        existingRecovered: false,
      },
    });
    const after = await stack.stores.recoveries.find(q.account.account.id, q.transactionId);
    expect(after).toMatchObject({ state: 'paid_elsewhere' });
    expect(after!.attempts).toEqual(attempts);
  });

  it('a recovery that collected the payment is not stopped: 409 naming its outcome', async () => {
    const key = (await stack.createAccount()).apiKey;
    const recovered = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key,
      body: { paymentMethodToken: 'tok_visa', amount: 3100, originalDeclineCode: 'processing_error' },
    });
    expect(recovered.body).toMatchObject({ success: true });
    expect(
      await stop(key, { transactionId: String(recovered.body.transactionId), reason: 'not_owed' }),
    ).toMatchObject({
      status: 409,
      body: {
        error: 'Recovery has ended',
        existingTransactionId: recovered.body.transactionId,
        existingStatus: 'succeeded',
        existingRecovered: true,
      },
    });
  });
});

describe('POST /api/recovery/stop on a recovery that ended without the payment: its outcome stands, the customer is settled', () => {
  /** A recovery that failed at once (expired card), for a customer with an email. */
  async function failed(account?: Account) {
    const acct = account ?? (await stack.createAccount());
    n += 1;
    const email = `ended${n}@example.com`;
    const res = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: acct.apiKey,
      body: {
        paymentMethodToken: 'tok_decline_expired_card',
        amount: 4000 + n,
        originalDeclineCode: 'processing_error',
        customerEmail: email,
        idempotencyKey: `inv-ended-${n}`,
      },
    });
    expect(res).toMatchObject({ status: 200, body: { success: false } });
    const transactionId = String(res.body.transactionId);
    const record = (await status(acct.apiKey, transactionId)).body;
    expect(record).toMatchObject({ status: 'failed', recovered: false });
    return { account: acct, transactionId, email, record };
  }
  const stored = (f: Awaited<ReturnType<typeof failed>>) =>
    stack.stores.recoveries.find(f.account.account.id, f.transactionId);

  it('paid_elsewhere: 200 with the record unchanged, no longer past due, recorded as paid on their own (once)', async () => {
    const f = await failed();
    const key = f.account.apiKey;
    expect((await paywall(key, f.email)).body).toMatchObject({ isPastDue: true, failedPaymentCount: 1 });

    const res = await stop(key, { transactionId: f.transactionId, reason: 'paid_elsewhere' });
    expect(res).toMatchObject({ status: 200, body: f.record });
    expect((await paywall(key, f.email)).body).toMatchObject({
      isPastDue: false,
      failedPaymentCount: 0,
      totalOwedCents: 0,
    });
    const paidAt = (await stored(f))!.paidOnTheirOwnAt;
    expect(paidAt).toBeInstanceOf(Date);
    expect((await stored(f))!.writtenOffAt).toBeUndefined();

    // Asked again, either way: still 200, and the first word that it was paid stands.
    expect((await stop(key, { transactionId: f.transactionId, reason: 'paid_elsewhere' })).status).toBe(200);
    expect((await stop(key, { transactionId: f.transactionId, reason: 'not_owed' })).status).toBe(200);
    expect(await stored(f)).toMatchObject({ paidOnTheirOwnAt: paidAt, state: 'failed' });
    expect((await stored(f))!.writtenOffAt).toBeUndefined();
    // No webhook for the stop: only what the failure itself sent.
    const sent = (
      await eventsOf(stack, f.account.account.id, ['recovery.failed', 'recovery.card_expired'])
    ).map((e) => e.type);
    expect(sent.sort()).toEqual(['recovery.card_expired', 'recovery.failed']);
  });

  it('not_owed: written off, no longer past due; word that it was paid after all is still recorded', async () => {
    const f = await failed();
    const key = f.account.apiKey;
    const res = await stop(key, { transactionId: f.transactionId, reason: 'not_owed' });
    expect(res).toMatchObject({ status: 200, body: f.record });
    expect((await paywall(key, f.email)).body).toMatchObject({ isPastDue: false });
    const doc = await stored(f);
    expect(doc!.writtenOffAt).toBeInstanceOf(Date);
    expect(doc!.paidOnTheirOwnAt).toBeUndefined();

    expect((await stop(key, { transactionId: f.transactionId, reason: 'paid_elsewhere' })).status).toBe(200);
    expect(await stored(f)).toMatchObject({ writtenOffAt: doc!.writtenOffAt, state: 'failed' });
    expect((await stored(f))!.paidOnTheirOwnAt).toBeInstanceOf(Date);
  });

  it('a recovery stopped while queued, then paid elsewhere after all: 200, recorded as paid', async () => {
    const q = await queued();
    const key = q.account.apiKey;
    expect((await stop(key, { transactionId: q.transactionId, reason: 'not_owed' })).status).toBe(200);
    const res = await stop(key, { transactionId: q.transactionId, reason: 'paid_elsewhere' });
    expect(res).toMatchObject({ status: 200, body: { status: 'failed', state: 'stopped' } });
    expect(
      (await stack.stores.recoveries.find(q.account.account.id, q.transactionId))!.paidOnTheirOwnAt,
    ).toBeInstanceOf(Date);
  });

  it('data retention deletes a written-off recovery once settled long enough, and keeps an unsettled one', async () => {
    const account = await stack.createAccount();
    const settled = await failed(account);
    const owed = await failed(account);
    await stop(account.apiKey, { transactionId: settled.transactionId, reason: 'not_owed' });
    const later = new Date(Date.now() + 60_000);
    const purged = await stack.stores.recoveries.purgeSettledBefore(account.account.id, later);
    expect(purged).toBe(1);
    expect(await stored(settled)).toBeNull();
    expect(await stored(owed)).not.toBeNull();
  });
});

describe('POST /api/recovery/stop: what it refuses, changing nothing', () => {
  it.each([
    ['neither id', () => ({ reason: 'not_owed' }), 'transactionId'],
    [
      'both ids',
      (id: string) => ({ transactionId: id, idempotencyKey: 'k', reason: 'not_owed' }),
      'transactionId',
    ],
    ['an unknown reason', (id: string) => ({ transactionId: id, reason: 'refunded' }), 'reason'],
    ['no reason', (id: string) => ({ transactionId: id }), 'reason'],
    ['an unknown field', (id: string) => ({ transactionId: id, reason: 'not_owed', force: true }), 'force'],
    [
      'an idempotencyKey of 129 characters',
      () => ({ idempotencyKey: 'k'.repeat(129), reason: 'not_owed' }),
      'idempotencyKey',
    ],
    [
      'a transactionId of 201 characters',
      () => ({ transactionId: 'x'.repeat(201), reason: 'not_owed' }),
      'transactionId',
    ],
  ])('%s: 400 with details, and the recovery goes on', async (_name, body, field) => {
    const q = await queued();
    const res = await stop(q.account.apiKey, body(q.transactionId));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: expect.any(String), details: expect.any(Object) });
    expect(Object.keys(res.body.details as object)).toContain(field);
    expect((await status(q.account.apiKey, q.transactionId)).body).toMatchObject({ state: 'queued' });
    expect(await workflowStatus(q.workflowId)).toBe('RUNNING');
  });

  it('an unknown transaction, or another account’s, is 404 and the other account’s recovery goes on', async () => {
    const q = await queued();
    const other = await stack.createAccount();
    expect(await stop(other.apiKey, { transactionId: 'no-such-id', reason: 'not_owed' })).toMatchObject({
      status: 404,
      body: { error: 'Transaction not found' },
    });
    expect((await stop(other.apiKey, { transactionId: q.transactionId, reason: 'not_owed' })).status).toBe(
      404,
    );
    expect((await stop(other.apiKey, { idempotencyKey: q.idempotencyKey, reason: 'not_owed' })).status).toBe(
      404,
    );
    expect((await status(q.account.apiKey, q.transactionId)).body).toMatchObject({ state: 'queued' });
    expect(await workflowStatus(q.workflowId)).toBe('RUNNING');
  });

  it('needs the secret key', async () => {
    const q = await queued();
    const res = await call(stack.baseUrl, 'POST', '/api/recovery/stop', {
      key: q.account.publishableKey,
      body: { transactionId: q.transactionId, reason: 'not_owed' },
    });
    expect(res.status).toBe(401);
  });
});

describe('POST /api/recovery/stop while an ambiguous charge is being looked up', () => {
  it('answers 202 at once with the stop recorded (so the lookup only reads); the recovery stops after the lookup, before any other attempt', async () => {
    const account = await stack.createAccount();
    const res = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: account.apiKey,
      body: { paymentMethodToken: 'tok_server_error', amount: 4321, originalDeclineCode: 'processing_error' },
    });
    expect(res.body).toMatchObject({ status: 'unknown' });
    const transactionId = String(res.body.transactionId);

    const asked = await stop(account.apiKey, { transactionId, reason: 'not_owed' });
    expect(asked).toMatchObject({
      status: 202,
      body: { transactionId, status: 'unknown', state: 'reconciling' },
    });
    const doc = await stack.stores.recoveries.find(account.account.id, transactionId);
    expect(await stack.stores.recoveries.stopAskedOf(doc!._id)).toBe('not_owed');
    // Asked again for another reason: the first stays, in the read model as in the workflow.
    const again = await stop(account.apiKey, { transactionId, reason: 'paid_elsewhere' });
    expect(again).toMatchObject({ status: 202, body: { transactionId, state: 'reconciling' } });
    expect(await stack.stores.recoveries.stopAskedOf(doc!._id)).toBe('not_owed');
    // The lookup runs 30 s after the ambiguous answer and finds nothing charged; then the stop applies.
    const ended = await poll(
      () => stack.stores.recoveries.find(account.account.id, transactionId),
      (doc) => doc?.state === 'stopped',
      { timeoutMs: 60_000, everyMs: 500 },
    );
    expect(ended?.state).toBe('stopped');
    expect(ended?.stopAsked).toBe('not_owed');
    expect(ended!.attempts.filter((a) => a.outcome === 'approved')).toHaveLength(0);
    expect(ended!.attempts.length).toBeLessThanOrEqual(1);
  }, 90_000);
});

describe('recoup recoveries stop: the operator’s way to stop a recovery', () => {
  const recoup = (...args: string[]) => runCli(['recoveries', 'stop', ...args], cliEnvOf(stack, masterKey));

  it('stops a queued recovery by idempotency key and says so; a stop of a recovered one exits 1 naming its end', async () => {
    const q = await queued();
    const clientId = q.account.account.id;
    const run = await recoup(
      clientId,
      '--idempotency-key',
      q.idempotencyKey,
      '--reason',
      'not_owed',
      '--json',
    );
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      transactionId: q.transactionId,
      outcome: 'stopped',
      state: 'stopped',
    });
    expect((await status(q.account.apiKey, q.transactionId)).body).toMatchObject({ state: 'stopped' });
    const recovered = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: q.account.apiKey,
      body: { paymentMethodToken: 'tok_visa', amount: 3200, originalDeclineCode: 'processing_error' },
    });
    const again = await recoup(
      clientId,
      '--transaction-id',
      String(recovered.body.transactionId),
      '--reason',
      'paid_elsewhere',
    );
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/has ended \(succeeded\); its outcome stands/);
  });

  it.each([
    [['--reason', 'not_owed'], 2, /exactly one of --transaction-id and --idempotency-key/],
    [
      ['--transaction-id', 'x', '--reason', 'refunded'],
      2,
      /--reason must be one of paid_elsewhere, not_owed/,
    ],
    [['--transaction-id', 'no-such-id', '--reason', 'not_owed'], 1, /no recovery/],
  ])('%j exits %i and changes nothing', async (args, code, message) => {
    const q = await queued();
    const run = await recoup(q.account.account.id, ...args);
    expect(run.code).toBe(code);
    expect(run.stderr).toMatch(message);
    expect((await status(q.account.apiKey, q.transactionId)).body).toMatchObject({ state: 'queued' });
  });

  it('an unknown account exits 1', async () => {
    const run = await recoup('acct_nobody', '--transaction-id', 'x', '--reason', 'not_owed');
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/no account with clientId acct_nobody/);
  });
});
