import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhookSignature } from '../runtime/webhook-signature.js';
import { createEventStore, unreadableField } from '../store/events.js';
import { storeEvent } from './support/events.js';
import { inOneMinuteWindow } from './support/minute.js';
import { cliEnvOf, runCli } from './support/cli.js';
import { poll } from './support/poll.js';
import { sampleEvent } from './support/sample-events.js';
import { call, startStack, unreachableWebhookUrl, type Stack } from './support/stack.js';
import { startReceiver, type Receiver } from './support/webhook-receiver.js';

interface EventView {
  eventId: string;
  event: string;
  createdAt: string;
  deliveryStatus: string;
  payload: Record<string, unknown>;
  attempts: Array<{ deliveryId: string; attempt: number; statusCode: number | null; error: string | null }>;
}
interface Page {
  data: EventView[];
  hasMore: boolean;
}

let stack: Stack;
let receiver: Receiver;
let refusing: Receiver;
// The real `recoup` works on this file's database: it needs its master key.
const masterKey = randomBytes(32);

beforeAll(async () => {
  stack = await startStack({ masterKey });
  receiver = await startReceiver();
  refusing = await startReceiver({ answer: () => ({ status: 401 }) });
});
afterAll(async () => {
  await Promise.all([receiver.close(), refusing.close()]);
  await stack.close();
});

async function merchant(settings: Record<string, unknown> = {}) {
  const created = await stack.createAccount({ webhookUrl: receiver.url, ...settings });
  return { id: created.account.id, key: created.apiKey, created };
}

const list = (key: string, query = '') => call<Page>(stack.baseUrl, 'GET', `/api/events${query}`, { key });
const one = (key: string, eventId: string) =>
  call<EventView>(stack.baseUrl, 'GET', `/api/events/${eventId}`, { key });
const resend = (key: string, eventId: string) =>
  call(stack.baseUrl, 'POST', `/api/events/${eventId}/resend`, { key });
const sendTest = (key?: string) =>
  call<EventView>(stack.baseUrl, 'POST', '/api/events/test', key === undefined ? {} : { key });
const recoup = (env: Record<string, string>, ...args: string[]) =>
  runCli(['webhooks', ...args], { ...cliEnvOf(stack, masterKey), ...env });

/** The event once its delivery has ended (or as it stands after 15 s). */
const settled = (key: string, eventId: string) =>
  poll(
    async () => (await one(key, eventId)).body,
    (e) => e.deliveryStatus !== 'pending',
  );

