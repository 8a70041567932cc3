import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { call, startStack, type Stack } from './support/stack.js';

// A worker process killed (SIGKILL) while the gateway is answering a charge: the charge must happen once.

const masterKey = randomBytes(32);
let stack: Stack;
const children: ChildProcess[] = [];

/** Starts `worker/main.ts`, the production worker, on this stack's database and task queues. */
function startWorker(): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'worker/main.ts'], {
    env: {
      ...process.env,
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

it('a worker killed in the middle of an attempt does not charge twice: another worker finishes it', async () => {
  const { apiKey, account } = await stack.createAccount({}, [
    { name: 'slow', kind: 'test', test: true, credentials: { latencyMs: '4000' } },
  ]);
  const first = await startWorker();
  const answer = call(stack.baseUrl, 'POST', '/api/recovery/execute', {
    key: apiKey,
    body: {
      paymentMethodToken: 'tok_visa',
      amount: 4242,
      isTrialConversion: true,
      originalDeclineCode: 'insufficient_funds',
    },
  });
  const charges = stack.stores.db.collection('sandboxCharges');
  // Kill the worker once the gateway has charged but before its answer has come back.
  while ((await charges.countDocuments({ token: 'tok_visa' })) === 0)
    await new Promise((r) => setTimeout(r, 50));
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
