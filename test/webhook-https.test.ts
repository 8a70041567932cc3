import { randomBytes } from 'node:crypto';
import { WorkflowNotFoundError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { webhooksCommand } from '../cli/commands/webhooks.js';
import type { CliContext } from '../cli/context.js';
import { NotFoundError, UsageError } from '../cli/errors.js';
import { eventNames, StoredEventSchema, type EventPayload } from '../domain/events.js';
import { Settings } from '../domain/settings.js';
import { webhookWorkflowId } from '../domain/webhooks.js';
import { generateKey } from '../runtime/crypto.js';
import { verifyWebhookSignature } from '../runtime/webhook-signature.js';
import { searchAttributeKeys } from '../domain/search-attributes.js';
import { ResendRefusedError } from '../services/events.js';
import { sampleEvent, sampleEvents } from './support/sample-events.js';
import { cliContextOf, runCli } from './support/cli.js';
import { startStack, type Stack } from './support/stack.js';
import { startReceiver, type ReceivedRequest, type Receiver } from './support/webhook-receiver.js';

let stack: Stack;
const receivers: Receiver[] = [];
// A named database and master key, so the real `recoup` executable can work on the same data.
const dbName = `wh_${randomBytes(4).toString('hex')}`;
const masterKey = randomBytes(32);

beforeAll(async () => {
  stack = await startStack({ dbName, masterKey });
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await stack.close();
});

/** A merchant: an HTTPS receiver (unless told otherwise) and an account whose webhooks go to it. */
async function merchant(opts: { dunningEnabled?: boolean; protocol?: 'http' | 'https' } = {}) {
  const receiver = await startReceiver({ protocol: opts.protocol ?? 'https' });
  receivers.push(receiver);
  const dunningEnabled = opts.dunningEnabled ?? true;
  if (opts.protocol !== 'http') {
    const created = await stack.createAccount({ webhookUrl: receiver.url, dunningEnabled });
    return { receiver, accountId: created.account.id, secret: created.webhookSigningSecret };
  }
  // Account settings refuse http:// URLs; writing one straight to the store proves the sender refuses too.
  const created = await stack.createAccount({ dunningEnabled });
  expect(Settings.safeParse({ webhookUrl: receiver.url }).success).toBe(false);
  await stack.stores.accounts.updateSettings(created.account.id, {
    ...created.account.settings,
    webhookUrl: receiver.url,
  });
  return { receiver, accountId: created.account.id, secret: created.webhookSigningSecret };
}

/** Waits for a delivery workflow (first delivery, or the n-th resend) to finish. */
function settled(eventId: string, resend?: number) {
  return stack.temporal.workflow.getHandle(webhookWorkflowId(eventId, resend)).result();
}

function requestsFor(receiver: Receiver, eventId: string): ReceivedRequest[] {
  return receiver.received.filter((r) => r.headers['x-service-event-id'] === eventId);
}

const signatureOf = (req: ReceivedRequest) => req.headers['x-service-signature'] as string;

describe('every event over real HTTPS', () => {
  let m: Awaited<ReturnType<typeof merchant>>;
  const published: Array<{ eventId: string; sample: EventPayload }> = [];

  beforeAll(async () => {
    m = await merchant();
    for (const sample of sampleEvents) {
      const { eventId, deliveryStatus } = await stack.events.publish(m.accountId, sample);
      expect(deliveryStatus).toBe('pending');
      published.push({ eventId, sample });
    }
    await Promise.all(published.map(({ eventId }) => settled(eventId)));
  });

  it('each event kind arrives once, signed over the raw bytes, with the spec fields and types', async () => {
    expect(new Set(published.map((p) => p.sample.event))).toEqual(new Set(eventNames));
    for (const { eventId, sample } of published) {
      const [req, ...more] = requestsFor(m.receiver, eventId);
      expect(more).toHaveLength(0);
      expect(req?.method).toBe('POST');
      expect(req?.headers['content-type']).toBe('application/json');
      expect(req?.headers['x-service-delivery-attempt']).toBe('1');
      expect(verifyWebhookSignature(req!.raw, signatureOf(req!), m.secret)).toBe(true);

      const body: unknown = JSON.parse(req!.raw.toString('utf8'));
      expect(StoredEventSchema.safeParse(body).success).toBe(true);
      expect(body).toEqual({ ...sample, eventId, createdAt: expect.any(String) as unknown });
      const record = await stack.stores.events.get(eventId);
      expect(req!.raw.toString('utf8')).toBe(record?.body); // the bytes signed are the bytes stored
      expect(record?.deliveryStatus).toBe('delivered');
      expect(record?.deliveries[0]?.attempts).toMatchObject([{ attempt: 1, statusCode: 200, error: null }]);
    }
  });

  it('a tampered body, a wrong secret or a malformed signature fails verification', () => {
    const req = requestsFor(m.receiver, published[0]!.eventId)[0]!;
    // One digit of the amount changed: still valid JSON, no longer what was signed.
    const tampered = Buffer.from(
      req.raw.toString('utf8').replace(/"amount":(\d)/, (_, d: string) => `"amount":${(Number(d) + 1) % 10}`),
    );
    expect(tampered.equals(req.raw)).toBe(false);
    expect(verifyWebhookSignature(tampered, signatureOf(req), m.secret)).toBe(false);
    const reserialised = JSON.stringify(JSON.parse(req.raw.toString('utf8')), null, 1);
    expect(verifyWebhookSignature(reserialised, signatureOf(req), m.secret)).toBe(false);
    expect(verifyWebhookSignature(req.raw, signatureOf(req), generateKey('signing'))).toBe(false);
    expect(verifyWebhookSignature(req.raw, signatureOf(req).toUpperCase(), m.secret)).toBe(false);
    expect(verifyWebhookSignature(req.raw, signatureOf(req).slice(2), m.secret)).toBe(false);
    expect(verifyWebhookSignature(req.raw, undefined, m.secret)).toBe(false);
    expect(verifyWebhookSignature(req.raw, signatureOf(req), '')).toBe(false);
  });

  it('tags each delivery workflow with the account and event type for the Temporal UI', async () => {
    const { eventId, sample } = published.find((p) => p.sample.event === 'card.updated')!;
    const described = await stack.temporal.workflow.getHandle(webhookWorkflowId(eventId)).describe();
    expect(described.typedSearchAttributes.get(searchAttributeKeys.accountId)).toBe(m.accountId);
    expect(described.typedSearchAttributes.get(searchAttributeKeys.eventType)).toBe(sample.event);
    expect(described.taskQueue).toBe(stack.queues.webhooks);
  });
});

describe('where nothing is sent', () => {
  it('an http:// webhook URL receives nothing; the event is recorded as undeliverable', async () => {
    const m = await merchant({ protocol: 'http' });
    expect(m.receiver.url).toMatch(/^http:\/\//);
    const { eventId, deliveryStatus } = await stack.events.publish(
      m.accountId,
      sampleEvent('recovery.success'),
    );

    expect(deliveryStatus).toBe('undeliverable');
    const handle = stack.temporal.workflow.getHandle(webhookWorkflowId(eventId));
    await expect(handle.describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
    expect((await stack.stores.events.get(eventId))?.deliveries).toEqual([]);
    await expect(stack.events.resend(eventId)).rejects.toBeInstanceOf(ResendRefusedError);
    expect(m.receiver.received).toHaveLength(0);
  });

  it('dunningEnabled false suppresses recovery.failed and nothing else', async () => {
    const m = await merchant({ dunningEnabled: false });
    const outcomes = await Promise.all(sampleEvents.map((e) => stack.events.publish(m.accountId, e)));
    const suppressed = outcomes.filter((o) => o.deliveryStatus === 'suppressed');
    expect(suppressed).toHaveLength(1);
    const failedEvent = await stack.stores.events.get(suppressed[0]!.eventId);
    expect(failedEvent?.type).toBe('recovery.failed');

    const sent = outcomes.filter((o) => o.deliveryStatus === 'pending');
    expect(sent).toHaveLength(sampleEvents.length - 1);
    await Promise.all(sent.map((o) => settled(o.eventId)));
    const received = m.receiver.received.map(
      (r) => (JSON.parse(r.raw.toString('utf8')) as EventPayload).event,
    );
    expect(received).not.toContain('recovery.failed');
    expect(received).toEqual(expect.arrayContaining(['recovery.success', 'recovery.blocked']));
    expect(received).toHaveLength(sampleEvents.length - 1);
    await expect(stack.events.resend(suppressed[0]!.eventId)).rejects.toBeInstanceOf(ResendRefusedError);
  });
});

describe('delivering again', () => {
  it('resend delivers the same eventId and bytes again, freshly signed, as a new delivery', async () => {
    const m = await merchant();
    const { eventId } = await stack.events.publish(m.accountId, sampleEvent('recovery.success'));
    await settled(eventId);

    const resent = await stack.events.resend(eventId);
    expect(resent).toEqual({ eventId, deliveryId: 'resend-1', workflowId: `webhook/${eventId}/resend-1` });
    await settled(eventId, 1);

    const [first, second] = requestsFor(m.receiver, eventId);
    expect(second?.raw.equals(first!.raw)).toBe(true);
    expect(verifyWebhookSignature(second!.raw, signatureOf(second!), m.secret)).toBe(true);
    expect(second?.headers['x-service-delivery-attempt']).toBe('1');
    const record = await stack.stores.events.get(eventId);
    expect(record?.deliveryStatus).toBe('delivered');
    expect(record?.deliveries.map((d) => [d.deliveryId, d.attempts.map((a) => a.statusCode)])).toEqual([
      ['initial', [200]],
      ['resend-1', [200]],
    ]);
  });

  it('publishing an acknowledged eventId again sends nothing more', async () => {
    const m = await merchant();
    const eventId = `evt-${randomBytes(6).toString('hex')}`;
    await stack.events.publish(m.accountId, sampleEvent('recovery.blocked'), { eventId });
    await settled(eventId);
    const again = await stack.events.publish(m.accountId, sampleEvent('recovery.blocked'), { eventId });

    expect(again).toEqual({ eventId, deliveryStatus: 'delivered' });
    expect(requestsFor(m.receiver, eventId)).toHaveLength(1);
  });

  it('an invalid payload is refused before anything is stored', async () => {
    const m = await merchant();
    const bad = { ...sampleEvent('recovery.success'), amount: 19.99 };
    await expect(stack.events.publish(m.accountId, bad)).rejects.toThrow(/amount/);
    expect(await stack.stores.events.list({ accountId: m.accountId })).toEqual([]);
  });
});

describe('recoup webhooks', () => {
  let m: Awaited<ReturnType<typeof merchant>>;
  let delivered: string;
  let lines: string[];
  let ctx: CliContext;

  beforeAll(async () => {
    m = await merchant({ dunningEnabled: false });
    delivered = (await stack.events.publish(m.accountId, sampleEvent('recovery.success'))).eventId;
    await settled(delivered);
    await stack.events.publish(m.accountId, sampleEvent('recovery.failed'));
    lines = [];
    ctx = cliContextOf(stack, lines);
  });

  /** Runs one command and returns what it printed. */
  async function run(...argv: string[]): Promise<string> {
    lines.length = 0;
    await webhooksCommand(argv)(ctx);
    return lines.join('\n');
  }

  it('list shows the audit log newest first, filtered by account and status', async () => {
    const all = JSON.parse(await run('list', '--account', m.accountId, '--json')) as Array<{
      type: string;
      status: string;
    }>;
    expect(all.map((e) => [e.type, e.status])).toEqual([
      ['recovery.failed', 'suppressed'],
      ['recovery.success', 'delivered'],
    ]);
    const text = await run('list', '--account', m.accountId, '--status', 'delivered');
    expect(text).toMatch(/^EVENT ID +CREATED +CLIENT ID +TYPE +STATUS +ATTEMPTS +LAST RESULT\n/);
    expect(text).toContain(delivered);
    expect(text).toContain('200 acknowledged');
    expect(text.split('\n')).toHaveLength(2);
  });

  it('show prints the payload as sent and every attempt', async () => {
    const shown = JSON.parse(await run('show', delivered, '--json')) as Record<string, unknown>;
    expect(shown).toMatchObject({
      eventId: delivered,
      clientId: m.accountId,
      status: 'delivered',
      payload: { ...sampleEvent('recovery.success'), eventId: delivered },
      deliveries: [{ deliveryId: 'initial', attempts: [{ attempt: 1, statusCode: 200, error: null }] }],
    });
    const text = await run('show', delivered);
    expect(text).toContain('"serviceTransactionId"');
    expect(text).toMatch(
      /delivery initial .*\n +# +AT +STATUS +LATENCY +RESULT\n +1 +\S+Z +200 +\d+ ms +200 acknowledged/,
    );
  });

  it('resend delivers the event again and says how to follow it', async () => {
    const out = JSON.parse(await run('resend', delivered, '--json')) as { deliveryId: string };
    expect(out.deliveryId).toBe('resend-1');
    await settled(delivered, 1);
    expect(requestsFor(m.receiver, delivered)).toHaveLength(2);
    expect(await run('show', delivered)).toContain('delivery resend-1');
  });

  it('the recoup executable runs the same commands against the same database and Temporal', async () => {
    const recoup = (...args: string[]) =>
      runCli(args, {
        MONGODB_URI: `${inject('mongoUri')}${dbName}`,
        RECOUP_MASTER_KEY: masterKey.toString('base64'),
        TEMPORAL_ADDRESS: inject('temporalAddress'),
        TEMPORAL_TASK_QUEUE: stack.queues.webhooks.replace(/-webhooks$/, ''),
      });
    const listed = await recoup(
      'webhooks',
      'list',
      '--account',
      m.accountId,
      '--status',
      'delivered',
      '--json',
    );
    expect(listed.code).toBe(0);
    expect((JSON.parse(listed.stdout) as Array<{ eventId: string }>).map((e) => e.eventId)).toEqual([
      delivered,
    ]);

    const before = requestsFor(m.receiver, delivered).length;
    const resent = await recoup('webhooks', 'resend', delivered, '--json');
    expect(resent.code).toBe(0);
    const { deliveryId } = JSON.parse(resent.stdout) as { deliveryId: string };
    await settled(delivered, Number(deliveryId.replace('resend-', '')));
    expect(requestsFor(m.receiver, delivered)).toHaveLength(before + 1);

    const missing = await recoup('webhooks', 'show', 'no-such-event');
    expect(missing).toMatchObject({ code: 1, stdout: '' });
    expect(missing.stderr).toContain('no event with eventId no-such-event');
  });

  it('unknown events and bad flags are reported as such', async () => {
    await expect(run('show', 'no-such-event')).rejects.toBeInstanceOf(NotFoundError);
    await expect(run('resend', 'no-such-event')).rejects.toBeInstanceOf(NotFoundError);
    await expect(run('list', '--status', 'lost')).rejects.toBeInstanceOf(UsageError);
    await expect(run('list', '--limit', '0')).rejects.toBeInstanceOf(UsageError);
    await expect(run('purge')).rejects.toBeInstanceOf(UsageError);
  });
});
