import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import type { Server as HttpServer } from 'node:http';
import { Client, Connection } from '@temporalio/client';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../api/app.js';
import { createLogger } from '../runtime/logger.js';
import { createEventPublisher } from '../services/events.js';
import { createStores } from '../store/index.js';
import { taskQueues } from '../worker/task-queues.js';
import { call, startStack, type Stack } from './support/stack.js';

// Dependencies that take a request and never answer (a worker pool that is down, a server behind a
// firewall that drops packets) must not leave the API's callers hanging: execute answers 202 once its
// first phase's deadline passes, the health check answers 503 within seconds.

describe('execute with no worker polling the recovery queue', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ worker: false, firstPhaseDeadlineMs: 2_000 });
  });
  afterAll(() => stack.close());

  it('answers 202 (still processing) soon after the deadline, with the workflow started and the id claimed', async () => {
    const { apiKey, account } = await stack.createAccount();
    const body = { paymentMethodToken: 'tok_visa', amount: 2750, idempotencyKey: 'inv-no-worker' };
    const started = Date.now();
    const res = await call(stack.baseUrl, 'POST', '/api/recovery/execute', { key: apiKey, body });
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(res).toMatchObject({ status: 202, body: { status: 'unknown' } });
    const transactionId = String(res.body.transactionId);
    expect(transactionId).toMatch(/^[0-9a-f-]{36}$/);
    // The recovery waits for a worker, under the id the merchant was given.
    const doc = await stack.stores.recoveries.find(account.id, transactionId);
    const handle = stack.temporal.workflow.getHandle(doc!.workflowId);
    expect((await handle.describe()).status.name).toBe('RUNNING');
    expect(await stack.stores.recoveries.claimAnswer(account.id, transactionId, 'failure')).toBe(false);
    // The same request again is the same recovery.
    const again = await call(stack.baseUrl, 'POST', '/api/recovery/execute', { key: apiKey, body });
    expect(again).toMatchObject({ status: 409, body: { existingTransactionId: transactionId } });
    // A stop cannot be taken either until a worker comes: 202 after the stop's wait, not a hung request.
    const stopping = Date.now();
    const stop = await call(stack.baseUrl, 'POST', '/api/recovery/stop', {
      key: apiKey,
      body: { transactionId, reason: 'paid_elsewhere' },
    });
    expect(Date.now() - stopping).toBeLessThan(20_000);
    expect(stop).toMatchObject({ status: 202, body: { transactionId, status: 'unknown' } });
    await handle.terminate('test over');
  }, 60_000);
});

describe('the health check with dependencies that never answer', () => {
  let blackHole: Server;
  const sockets: Socket[] = [];
  let api: HttpServer;
  let baseUrl: string;
  let mongo: MongoClient;
  let connection: Connection;

  beforeAll(async () => {
    // Takes connections and never says a word.
    blackHole = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => blackHole.listen(0, '127.0.0.1', resolve));
    const address = `127.0.0.1:${(blackHole.address() as AddressInfo).port}`;
    mongo = new MongoClient(`mongodb://${address}/recoup`, { serverSelectionTimeoutMS: 10_000 });
    const stores = createStores(mongo.db('recoup'), randomBytes(32));
    connection = Connection.lazy({ address, connectTimeout: 60_000 });
    const temporal = new Client({ connection, namespace: 'default' });
    const clock = () => new Date();
    const queues = taskQueues('t-black-hole');
    const app = createApp({
      log: createLogger('silent', 'test'),
      stores,
      temporal,
      queues,
      publicBaseUrl: 'http://127.0.0.1',
      clock,
      events: createEventPublisher({ stores, temporal, queues, clock }),
    });
    api = await new Promise<HttpServer>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    baseUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => api.close(r));
    sockets.forEach((s) => s.destroy());
    blackHole.close();
    await Promise.allSettled([mongo.close(), connection.close()]);
  });

  it('answers 503, both down, within a few seconds', async () => {
    const started = Date.now();
    const res = await call(baseUrl, 'GET', '/api/health');
    expect(Date.now() - started).toBeLessThan(6_000);
    expect(res).toMatchObject({
      status: 503,
      body: { status: 'degraded', checks: { mongo: 'down', temporal: 'down' } },
    });
  }, 30_000);
});
