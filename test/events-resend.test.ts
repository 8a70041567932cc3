import { randomBytes, randomUUID } from 'node:crypto';
import { WorkflowNotFoundError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventName } from '../domain/events.js';
import { webhookMaxAttempts, webhookWorkflowId } from '../domain/webhooks.js';
import type { DeliveryAttempt } from '../store/events.js';
import { inOneMinuteWindow } from './support/minute.js';
import { cliEnvOf, runCli } from './support/cli.js';
import { storeEvent } from './support/events.js';
import { poll } from './support/poll.js';
import { sampleEvent } from './support/sample-events.js';
import { call, startStack, unreachableWebhookUrl, type Stack } from './support/stack.js';
import { startReceiver, type Receiver } from './support/webhook-receiver.js';

interface Batch {
  resent: Array<{ eventId: string; deliveryId: string }>;
  skipped: Array<{ eventId: string; reason: string }>;
  last: string | null;
  hasMore: boolean;
}

let stack: Stack;
let receiver: Receiver;
const masterKey = randomBytes(32);

beforeAll(async () => {
  stack = await startStack({ masterKey });
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await stack.close();
});

async function merchant(settings: Record<string, unknown> = {}) {
  const created = await stack.createAccount({ webhookUrl: receiver.url, ...settings });
  return { id: created.account.id, key: created.apiKey, created };
}

const resendAll = (key: string, body: Record<string, unknown> = {}) =>
  call<Batch>(stack.baseUrl, 'POST', '/api/events/resend', { key, body });
const recoup = (...args: string[]) => runCli(['webhooks', ...args], cliEnvOf(stack, masterKey));

/** The attempts of an initial delivery that ended so: all eight refused, or one acknowledged. */
function endedAttempts(status: 'failed' | 'delivered', startedAt: Date): DeliveryAttempt[] {
  const statusCodes = status === 'failed' ? Array<number>(webhookMaxAttempts).fill(503) : [200];
  return statusCodes.map((statusCode, i) => ({
    attempt: i + 1,
    at: new Date(startedAt.getTime() + i * 1_000),
    statusCode,
    error: null,
    latencyMs: 5,
  }));
}

/**
 * Events of the account as the audit log holds them once their first delivery ended (failed: every attempt
 * of the schedule refused; delivered: acknowledged), one a minute from an hour ago in the order given.
 */
async function deadLetters(accountId: string, names: EventName[], status: 'failed' | 'delivered' = 'failed') {
  const start = Date.now() - 3_600_000;
  const eventIds: string[] = [];
  for (const [i, name] of names.entries()) {
    const createdAt = new Date(start + i * 60_000);
    const eventId = await storeEvent(stack.stores.events, accountId, {
      type: name,
      createdAt,
      status,
      deliveries: [
        { deliveryId: 'initial', startedAt: createdAt, attempts: endedAttempts(status, createdAt) },
      ],
    });
    eventIds.push(eventId);
  }
  return eventIds;
}

/** The requests the receiver got for an event. */
const postsOf = (eventId: string) =>
  receiver.received.filter((r) => r.headers['x-service-event-id'] === eventId);

/** Waits until each event has been posted `times` times. */
const postedEach = (eventIds: string[], times: number) =>
  poll(
    () => eventIds.map((id) => postsOf(id).length),
    (counts) => counts.every((n) => n >= times),
    { timeoutMs: 30_000 },
  );

