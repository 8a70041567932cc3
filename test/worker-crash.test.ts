import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { verifyWebhookSignature } from '../runtime/webhook-signature.js';
import type { RecoveryDoc } from '../store/recoveries.js';
import { amountDueSignal, cardUpdatedSignal } from '../workflows/recovery-definitions.js';
import { eventsOf } from './support/events.js';
import { sampleEvent } from './support/sample-events.js';
import { call, startStack, type Stack } from './support/stack.js';
import { startReceiver } from './support/webhook-receiver.js';

// A worker process killed (SIGKILL) in the middle of what it does outside: a charge must happen once, and a
// webhook POST must be sent again rather than lost.

const masterKey = randomBytes(32);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let stack: Stack;
const children: ChildProcess[] = [];

/**
 * Starts `worker/main.ts`, the production worker (or `script`, a variant of it, with `env`), on this stack's
 * database and task queues.
 */
function startWorker(script = 'worker/main.ts', env: Record<string, string> = {}): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    env: {
      ...process.env,
      ...env,
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_TASK_QUEUE: stack.taskQueuePrefix,
      MONGODB_URI: `${inject('mongoUri')}${stack.dbName}`,
      RECOUP_MASTER_KEY: masterKey.toString('base64'),
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`worker exited with ${code}`)));
    child.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('worker started')) resolve(child);
    });
  });
}

beforeAll(async () => {
  stack = await startStack({ worker: false, masterKey });
});
afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await stack.close();
});

/**
 * A trial conversion of `amount` on `tok_visa` through a gateway that answers in 4 s, executed while only a
 * new worker runs (the only one that may take it): the pending answer, the account, and that worker.
 */
async function slowTrial(amount: number) {
  const { apiKey, account } = await stack.createAccount({}, [
    { name: 'slow', kind: 'test', test: true, credentials: { latencyMs: '4000' } },
  ]);
  for (const c of children) c.kill('SIGKILL');
  const first = await startWorker();
  const answer = call(stack.baseUrl, 'POST', '/api/recovery/execute', {
    key: apiKey,
    body: {
      paymentMethodToken: 'tok_visa',
      amount,
      isTrialConversion: true,
      originalDeclineCode: 'insufficient_funds',
    },
  });
  return { apiKey, account, first, answer };
}

it('a worker killed in the middle of an attempt does not charge twice: another worker finishes it', async () => {
  const { apiKey, account, first, answer } = await slowTrial(4242);
  const charges = stack.stores.db.collection('sandboxCharges');
  // Kill the worker once the gateway has charged but before its answer has come back.
  while ((await charges.countDocuments({ token: 'tok_visa' })) === 0) await sleep(50);
  first.kill('SIGKILL');
  await startWorker();
  const res = await answer;
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ success: true, strategyUsed: 'primary' });
  expect(await charges.countDocuments({ token: 'tok_visa' })).toBe(1);
  const status = await call(stack.baseUrl, 'GET', `/api/recovery/status/${String(res.body.transactionId)}`, {
    key: apiKey,
  });
  expect(status.body).toMatchObject({ status: 'succeeded', attemptCount: 1 });
  expect(account.id).toBeTruthy();
}, 120_000);

it('a worker killed mid-charge is replaced by one that sends the same attempt, not one decided anew from a signal since', async () => {
  const { apiKey, account, first, answer } = await slowTrial(4343);
  const charges = stack.stores.db.collection('sandboxCharges');
  while ((await charges.countDocuments({ token: 'tok_visa', amount: 4343 })) === 0) await sleep(50);
  first.kill('SIGKILL');
  // While no worker runs it, the billing platform reports part of the payment made: the attempt already
  // sent took 4343, so that is what the recovery must record (a replanned attempt would send 3000 under the
  // same key: refused by a real gateway, or recorded as 3000 while 4343 was taken).
  const doc = await stack.stores.db.collection<RecoveryDoc>('recoveries').findOne({ accountId: account.id });
  await stack.temporal.workflow.getHandle(doc!.workflowId).signal(amountDueSignal, { amount: 3000 });
  await startWorker();
  const res = await answer;
  expect(res.body).toMatchObject({ success: true });
  expect(await charges.countDocuments({ token: 'tok_visa', amount: { $in: [4343, 3000] } })).toBe(1);
  const status = await call(stack.baseUrl, 'GET', `/api/recovery/status/${String(res.body.transactionId)}`, {
    key: apiKey,
  });
  expect(status.body).toMatchObject({ status: 'succeeded', amount: 4343, attemptCount: 1 });
}, 120_000);

