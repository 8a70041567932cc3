import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createApp } from '../api/app.js';
import { createLogger } from '../runtime/logger.js';
import { createEventPublisher } from '../services/events.js';
import { call, startStack, type Stack } from './support/stack.js';

// An API process whose Temporal is unreachable must not strand a recovery: it answers 503 and a retry
// with the same idempotency key — through a healthy process — resumes the same recovery. Its health
// check says which dependency is down.

let stack: Stack;
let broken: { url: string; server: Server; connection: Connection };
/** What the broken app logged, one JSON line each. */
const logged: string[] = [];
/** Answers of the broken app that its routes' OpenAPI entries do not declare. */
const undeclared: string[] = [];

beforeAll(async () => {
  stack = await startStack();
  // No gRPC retry interceptor: the unreachable server fails fast instead of after the client's long back-off.
  const connection = Connection.lazy({ address: '127.0.0.1:1', connectTimeout: 300, interceptors: [] });
  const temporal = new Client({ connection, namespace: 'default' });
  const clock = () => new Date();
  const app = createApp({
    undeclared: (problem) => undeclared.push(problem),
    log: createLogger('warn', 'test', { write: (line: string) => void logged.push(line) }),
    stores: stack.stores,
    temporal,
    queues: stack.queues,
    publicBaseUrl: 'http://127.0.0.1',
    clock,
    events: createEventPublisher({ stores: stack.stores, temporal, queues: stack.queues, clock }),
  });
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  broken = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, connection };
});
afterAll(async () => {
  await new Promise((r) => broken.server.close(r));
  await stack.close();
  expect(undeclared).toEqual([]);
});

it('answers 503 when Temporal is unreachable, and the same idempotency key resumes the recovery later', async () => {
  const { apiKey, account } = await stack.createAccount();
  const body = {
    paymentMethodToken: 'tok_visa',
    amount: 5150,
    originalDeclineCode: 'try_again_later',
    idempotencyKey: 'inv-503',
  };
  const failed = await call(broken.url, 'POST', '/api/recovery/execute', { key: apiKey, body });
  expect(failed.status).toBe(503);
  // What to do, and nothing internal (no error class, no stack).
  expect(failed.body).toEqual({
    error: 'Internal error',
    message: expect.stringContaining('same idempotencyKey'),
    transactionId: expect.stringMatching(/^[0-9a-f-]{36}$/),
    requestId: failed.headers.get('x-request-id'),
  });
  expect(await stack.stores.db.collection('sandboxCharges').countDocuments({})).toBe(0);
  // The operator's log says why, under the request's id.
  const line = logged
    .map((l) => JSON.parse(l) as { requestId?: string; status?: number; err?: { message?: string } })
    .find((l) => l.status === 503 && l.requestId === failed.headers.get('x-request-id'));
  expect(line?.err?.message).toBeTruthy();

  await expectResumed(apiKey, body, failed.body.transactionId);
  expect(await stack.stores.db.collection('sandboxCharges').countDocuments({})).toBe(1);
  expect(account.id).toBeTruthy();
}, 120_000);

it('without an idempotency key, the 503 says to retry the same request, and that retry resumes the recovery', async () => {
  const { apiKey } = await stack.createAccount();
  const body = { paymentMethodToken: 'tok_visa', amount: 5151, originalDeclineCode: 'try_again_later' };
  const failed = await call(broken.url, 'POST', '/api/recovery/execute', { key: apiKey, body });
  expect(failed.status).toBe(503);
  expect(failed.body).toMatchObject({
    message: expect.stringContaining('retry the same request'),
    transactionId: expect.stringMatching(/^[0-9a-f-]{36}$/),
  });
  expect(failed.body.message).not.toContain('idempotencyKey');

  // The velocity rule (same card and amount within 5 minutes) finds the recovery whose start failed.
  await expectResumed(apiKey, body, failed.body.transactionId);
}, 120_000);

it('a request changed since its 503 (another card, another amount) under the same key is a 409, never the first request run in its place', async () => {
  const { apiKey } = await stack.createAccount();
  const body = {
    paymentMethodToken: 'tok_visa',
    amount: 5152,
    originalDeclineCode: 'try_again_later',
    idempotencyKey: 'inv-503-changed',
  };
  const failed = await call(broken.url, 'POST', '/api/recovery/execute', { key: apiKey, body });
  expect(failed.status).toBe(503);
  const changed = { ...body, paymentMethodToken: 'tok_mastercard', amount: 9999 };
  const refused = await call(stack.baseUrl, 'POST', '/api/recovery/execute', { key: apiKey, body: changed });
  expect(refused.status).toBe(409);
  expect(refused.body).toMatchObject({
    existingTransactionId: failed.body.transactionId,
    existingStatus: 'unknown',
  });
  expect(await stack.stores.db.collection('sandboxCharges').countDocuments({ amount: 5152 })).toBe(0);
  // The request it was made for still resumes it.
  await expectResumed(apiKey, body, failed.body.transactionId);
}, 120_000);

/** The retry of a request whose start failed resumes that recovery (charged once), and one more is a 409. */
async function expectResumed(apiKey: string, body: Record<string, unknown>, transactionId: unknown) {
  const resumed = await call(stack.baseUrl, 'POST', '/api/recovery/execute', { key: apiKey, body });
  expect(resumed.status).toBe(200);
  expect(resumed.body).toMatchObject({ success: true, transactionId });
  const again = await call(stack.baseUrl, 'POST', '/api/recovery/execute', { key: apiKey, body });
  expect(again.status).toBe(409);
  expect(again.body).toMatchObject({ existingTransactionId: transactionId, existingStatus: 'succeeded' });
}

it('reports itself degraded meanwhile: health answers 503 with temporal down and mongo ok', async () => {
  const res = await call(broken.url, 'GET', '/api/health');
  expect(res.status).toBe(503);
  expect(res.body).toEqual({
    status: 'degraded',
    version: expect.any(String),
    checks: { mongo: 'ok', temporal: 'down' },
  });
});