describe('POST /api/events/resend', () => {
  it('sends the account’s failed events again, oldest first, a batch at a time, and nothing else', async () => {
    const { id, key } = await merchant();
    const failed = await deadLetters(id, ['recovery.success', 'card.updated', 'recovery.blocked']);
    const [testEvent] = await deadLetters(id, ['webhook.test']);
    const other = await merchant();
    const [theirs] = await deadLetters(other.id, ['recovery.success']);

    const first = await resendAll(key, { limit: 2 });
    expect(first.status).toBe(202);
    expect(first.body).toEqual({
      resent: failed.slice(0, 2).map((eventId) => ({ eventId, deliveryId: 'resend-1' })),
      skipped: [],
      last: failed[1],
      hasMore: true,
    });
    const second = await resendAll(key, { limit: 2, after: first.body.last });
    expect(second.body).toEqual({
      resent: [{ eventId: failed[2], deliveryId: 'resend-1' }],
      skipped: [],
      last: failed[2],
      hasMore: false,
    });

    await postedEach(failed, 1);
    const delivered = await poll(
      () => Promise.all(failed.map((e) => stack.stores.events.get(e))),
      (records) => records.every((r) => r?.deliveryStatus === 'delivered'),
    );
    for (const record of delivered) {
      expect(record?.deliveries.map((d) => [d.deliveryId, d.attempts.map((a) => a.statusCode)])).toEqual([
        ['initial', Array<number>(webhookMaxAttempts).fill(503)],
        ['resend-1', [200]],
      ]);
      // The bytes recorded when the event was, as on every delivery.
      expect(postsOf(record?._id ?? '')[0]?.raw.toString()).toBe(record?.body);
    }
    // A test event is a check, not something to catch up on; another account's events are its own.
    expect((await stack.stores.events.get(testEvent ?? ''))?.deliveryStatus).toBe('failed');
    expect((await stack.stores.events.get(theirs ?? ''))?.deliveryStatus).toBe('failed');
    expect([...postsOf(testEvent ?? ''), ...postsOf(theirs ?? '')]).toEqual([]);

    // Those failed no more: asking again finds nothing.
    expect((await resendAll(key)).body).toEqual({ resent: [], skipped: [], last: null, hasMore: false });
  });

  it('selects by status, kind and creation time; delivered events can be replayed', async () => {
    const { id, key } = await merchant();
    const [success, updated] = await deadLetters(id, ['recovery.success', 'card.updated'], 'delivered');
    const created = async (eventId: string | undefined) =>
      (await stack.stores.events.get(eventId ?? ''))?.createdAt.toISOString();

    expect((await resendAll(key)).body.resent).toEqual([]); // by default only failed ones
    // From the first event's creation to the second's: the second, not under way, is left out by `to`.
    const window = { status: 'delivered', from: await created(success), to: await created(updated) };
    const byTime = await resendAll(key, window);
    expect(byTime.body).toEqual({
      resent: [{ eventId: success, deliveryId: 'resend-1' }],
      skipped: [],
      last: success,
      hasMore: false,
    });
    const byType = await resendAll(key, { status: 'delivered', type: 'card.updated' });
    expect(byType.body).toEqual({
      resent: [{ eventId: updated, deliveryId: 'resend-1' }],
      skipped: [],
      last: updated,
      hasMore: false,
    });
    await postedEach([success ?? '', updated ?? ''], 1);
  });

  it('skips an event whose delivery is under way: never two deliveries of one event at once', async () => {
    const { id, key } = await merchant({ webhookUrl: unreachableWebhookUrl });
    const [event] = await deadLetters(id, ['card.updated'], 'delivered');
    const replay = { status: 'delivered' };
    const first = await resendAll(key, replay);
    expect(first.body.resent).toEqual([{ eventId: event, deliveryId: 'resend-1' }]);
    // Its replay fails against an unreachable endpoint and goes on with its schedule; the event stays
    // delivered (it was acknowledged once), so a second replay selects it again.
    const second = await resendAll(key, replay);
    expect(second.body).toMatchObject({
      resent: [],
      skipped: [{ eventId: event, reason: expect.stringContaining('under way') }],
      hasMore: false,
    });
    expect((await stack.stores.events.get(event ?? ''))?.deliveries).toHaveLength(2);
    await stack.temporal.workflow.getHandle(webhookWorkflowId(event ?? '', 1)).terminate('test over');
  });

  it('leaves out what the settings keep from being sent, and refuses it when asked for by name', async () => {
    const quiet = await merchant({ dunningEnabled: false });
    const failedEvent = (await stack.events.publish(quiet.id, sampleEvent('recovery.failed'))).eventId;
    expect((await stack.stores.events.get(failedEvent))?.deliveryStatus).toBe('suppressed');
    const all = await resendAll(quiet.key, { status: 'suppressed' });
    expect(all.body.resent).toEqual([]);
    const named = await resendAll(quiet.key, { status: 'suppressed', type: 'recovery.failed' });
    expect(named.status).toBe(409);
    expect(named.body).toMatchObject({
      error: 'Event not sent',
      message: expect.stringContaining('dunning'),
    });
    expect((await stack.stores.events.get(failedEvent))?.deliveries).toEqual([]);

    // Settings refuse http:// URLs; one written straight to the store stands for an old account's.
    const old = await merchant();
    await deadLetters(old.id, ['recovery.success']);
    await stack.stores.accounts.updateSettings(old.id, {
      ...old.created.account.settings,
      webhookUrl: 'http://127.0.0.1:9/hooks',
    });
    const refused = await resendAll(old.key);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({
      error: 'Event not sent',
      message: expect.stringContaining('https'),
    });
  });

  it.each([
    [{ status: 'pending' }, 'status'],
    [{ limit: 0 }, 'limit'],
    [{ limit: 101 }, 'limit'],
    [{ type: 'recovery.maybe' }, 'type'],
    [{ from: 'yesterday' }, 'from'],
    [{ from: '2026-11-02T00:00:00Z', to: '2026-11-01T00:00:00Z' }, 'to'],
    [{ after: 'not an id' }, 'after'],
    [{ since: '2026-01-01T00:00:00Z' }, 'since'],
  ])('%j is a 400 naming %s, and sends nothing', async (body, field) => {
    const { id, key } = await merchant();
    const [event] = await deadLetters(id, ['recovery.success']);
    const res = await resendAll(key, body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: expect.any(String), details: { [field]: expect.any(Array) } });
    expect((await stack.stores.events.get(event ?? ''))?.deliveries).toHaveLength(1);
  });

  it('sends 100 events a batch when no limit is given, the rest in the next', async () => {
    const { id, key } = await merchant();
    const failed = await deadLetters(id, Array<EventName>(101).fill('card.updated'));
    const first = await resendAll(key);
    expect(first.status).toBe(202);
    expect(first.body.resent.map((r) => r.eventId)).toEqual(failed.slice(0, 100));
    expect(first.body).toMatchObject({ skipped: [], last: failed[99], hasMore: true });
    const second = await resendAll(key, { after: first.body.last });
    expect(second.body).toEqual({
      resent: [{ eventId: failed[100], deliveryId: 'resend-1' }],
      skipped: [],
      last: failed[100],
      hasMore: false,
    });
    await postedEach(failed, 1);
  });

  it('an after naming no event at all is a 400, and sends nothing', async () => {
    const { id, key } = await merchant();
    const [event] = await deadLetters(id, ['recovery.success']);
    const res = await resendAll(key, { after: randomUUID() });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ details: { after: [expect.any(String)] } });
    expect((await stack.stores.events.get(event ?? ''))?.deliveries.map((d) => d.deliveryId)).toEqual([
      'initial',
    ]);
  });

  it('carries on only after an event of the account, and needs the secret key', async () => {
    const mine = await merchant();
    const theirs = await merchant();
    const [their] = await deadLetters(theirs.id, ['recovery.success']);
    const res = await resendAll(mine.key, { after: their });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ details: { after: [expect.any(String)] } });
    expect((await call(stack.baseUrl, 'POST', '/api/events/resend', { body: {} })).status).toBe(401);
    expect((await resendAll(mine.created.publishableKey)).status).toBe(401);
  });

  it('allows 10 batches a minute per key', async () => {
    const { key } = await merchant();
    await inOneMinuteWindow();
    const statuses: number[] = [];
    for (let i = 0; i < 11; i += 1) statuses.push((await resendAll(key)).status);
    expect(statuses).toEqual([...Array<number>(10).fill(202), 429]);
  });
});