it('a worker killed while a webhook POST is in flight: another worker sends the same attempt again, recorded once', async () => {
  // The merchant's endpoint holds the first request without answering; later ones get 200 at once.
  const receiver = await startReceiver({
    answer: (_req, index) => (index === 0 ? { status: 200, delayMs: 30_000 } : { status: 200 }),
  });
  try {
    const { account, webhookSigningSecret } = await stack.createAccount({ webhookUrl: receiver.url });
    for (const c of children) c.kill('SIGKILL'); // only the worker this test kills may take the delivery
    const first = await startWorker();
    const { eventId } = await stack.events.publish(account.id, sampleEvent('recovery.success'));
    while (receiver.received.length === 0) await sleep(50);
    first.kill('SIGKILL');
    await startWorker();
    let record = await stack.stores.events.get(eventId);
    for (let waited = 0; record?.deliveryStatus !== 'delivered' && waited < 60_000; waited += 200) {
      await sleep(200);
      record = await stack.stores.events.get(eventId);
    }
    expect(record?.deliveryStatus).toBe('delivered');
    const requests = receiver.received.filter((r) => r.headers['x-service-event-id'] === eventId);
    // At least once: the same attempt, the same stored bytes, signed again; merchants dedupe by event id.
    expect(requests).toHaveLength(2);
    expect(requests.map((r) => r.headers['x-service-delivery-attempt'])).toEqual(['1', '1']);
    for (const req of requests) {
      expect(req.raw.toString('utf8')).toBe(record?.body);
      const signature = req.headers['x-service-signature'] as string;
      expect(verifyWebhookSignature(req.raw, signature, webhookSigningSecret)).toBe(true);
    }
    expect(record?.deliveries).toHaveLength(1);
    expect(record?.deliveries[0]?.attempts).toMatchObject([{ attempt: 1, statusCode: 200, error: null }]);
  } finally {
    await receiver.close();
  }
}, 120_000);

it('a worker killed once it published an ending, a new card saved before another takes over: the success that follows is published too', async () => {
  const { apiKey, account } = await stack.createAccount();
  for (const c of children) c.kill('SIGKILL');
  const dying = await startWorker('test/support/dying-worker.ts', { DIE_AFTER_EVENT: 'recovery.failed' });
  const died = new Promise((resolve) => dying.once('exit', resolve));
  const answer = call(stack.baseUrl, 'POST', '/api/recovery/execute', {
    key: apiKey,
    body: {
      paymentMethodToken: 'tok_decline_expired_card',
      originalDeclineCode: 'expired_card',
      amount: 4646,
    },
  });
  // The worker published recovery.card_expired and recovery.failed, and died before its workflow task was
  // done: the task is taken again, by the next worker, after the customer's new card came in.
  await died;
  const doc = await stack.stores.db.collection<RecoveryDoc>('recoveries').findOne({ accountId: account.id });
  const handle = stack.temporal.workflow.getHandle(doc!.workflowId);
  await handle.signal(cardUpdatedSignal, { newToken: 'tok_visa', paymentMethodType: 'card' });
  await startWorker();
  await handle.result();
  expect([200, 202]).toContain((await answer).status);

  // The retaken task charged the new card: the merchant is told so after the failure already sent, under an
  // id of its own (it had been the failure's first event's, and was dropped as a repeat of it).
  const status = await call(stack.baseUrl, 'GET', `/api/recovery/status/${doc!._id}`, { key: apiKey });
  expect(status.body).toMatchObject({ status: 'succeeded' });
  const charges = stack.stores.db.collection('sandboxCharges');
  expect(await charges.countDocuments({ token: 'tok_visa', amount: 4646 })).toBe(1);
  const events = await eventsOf(stack, account.id, [
    'recovery.card_expired',
    'recovery.failed',
    'recovery.success',
  ]);
  expect(events.map((e) => e.type).sort()).toEqual([
    'recovery.card_expired',
    'recovery.failed',
    'recovery.success',
  ]);
}, 120_000);
