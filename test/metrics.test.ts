import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../activities/index.js';
import { createWorkerMetrics } from '../activities/metrics.js';
import { createApiRegistry, serveMetrics } from '../api/metrics.js';
import { loadConfig } from '../runtime/config.js';
import { poll } from './support/poll.js';
import { sumOf } from './support/prometheus.js';
import { RecordingMeter } from './support/recording-meter.js';
import { sampleEvent } from './support/sample-events.js';
import { activityDeps, call, startStack, type Stack } from './support/stack.js';
import { startReceiver, type Receiver } from './support/webhook-receiver.js';
import { attemptOf } from './support/attempts.js';

const key = Buffer.alloc(32, 7).toString('base64');

describe('METRICS_PORT and METRICS_HOST', () => {
  const config = (env: Record<string, string>) => loadConfig({ RECOUP_MASTER_KEY: key, ...env });

  it('serve no metrics unless a port is set; the host defaults to loopback', () => {
    expect(config({}).metrics).toBeNull();
    expect(config({ METRICS_PORT: '9464' }).metrics).toEqual({ host: '127.0.0.1', port: 9464 });
    expect(config({ METRICS_PORT: '9464', METRICS_HOST: '0.0.0.0' }).metrics).toEqual({
      host: '0.0.0.0',
      port: 9464,
    });
    expect(config({ METRICS_PORT: '9464', METRICS_HOST: '::1' }).metrics?.host).toBe('::1');
  });

  it.each([
    [{ METRICS_PORT: '0' }, 'METRICS_PORT'],
    [{ METRICS_PORT: 'ninety' }, 'METRICS_PORT'],
    [{ METRICS_PORT: '70000' }, 'METRICS_PORT'],
    [{ METRICS_PORT: '9464', METRICS_HOST: 'metrics.local' }, 'METRICS_HOST'],
  ])('refuse %o, naming %s', (env, variable) => {
    expect(() => config(env)).toThrow(variable);
  });
});