describe('a resend after a delivery that never ran or was cut short', () => {
  it('starts a recorded delivery whose workflow never started (a process died in between)', async () => {
    const { id, key } = await merchant();
    const [eventId] = await deadLetters(id, ['card.updated']);
    // As publish records it before handing it to Temporal, which a dying process never did.
    const recorded = await stack.stores.events.get(eventId ?? '');
    if (!recorded) throw new Error('the event was not recorded');
    await stack.stores.events.remove([recorded._id]);
    await stack.stores.events.insert({
      ...recorded,
      deliveryStatus: 'pending',
      deliveries: [{ deliveryId: 'initial', startedAt: new Date(), attempts: [] }],
    });
    const res = await call(stack.baseUrl, 'POST', `/api/events/${eventId}/resend`, { key });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ eventId, deliveryId: 'initial' });
    await postedEach([eventId ?? ''], 1);
    const record = await poll(
      () => stack.stores.events.get(eventId ?? ''),
      (r) => r?.deliveryStatus === 'delivered',
    );
    expect(record?.deliveries.map((d) => d.deliveryId)).toEqual(['initial']);
  });

  it('starts a new delivery when a delivery with attempts is gone from Temporal (its history expired)', async () => {
    const { id, key } = await merchant();
    const [eventId] = await deadLetters(id, ['card.updated']);
    // Pending on a delivery that made its attempts, whose workflow Temporal no longer holds.
    await stack.stores.events.setStatus(eventId ?? '', 'pending');
    const res = await call(stack.baseUrl, 'POST', `/api/events/${eventId}/resend`, { key });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ eventId, deliveryId: 'resend-1' });
    await postedEach([eventId ?? ''], 1);
  });

  it('a republish while a resend runs starts nothing: the long-gone first delivery never runs again', async () => {
    const { id, key } = await merchant();
    // Its eight attempts made, and Temporal's history of them expired (these never ran on this server).
    const [eventId = ''] = await deadLetters(id, ['card.updated']);
    const res = await call(stack.baseUrl, 'POST', `/api/events/${eventId}/resend`, { key });
    expect(res.body).toEqual({ eventId, deliveryId: 'resend-1' });
    // What a daily sweep or a retried activity does with an event it published; here while the resend runs.
    expect(await stack.events.republish(eventId)).toEqual({ eventId, deliveryStatus: 'pending' });
    const record = await poll(
      () => stack.stores.events.get(eventId),
      (r) => r?.deliveryStatus === 'delivered',
    );
    await expect(
      stack.temporal.workflow.getHandle(webhookWorkflowId(eventId)).describe(),
    ).rejects.toBeInstanceOf(WorkflowNotFoundError);
    expect(postsOf(eventId).map((r) => r.headers['x-service-delivery-attempt'])).toEqual(['1']);
    expect(record?.deliveries.map((d) => [d.deliveryId, d.attempts.length])).toEqual([
      ['initial', webhookMaxAttempts],
      ['resend-1', 1],
    ]);
    // Once the resend ended, republishing still starts nothing.
    expect(await stack.events.republish(eventId)).toEqual({ eventId, deliveryStatus: 'delivered' });
    await expect(
      stack.temporal.workflow.getHandle(webhookWorkflowId(eventId)).describe(),
    ).rejects.toBeInstanceOf(WorkflowNotFoundError);
  });

  it('starts a new delivery of an event whose delivery was terminated by hand', async () => {
    const { id, key } = await merchant({ webhookUrl: unreachableWebhookUrl });
    const { eventId } = await stack.events.publish(id, sampleEvent('recovery.success'));
    // Terminated between its first attempt (recorded) and its second, 2 s on: no attempt of it is being
    // recorded while the resend adds its delivery (FerretDB's updates of one document are not atomic).
    await poll(
      () => stack.stores.events.get(eventId),
      (record) => (record?.deliveries[0]?.attempts.length ?? 0) >= 1,
    );
    const busy = await call(stack.baseUrl, 'POST', `/api/events/${eventId}/resend`, { key });
    expect(busy.status).toBe(409);
    expect(busy.body).toMatchObject({ error: 'Delivery under way' });
    await stack.temporal.workflow.getHandle(webhookWorkflowId(eventId)).terminate('operator');
    const res = await call(stack.baseUrl, 'POST', `/api/events/${eventId}/resend`, { key });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ eventId, deliveryId: 'resend-1' });
    const record = await stack.stores.events.get(eventId);
    expect(record?.deliveryStatus).toBe('pending');
    expect(record?.deliveries.map((d) => d.deliveryId)).toEqual(['initial', 'resend-1']);
    await stack.temporal.workflow.getHandle(webhookWorkflowId(eventId, 1)).terminate('test over');
  });
});

describe('recoup webhooks resend-all', () => {
  it('resends every selected event, batch after batch, and says what it did', async () => {
    const { id } = await merchant();
    const failed = await deadLetters(id, Array<EventName>(101).fill('card.updated'));
    const run = await recoup('resend-all', id, '--json');
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout) as Omit<Batch, 'last' | 'hasMore'>;
    expect(out.resent.map((r) => r.eventId)).toEqual(failed);
    expect(out.skipped).toEqual([]);
    await postedEach(failed, 1);

    const again = await recoup('resend-all', id);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('Resent 0 failed event(s)');
  });

  it('exits 2 on a bad selection and 1 for an unknown account or one that cannot be sent to', async () => {
    const { id } = await merchant({ dunningEnabled: false });
    const bad = await recoup('resend-all', id, '--status', 'pending');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('status');
    expect(
      (await recoup('resend-all', id, '--from', '2026-11-02T00:00:00Z', '--to', '2026-11-01T00:00:00Z')).code,
    ).toBe(2);
    const refused = await recoup('resend-all', id, '--type', 'recovery.failed');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('dunning');
    expect((await recoup('resend-all', 'acct_unknown')).code).toBe(1);
  });
});