describe('GET /api/events', () => {
  it('pages through the account’s events newest first, each exactly once', async () => {
    const { id, key } = await merchant();
    const published: string[] = [];
    for (const name of [
      'recovery.success',
      'card.updated',
      'recovery.blocked',
      'card.expiring_soon',
    ] as const)
      published.push((await stack.events.publish(id, sampleEvent(name))).eventId);
    published.push((await stack.events.publish(id, sampleEvent('recovery.success'))).eventId);

    const seen: string[] = [];
    let before = '';
    for (const expected of [2, 2, 1]) {
      const page = await list(key, `?limit=2${before ? `&before=${before}` : ''}`);
      expect(page.status).toBe(200);
      expect(page.body.data).toHaveLength(expected);
      expect(page.body.hasMore).toBe(expected === 2);
      seen.push(...page.body.data.map((e) => e.eventId));
      before = page.body.data.at(-1)?.eventId ?? '';
    }
    expect(seen).toEqual([...published].reverse());
    const times = (await list(key, '?limit=100')).body.data.map((e) => Date.parse(e.createdAt));
    expect(times).toEqual([...times].sort((a, b) => b - a));
  });

  it('filters by event type and by delivery status, and shows the payload as sent with every attempt', async () => {
    const { id, key } = await merchant({ dunningEnabled: false });
    const success = await stack.events.publish(id, sampleEvent('recovery.success'));
    const failed = await stack.events.publish(id, sampleEvent('recovery.failed')); // suppressed: dunning off
    expect(failed.deliveryStatus).toBe('suppressed');
    const delivered = await settled(key, success.eventId);
    expect(delivered.deliveryStatus).toBe('delivered');
    expect(delivered.attempts).toEqual([
      expect.objectContaining({ deliveryId: 'initial', attempt: 1, statusCode: 200, error: null }),
    ]);
    const sent = receiver.received.find((r) => r.headers['x-service-event-id'] === success.eventId);
    expect(delivered.payload).toEqual(JSON.parse(sent?.raw.toString() ?? '{}'));

    const byType = await list(key, '?type=recovery.failed');
    expect(byType.body.data.map((e) => [e.eventId, e.event, e.deliveryStatus])).toEqual([
      [failed.eventId, 'recovery.failed', 'suppressed'],
    ]);
    const byStatus = await list(key, '?status=delivered');
    expect(byStatus.body.data.map((e) => e.eventId)).toEqual([success.eventId]);
  });

  it('lists an event sealed under a master key since lost with the others, its link fields saying so', async () => {
    const { id, key } = await merchant();
    const before = await stack.events.publish(id, sampleEvent('recovery.success'));
    const lostKey = createEventStore(stack.stores.db, randomBytes(32));
    const unreadable = await storeEvent(lostKey, id, {
      type: 'recovery.skipped_high_risk',
      status: 'failed',
    });
    const after = await stack.events.publish(id, sampleEvent('recovery.success'));

    const page = await list(key);
    expect(page.status).toBe(200);
    expect(page.body.data.map((e) => e.eventId)).toEqual([after.eventId, unreadable, before.eventId]);
    expect(page.body.data[1]?.payload).toMatchObject({
      event: 'recovery.skipped_high_risk',
      cardUpdateUrl: unreadableField,
    });
    expect((await list(key, '?status=failed')).body.data.map((e) => e.eventId)).toEqual([unreadable]);

    // Shown on its own as in the list; it cannot be sent again, alone or in a batch (skipped, saying why).
    expect(await one(key, unreadable)).toMatchObject({
      status: 200,
      body: { eventId: unreadable, payload: { cardUpdateUrl: unreadableField } },
    });
    expect(await resend(key, unreadable)).toMatchObject({
      status: 409,
      body: { message: expect.stringContaining('master key this deployment no longer has') },
    });
    const batch = await call(stack.baseUrl, 'POST', '/api/events/resend', {
      key,
      body: { status: 'failed' },
    });
    expect(batch).toMatchObject({
      status: 202,
      body: {
        resent: [],
        skipped: [{ eventId: unreadable, reason: expect.stringContaining('no longer has') }],
      },
    });
  });

  it('never shows another account’s events, nor pages from one of them', async () => {
    const mine = await merchant();
    const theirs = await merchant();
    const their = await stack.events.publish(theirs.id, sampleEvent('recovery.success'));
    expect((await list(mine.key)).body.data).toEqual([]);
    expect((await one(mine.key, their.eventId)).status).toBe(404);
    expect((await resend(mine.key, their.eventId)).status).toBe(404);
    const page = await list(mine.key, `?before=${their.eventId}`);
    expect(page.status).toBe(400);
    expect(page.body).toMatchObject({ details: { before: [expect.any(String)] } });
  });

  it('answers 20 events a page when no limit is given', async () => {
    const { id, key } = await merchant();
    const start = Date.now() - 3_600_000;
    const stored: string[] = [];
    for (let i = 0; i < 21; i += 1)
      stored.push(
        await storeEvent(stack.stores.events, id, {
          createdAt: new Date(start + i * 60_000),
          status: 'delivered',
        }),
      );
    const page = await list(key);
    expect(page.status).toBe(200);
    expect(page.body.data.map((e) => e.eventId)).toEqual(stored.slice(1).reverse());
    expect(page.body.hasMore).toBe(true);
  });

  it('a before naming no event at all is a 400, not the first page', async () => {
    const { id, key } = await merchant();
    await stack.events.publish(id, sampleEvent('recovery.success'));
    const page = await list(key, `?before=${randomUUID()}`);
    expect(page.status).toBe(400);
    expect(page.body).toMatchObject({ details: { before: [expect.any(String)] } });
  });

  it.each([
    ['?limit=0', 'limit'],
    ['?limit=101', 'limit'],
    ['?limit=ten', 'limit'],
    ['?type=recovery.maybe', 'type'],
    ['?status=lost', 'status'],
    ['?before=not%20an%20id', 'before'],
    ['?since=2026-01-01', 'since'],
  ])('%s is a 400 naming %s', async (query, field) => {
    const { key } = await merchant();
    const res = await list(key, query);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: expect.any(String), details: { [field]: expect.any(Array) } });
  });

  it('needs the secret key', async () => {
    const { created } = await merchant();
    expect((await call(stack.baseUrl, 'GET', '/api/events')).status).toBe(401);
    expect((await list(created.publishableKey)).status).toBe(401);
  });
});