describe('the metrics endpoint', () => {
  let registry: Registry;
  let server: Server;
  let base: string;
  beforeAll(async () => {
    registry = createApiRegistry();
    server = await serveMetrics(registry, { host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it("serves the registry in Prometheus' text format at /metrics, with Node's own process metrics", async () => {
    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const text = await res.text();
    expect(text).toContain('# TYPE process_cpu_user_seconds_total counter');
    expect(text).toContain('nodejs_eventloop_lag_seconds');
  });

  it('answers 404 to any other path or method', async () => {
    expect((await fetch(`${base}/`)).status).toBe(404);
    expect((await fetch(`${base}/api/health`)).status).toBe(404);
    expect((await fetch(`${base}/metrics`, { method: 'POST' })).status).toBe(404);
  });

  it('refuses to start on a port already taken', async () => {
    const port = (server.address() as AddressInfo).port;
    await expect(serveMetrics(new Registry(), { host: '127.0.0.1', port })).rejects.toThrow(/EADDRINUSE/);
  });
});

describe('what the API and the worker record', () => {
  let stack: Stack;
  let api: Registry;
  let meter: RecordingMeter;
  const receivers: Receiver[] = [];

  beforeAll(async () => {
    api = new Registry();
    meter = new RecordingMeter();
    stack = await startStack({ metrics: { api, worker: createWorkerMetrics(meter) } });
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await stack.close();
  });

  /** The requests counted for these labels (the histogram's _count). */
  async function requests(labels: { method: string; route: string; status: string }): Promise<number> {
    return sumOf(await api.metrics(), 'recoup_http_request_duration_seconds_count', labels);
  }

  async function merchant() {
    const receiver = await startReceiver();
    receivers.push(receiver);
    return { receiver, ...(await stack.createAccount({ webhookUrl: receiver.url })) };
  }

  it('labels requests by route template and status, never by raw path', async () => {
    const { apiKey } = await merchant();
    const execute = { method: 'POST', route: '/api/recovery/execute' };
    const byId = { method: 'GET', route: '/api/recovery/status/:transactionId' };
    const before = {
      ok: await requests({ ...execute, status: '200' }),
      bad: await requests({ ...execute, status: '400' }),
      status: await requests({ ...byId, status: '200' }),
      unmatched: await requests({ method: 'GET', route: 'unmatched', status: '404' }),
      page: await requests({ method: 'GET', route: '/update-card/:token', status: '404' }),
    };
    const paid = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: apiKey,
      body: { paymentMethodToken: 'tok_visa', originalDeclineCode: 'try_again_later', amount: 1999 },
    });
    expect(paid.status).toBe(200);
    const bad = await call(stack.baseUrl, 'POST', '/api/recovery/execute', { key: apiKey, body: {} });
    expect(bad.status).toBe(400);
    const id = String(paid.body.transactionId);
    expect((await call(stack.baseUrl, 'GET', `/api/recovery/status/${id}`, { key: apiKey })).status).toBe(
      200,
    );
    const scan = `/wp-admin/${randomUUID()}`;
    expect((await call(stack.baseUrl, 'GET', scan)).status).toBe(404);
    expect((await fetch(`${stack.baseUrl}/update-card/not-a-link`)).status).toBe(404);

    expect(await requests({ ...execute, status: '200' })).toBe(before.ok + 1);
    expect(await requests({ ...execute, status: '400' })).toBe(before.bad + 1);
    expect(await requests({ ...byId, status: '200' })).toBe(before.status + 1);
    expect(await requests({ method: 'GET', route: 'unmatched', status: '404' })).toBe(before.unmatched + 1);
    expect(await requests({ method: 'GET', route: '/update-card/:token', status: '404' })).toBe(
      before.page + 1,
    );
    const text = await api.metrics();
    expect(text).not.toContain(id);
    expect(text).not.toContain(scan);
  });

  it('counts gateway charges by kind and outcome, with their duration, and the recoveries that end', async () => {
    const { apiKey } = await merchant();
    const charges = (outcome: string) =>
      meter.values('recoup_gateway_requests', { gateway_kind: 'test', operation: 'charge', outcome });
    const ended = () => meter.values('recoup_recoveries_ended', { state: 'succeeded' }).length;
    const before = { approved: charges('approved').length, declined: charges('declined').length };
    const endedBefore = ended();
    const durations = meter.values('recoup_gateway_request_duration_seconds', { gateway_kind: 'test' });

    const paid = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: apiKey,
      body: { paymentMethodToken: 'tok_visa', originalDeclineCode: 'try_again_later', amount: 2999 },
    });
    expect(paid.status).toBe(200);
    const queued = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: apiKey,
      body: {
        paymentMethodToken: 'tok_decline_insufficient_funds',
        originalDeclineCode: 'try_again_later',
        amount: 3999,
      },
    });
    expect(queued.status).toBe(202);

    expect(charges('approved')).toEqual([...Array<number>(before.approved).fill(1), 1]);
    expect(charges('declined').length).toBe(before.declined + 1);
    expect(ended()).toBe(endedBefore + 1); // the queued one has not ended
    const timed = meter.values('recoup_gateway_request_duration_seconds', { gateway_kind: 'test' });
    expect(timed.length).toBe(durations.length + 2);
    for (const seconds of timed.slice(durations.length)) expect(seconds).toBeGreaterThan(0);
    for (const seconds of timed.slice(durations.length)) expect(seconds).toBeLessThan(10);
  });

  it('counts webhook POSTs by event and outcome, and how long after the event the first one was acknowledged', async () => {
    const { apiKey, receiver } = await merchant();
    const acknowledged = () =>
      meter.values('recoup_webhook_attempts', { event: 'recovery.success', outcome: 'acknowledged' }).length;
    const lags = () => meter.values('recoup_webhook_delivery_lag_seconds', { event: 'recovery.success' });
    const before = { acknowledged: acknowledged(), lags: lags().length };
    const paid = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: apiKey,
      body: { paymentMethodToken: 'tok_visa', originalDeclineCode: 'try_again_later', amount: 4999 },
    });
    expect(paid.status).toBe(200);
    await poll(acknowledged, (n) => n > before.acknowledged);
    expect(receiver.received.length).toBe(1);
    expect(acknowledged()).toBe(before.acknowledged + 1);
    const lag = lags().slice(before.lags);
    expect(lag).toHaveLength(1);
    expect(lag[0]).toBeGreaterThanOrEqual(0);
    expect(lag[0]).toBeLessThan(30);
  });

  it('counts no delivery lag for a resend, even of an event whose schedule had failed', async () => {
    const { receiver, account } = await merchant();
    const { eventId } = await stack.events.publish(account.id, sampleEvent('card.updated'));
    const acknowledged = () =>
      meter.values('recoup_webhook_attempts', { event: 'card.updated', outcome: 'acknowledged' }).length;
    const lags = () => meter.values('recoup_webhook_delivery_lag_seconds', { event: 'card.updated' }).length;
    await poll(
      () => receiver.received.length,
      (n) => n === 1,
    );
    await poll(
      async () => (await stack.stores.events.get(eventId))?.deliveryStatus,
      (s) => s === 'delivered',
    );
    const before = { acknowledged: acknowledged(), lags: lags() };
    // As if its whole schedule had failed: the resend puts it back to pending.
    await stack.stores.events.setStatus(eventId, 'failed');
    await stack.events.resend(eventId);
    await poll(acknowledged, (n) => n > before.acknowledged);
    expect(receiver.received).toHaveLength(2);
    expect({ acknowledged: acknowledged(), lags: lags() }).toEqual({
      acknowledged: before.acknowledged + 1,
      lags: before.lags,
    });
  });

  /** The worker's activities on this stack's stores, recording on the same meter, to call one directly. */
  const activities = () => createActivities(activityDeps(stack, createWorkerMetrics(meter)));

  it('counts a webhook POST not sent because the URL became http after the event was recorded', async () => {
    const created = await stack.createAccount();
    const { eventId } = await stack.events.publish(created.account.id, sampleEvent('recovery.success'));
    // Settings refuse http:// URLs; written straight to the store, the sender must refuse it too.
    await stack.stores.accounts.updateSettings(created.account.id, {
      ...created.account.settings,
      webhookUrl: 'http://127.0.0.1:9/hook',
    });
    const notSent = () =>
      meter.values('recoup_webhook_attempts', { event: 'recovery.success', outcome: 'not_sent' }).length;
    const before = notSent();
    const outcome = await activities().deliverWebhook({ eventId, deliveryId: randomUUID(), attempt: 1 });
    expect(outcome).toMatchObject({ ok: false, statusCode: null, error: expect.stringContaining('https') });
    expect(notSent()).toBe(before + 1);
  });

  it('counts a charge the card-network rules hold back, by brand, and sends nothing', async () => {
    const { account } = await stack.createAccount();
    const held = () => meter.values('recoup_network_rule_holds', { brand: 'visa' }).length;
    const sent = () => meter.values('recoup_gateway_requests').length;
    const before = { held: held(), sent: sent() };
    const result = await activities().attemptCharge(
      // A Visa "never retry" code.
      attemptOf(
        account.id,
        { gateway: 'test', token: 'tok_visa', role: 'primary' },
        { fromCode: 'lost_card' },
      ),
    );
    expect(result).toMatchObject({ kind: 'not_allowed', retryAt: null });
    expect(held()).toBe(before.held + 1);
    expect(sent()).toBe(before.sent);
  });

  it('counts no gateway request for an amount the gateway cannot express: declined invalid_amount, nothing sent', async () => {
    // Stripe charges Malagasy ariary in whole units: Ar 1,000.50 cannot be sent. Nothing listens at its API.
    const { account } = await stack.createAccount({}, [
      {
        name: 'stripe',
        kind: 'stripe',
        test: false,
        credentials: { secretKey: 'sk_test_neverreached', apiBase: 'http://127.0.0.1:9' },
      },
    ]);
    const requests = () => meter.values('recoup_gateway_requests', { gateway_kind: 'stripe' }).length;
    const timings = () =>
      meter.values('recoup_gateway_request_duration_seconds', { gateway_kind: 'stripe' }).length;
    const before = { requests: requests(), timings: timings() };
    const result = await activities().attemptCharge(
      attemptOf(
        account.id,
        { gateway: 'stripe', token: 'pm_card_visa', role: 'primary' },
        { amount: 100050, currency: 'MGA' },
      ),
    );
    expect(result).toMatchObject({ kind: 'declined', code: 'invalid_amount' });
    expect({ requests: requests(), timings: timings() }).toEqual(before);
  });
});
