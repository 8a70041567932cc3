import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collections } from '../store/collections.js';
import { cliEnvOf, runCli, type CliRun } from './support/cli.js';
import { onServer } from './support/pages.js';
import { poll } from './support/poll.js';
import { call, startStack, type Stack } from './support/stack.js';

// A named database and master key, so the real `recoup` executable works on the stack's data.
const dbName = `ac_${randomBytes(4).toString('hex')}`;
const masterKey = randomBytes(32);
let stack: Stack;

const recoup = (...args: string[]): Promise<CliRun> => runCli(args, cliEnvOf(stack, masterKey));

beforeAll(async () => {
  stack = await startStack({ dbName, masterKey });
});
afterAll(() => stack.close());

/** An account with work of every kind: recoveries ended and queued, deliveries retrying, a link, a pulse, a prediction. */
async function busyMerchant() {
  const { account, apiKey } = await stack.createAccount({
    cancelFlow: { enabled: true, offers: [{ type: 'pause', months: 1 }] },
  });
  await stack.stores.accounts.setConnector(account.id, 'chargebee', {
    webhookUsername: 'u',
    webhookPassword: 'p',
  });
  const post = (path: string, body: unknown) => call(stack.baseUrl, 'POST', path, { key: apiKey, body });
  const statuses = [
    await post('/api/recovery/execute', {
      paymentMethodToken: 'tok_visa',
      originalDeclineCode: 'try_again_later',
      amount: 2500,
      customerEmail: 'ann@example.com',
    }),
    await post('/api/recovery/execute', {
      paymentMethodToken: 'tok_mastercard',
      originalDeclineCode: 'insufficient_funds',
      amount: 4000,
    }),
    await post('/api/recovery/pulse', { amount: 900, customerEmail: 'ann@example.com' }),
    await post('/api/cancel-flow/generate', { customerId: 'cus_1', customerEmail: 'ann@example.com' }),
    await post('/api/predict/risk', { paymentMethodToken: 'tok_visa', amount: 2500 }),
  ].map((r) => r.status);
  expect(statuses).toEqual([200, 202, 200, 200, 200]);
  return { id: account.id, apiKey };
}

/** Every document of the database as text. */
async function everything(): Promise<string> {
  const docs = await Promise.all(
    Object.values(collections).map((n) => stack.stores.db.collection(n).find({}).toArray()),
  );
  return JSON.stringify(docs);
}

async function workflowsOf(accountId: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const e of stack.temporal.workflow.list({ query: `AccountId = "${accountId}"` }))
    ids.push(e.workflowId);
  return ids;
}

describe('recoup accounts close', () => {
  it('stops the work under way, deletes every workflow and document of the account, and nothing of another', async () => {
    const leaving = await busyMerchant();
    const staying = await busyMerchant();
    // The recovered payment's webhook is being retried (the endpoint refuses connections).
    expect(
      await poll(
        () => workflowsOf(leaving.id),
        (ids) => ids.some((id) => id.startsWith('webhook/')),
      ),
    ).not.toEqual([]);

    const run = await recoup('accounts', 'close', leaving.id, '--confirm', leaving.id, '--json');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const closed = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(closed).toMatchObject({ clientId: leaving.id, closed: true, recoveriesStopped: 1 });
    expect(closed.workflowsTerminated).toBeGreaterThanOrEqual(1);
    expect(closed.workflowHistories).toBeGreaterThanOrEqual(3);

    const dump = await everything();
    expect(dump).not.toContain(leaving.id);
    expect(dump).toContain(staying.id);
    const statusOf = (apiKey: string) => call(stack.baseUrl, 'GET', '/api/recoveries', { key: apiKey });
    expect((await statusOf(leaving.apiKey)).status).toBe(401);
    expect((await statusOf(staying.apiKey)).body).toMatchObject({
      data: [expect.anything(), expect.anything()],
    });
    const intake = await fetch(`${stack.baseUrl}/api/connectors/chargebee/webhook/${leaving.id}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(intake.status).toBe(404);
    expect((await recoup('accounts', 'show', leaving.id)).code).toBe(1);
    // Temporal deletes a closed history once its close is acknowledged in the history queue (about 30 s).
    expect(
      await poll(
        () => workflowsOf(leaving.id),
        (ids) => ids.length === 0,
        { timeoutMs: 90_000, everyMs: 1_000 },
      ),
    ).toEqual([]);
    expect(await workflowsOf(staying.id)).not.toEqual([]);
  }, 150_000);

  it('waits for a recovery finishing an attempt: exits 1 naming it, deletes nothing, and closes when run again', async () => {
    const { account, apiKey } = await stack.createAccount();
    // An ambiguous charge: its lookup runs 30 s later, and the recovery can stop only after it.
    const res = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: apiKey,
      body: { paymentMethodToken: 'tok_server_error', amount: 4321, originalDeclineCode: 'processing_error' },
    });
    expect(res.body).toMatchObject({ status: 'unknown' });
    const transactionId = String(res.body.transactionId);

    const first = await recoup('accounts', 'close', account.id, '--confirm', account.id);
    expect(first.code).toBe(1);
    expect(first.stderr).toContain(transactionId);
    expect(await stack.stores.recoveries.find(account.id, transactionId)).not.toBeNull();
    expect((await call(stack.baseUrl, 'GET', '/api/recoveries', { key: apiKey })).status).toBe(401);

    const stopped = await poll(
      () => stack.stores.recoveries.find(account.id, transactionId),
      (doc) => doc?.state === 'stopped',
      { timeoutMs: 60_000, everyMs: 500 },
    );
    expect(stopped?.state).toBe('stopped');
    const second = await recoup('accounts', 'close', account.id, '--confirm', account.id, '--json');
    expect(second.code).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ closed: true, recoveriesStopped: 0 });
    expect(await everything()).not.toContain(account.id);
  }, 120_000);

  it('an account being closed has no hosted pages and no card health sweep', async () => {
    const { account, apiKey } = await stack.createAccount({ cardHealthSweep: { enabled: true } });
    const link = await call<{ url: string }>(stack.baseUrl, 'POST', '/api/recovery/update-card/generate', {
      key: apiKey,
      body: { paymentMethodToken: 'tok_visa' },
    });
    const page = () => fetch(onServer(stack.baseUrl, link.body.url), { redirect: 'manual' });
    expect((await page()).status).toBe(200);
    expect(await stack.stores.accounts.sweepEnabled()).toContain(account.id);

    await stack.stores.accounts.shut(account.id);
    expect((await page()).status).toBe(410);
    expect(await stack.stores.accounts.sweepEnabled()).not.toContain(account.id);
  });

  it.each([
    [['acct_x'], 2],
    [['acct_x', '--confirm', 'acct_y'], 2],
    [['acct_nobody', '--confirm', 'acct_nobody'], 1],
  ])('%j exits %i', async (args, code) => {
    const run = await recoup('accounts', 'close', ...args);
    expect(run.code).toBe(code);
    expect(run.stderr).not.toBe('');
  });
});