describe('POST /api/events/:eventId/resend', () => {
  it('sends a delivered event again: same eventId and body, signed now, recorded as resend-1', async () => {
    const { id, key, created } = await merchant();
    const { eventId } = await stack.events.publish(id, sampleEvent('card.updated'));
    expect((await settled(key, eventId)).deliveryStatus).toBe('delivered');

    const res = await resend(key, eventId);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ eventId, deliveryId: 'resend-1' });
    const requests = await poll(
      () => receiver.received.filter((r) => r.headers['x-service-event-id'] === eventId),
      (found) => found.length === 2,
    );
    expect(requests).toHaveLength(2);
    expect(requests[1]?.raw.equals(requests[0]?.raw ?? Buffer.alloc(0))).toBe(true);
    const signature = requests[1]?.headers['x-service-signature'] as string;
    expect(
      verifyWebhookSignature(requests[1]?.raw ?? Buffer.alloc(0), signature, created.webhookSigningSecret),
    ).toBe(true);
    const after = await poll(
      async () => (await one(key, eventId)).body,
      (e) => e.attempts.length === 2 && e.deliveryStatus === 'delivered',
    );
    expect(after.attempts.map((a) => [a.deliveryId, a.statusCode])).toEqual([
      ['initial', 200],
      ['resend-1', 200],
    ]);
  });

  it('refuses (409) while a delivery is under way, and for an event that is never sent', async () => {
    const pending = await stack.createAccount({ webhookUrl: unreachableWebhookUrl });
    const { eventId } = await stack.events.publish(pending.account.id, sampleEvent('recovery.success'));
    const busy = await resend(pending.apiKey, eventId);
    expect(busy.status).toBe(409);
    expect(busy.body).toMatchObject({ error: 'Delivery under way', message: expect.any(String) });

    const quiet = await merchant({ dunningEnabled: false });
    const suppressed = await stack.events.publish(quiet.id, sampleEvent('recovery.failed'));
    const refused = await resend(quiet.key, suppressed.eventId);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({
      error: 'Event not sent',
      message: expect.stringContaining('dunning'),
    });
    expect((await one(quiet.key, suppressed.eventId)).body.deliveryStatus).toBe('suppressed');
  });

  it('takes no body but {}: a field is 400, another content type 415, over 64 KiB 413, and nothing is sent', async () => {
    const { id, key } = await merchant();
    const { eventId } = await stack.events.publish(id, sampleEvent('card.updated'));
    expect((await settled(key, eventId)).deliveryStatus).toBe('delivered');
    const path = `/api/events/${eventId}/resend`;
    const json = { 'Content-Type': 'application/json' };
    for (const [opts, status] of [
      [{ body: { deliveryId: 'x' } }, 400],
      [{ raw: 'resend', headers: { 'Content-Type': 'text/plain' } }, 415],
      [{ raw: JSON.stringify({ pad: 'x'.repeat(70_000) }), headers: json }, 413],
    ] as const) {
      const refused = await call(stack.baseUrl, 'POST', path, { key, ...opts });
      expect(refused.status).toBe(status);
      expect(refused.body.error).toEqual(expect.any(String));
    }
    expect((await one(key, eventId)).body.attempts).toHaveLength(1);
    expect(await call(stack.baseUrl, 'POST', path, { key, body: {} })).toMatchObject({ status: 202 });
    expect(
      (await call(stack.baseUrl, 'POST', '/api/events/test', { key, body: { url: 'https://x.test' } })).body,
    ).toMatchObject({ details: { url: expect.any(Array) } });
  });

  // The id is a path segment a merchant copies, not input it composes: one that names nothing is a 404.
  it('404 for an id that names no event of the account, of any length or form', async () => {
    const { key } = await merchant();
    for (const id of ['evt_unknown', 'a%20b', '%E2%9C%93', 'x'.repeat(129), 'x'.repeat(4000)]) {
      expect(await one(key, id), id.slice(0, 20)).toMatchObject({
        status: 404,
        body: { error: 'Event not found' },
      });
      expect(await resend(key, id), id.slice(0, 20)).toMatchObject({
        status: 404,
        body: { error: 'Event not found' },
      });
    }
  });
});

describe('POST /api/events/test and recoup webhooks test', () => {
  it('sends a signed webhook.test event and answers with its first attempt', async () => {
    const { id, key, created } = await merchant();
    const res = await sendTest(key);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      event: 'webhook.test',
      deliveryStatus: 'delivered',
      payload: { event: 'webhook.test', clientId: id, eventId: res.body.eventId },
      attempts: [{ deliveryId: 'initial', attempt: 1, statusCode: 200, error: null }],
    });
    const [request] = receiver.received.filter((r) => r.headers['x-service-event-id'] === res.body.eventId);
    const signature = request?.headers['x-service-signature'] as string;
    expect(
      verifyWebhookSignature(request?.raw ?? Buffer.alloc(0), signature, created.webhookSigningSecret),
    ).toBe(true);
    // It is one of the account's events like any other.
    expect((await list(key, '?type=webhook.test')).body.data.map((e) => e.eventId)).toEqual([
      res.body.eventId,
    ]);
  });

  it('shows what a refusing endpoint answered; the event stays on the retry schedule', async () => {
    const { key } = await merchant({ webhookUrl: refusing.url });
    const res = await sendTest(key);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      deliveryStatus: 'pending',
      attempts: [{ attempt: 1, statusCode: 401 }],
    });
  });

  it('sends nothing to an account without an https URL, and says so at once', async () => {
    // Settings refuse http:// URLs; one written straight to the store stands for an old account's.
    const { id, key, created } = await merchant();
    await stack.stores.accounts.updateSettings(id, {
      ...created.account.settings,
      webhookUrl: 'http://127.0.0.1:9/hooks',
    });
    const res = await sendTest(key);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ deliveryStatus: 'undeliverable', attempts: [] });
    const cli = await recoup({}, 'test', id);
    expect(cli.code).toBe(1);
    expect(cli.stderr).toContain('no https:// webhook URL');
  });

  it('allows 10 a minute per key, and needs the secret key', async () => {
    const { key, created } = await merchant();
    await inOneMinuteWindow();
    const statuses: number[] = [];
    for (let i = 0; i < 11; i += 1) statuses.push((await sendTest(key)).status);
    expect(statuses).toEqual([...Array<number>(10).fill(200), 429]);
    expect((await sendTest()).status).toBe(401);
    expect((await sendTest(created.publishableKey)).status).toBe(401);
  });

  it('the CLI prints the event and exits 0 when acknowledged, 1 when refused or when no worker takes it', async () => {
    const ok = await merchant();
    const delivered = await recoup({}, 'test', ok.id, '--json');
    expect(delivered.code).toBe(0);
    expect(JSON.parse(delivered.stdout)).toMatchObject({ type: 'webhook.test', status: 'delivered' });

    const bad = await merchant({ webhookUrl: refusing.url });
    const refused = await recoup({}, 'test', bad.id);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('webhook.test');
    expect(refused.stderr).toContain('did not acknowledge');

    // On task queues no worker polls, nothing is attempted within the wait.
    const idle = await recoup(
      { TEMPORAL_TASK_QUEUE: `idle-${randomBytes(4).toString('hex')}` },
      'test',
      ok.id,
    );
    expect(idle.code).toBe(1);
    expect(idle.stderr).toContain('no worker attempted');

    expect((await recoup({}, 'test', 'acct_unknown')).code).toBe(1);
  });
});
