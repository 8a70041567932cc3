import { randomBytes } from 'node:crypto';
import type { CommandSucceededEvent } from 'mongodb';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EventPayloadSchema, eventSchemas, StoredEventSchema, type EventName } from '../domain/events.js';
import {
  deliveryBlock,
  deliveryMayStillRun,
  isHttpsUrl,
  isStranded,
  mayBeUnderWay,
  nextOutboxLookAt,
  outboxLooked,
  outboxTold,
  type DeliveryStatus,
  type OutboxWatch,
} from '../domain/webhooks.js';
import { signWebhook, verifyWebhookSignature } from '../runtime/webhook-signature.js';
import { collections } from '../store/collections.js';
import { createEventStore, type Delivery, type DeliveryAttempt } from '../store/events.js';
import { ensureIndexes } from '../store/indexes.js';
import { storeEvent } from './support/events.js';
import { sampleEvent, sampleEvents } from './support/sample-events.js';
import { scratchDb } from './support/scratch-db.js';

describe('the event catalogue', () => {
  it.each(sampleEvents.map((e) => [e.event, e] as const))('accepts a valid %s', (_, payload) => {
    expect(EventPayloadSchema.safeParse(payload).success).toBe(true);
    const stored = { ...payload, eventId: 'evt_1', createdAt: '2026-03-01T12:00:00.000Z' };
    expect(StoredEventSchema.safeParse(stored).success).toBe(true);
  });

  const success = sampleEvent('recovery.success');
  const expiring = sampleEvent('card.expiring_soon');
  const { expiryMonth: _m, expiryYear: _y, ...noExpiry } = expiring;
  it.each([
    ['a fractional amount', { ...success, amount: 49.99 }, 'amount'],
    ['an amount as a string', { ...success, amount: '4999' }, 'amount'],
    ['a lower-case currency', { ...success, currency: 'usd' }, 'currency'],
    [
      'a missing serviceTransactionId',
      { ...success, serviceTransactionId: undefined },
      'serviceTransactionId',
    ],
    ['a field the spec does not name', { ...success, transactionId: 'x' }, ''],
    ['an unknown strategyUsed', { ...success, strategyUsed: 'magic' }, 'strategyUsed'],
    ['an unknown event', { ...success, event: 'recovery.maybe' }, 'event'],
    ['a card.expiring_soon without expiry', noExpiry, 'expiryMonth'],
    ['a pre-emptive card.expiring_soon without its link', { ...expiring, preemptive: true }, 'cardUpdateUrl'],
    [
      'a churn event whose outcome contradicts its name',
      { ...sampleEvent('churn.flow.paused'), outcome: 'cancelled' },
      'outcome',
    ],
    [
      'customerAuthRequired false',
      { ...sampleEvent('recovery.authentication_required'), customerAuthRequired: false },
      'customerAuthRequired',
    ],
  ])('refuses %s', (_, payload, field) => {
    const parsed = EventPayloadSchema.safeParse(payload);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((i) => i.path.join('.'))).toContain(field);
  });

  it('a received body must carry eventId and createdAt', () => {
    expect(StoredEventSchema.safeParse(success).success).toBe(false);
  });
});

/**
 * The spec's Events table, field by field: each event must carry these (`required`, present in every body,
 * null allowed where the engine documents it) and may carry only these plus `optional` (the spec's own
 * optional fields, and decisions.md's `offer` on churn events).
 */
const churnFields = ['customerId', 'customerEmail', 'subscriptionId', 'outcome', 'timestamp'];
const outcomeFields = ['serviceTransactionId', 'amount', 'currency', 'message', 'strategyUsed'];
const specFields: Partial<Record<EventName, { required: string[]; optional?: string[] }>> = {
  'recovery.success': { required: [...outcomeFields, 'gatewayTransactionToken'], optional: ['trigger'] },
  'recovery.failed': {
    required: [...outcomeFields, 'gatewayTransactionToken', 'recommendedAction', 'recommendedActionReason'],
    optional: ['trigger'],
  },
  'recovery.blocked': {
    required: [
      'declineCode',
      'reason',
      'recommendedAction',
      'recommendedActionReason',
      'paymentMethodToken',
      'amount',
      'currency',
      'timestamp',
    ],
  },
  'card.updated': {
    required: [
      'oldPaymentMethodToken',
      'newPaymentMethodToken',
      'paymentMethodType',
      'eligibleGateways',
      'clientId',
      'timestamp',
    ],
  },
  'predict.risk.high': { required: ['paymentMethodToken', 'riskScore', 'reasoning', 'amount', 'timestamp'] },
  'recovery.skipped_high_risk': {
    required: [
      'paymentMethodToken',
      'amount',
      'currency',
      'riskScore',
      'confidence',
      'reasoning',
      'cardUpdateUrl',
      'skippedChargeId',
      'timestamp',
    ],
  },
  'recovery.holdout': {
    required: [
      'clientId',
      'paymentMethodToken',
      'amount',
      'currency',
      'customerEmail',
      'message',
      'timestamp',
    ],
  },
  'recovery.proactive_retention': {
    required: [
      'customerEmail',
      'recentFailureCount',
      'cancelFlowUrl',
      'cancelFlowToken',
      'amount',
      'currency',
      'reason',
      'timestamp',
    ],
  },
  // Either expiry pair (checked as a whole by the schema), the platform and pre-emptive variants' extras.
  'card.expiring_soon': {
    required: ['clientId', 'paymentMethodToken', 'message'],
    optional: [
      'expiryMonth',
      'expiryYear',
      'expMonth',
      'expYear',
      'daysUntilExpiry',
      'upcomingInvoiceAmount',
      'customerEmail',
      'cardUpdateUrl',
      'preemptive',
      'timestamp',
    ],
  },
  'recovery.3ds_recommended': {
    required: ['paymentMethodToken', 'amount', 'currency', 'declineCode', 'reason'],
  },
  'recovery.card_expired': { required: ['clientId', 'paymentMethodToken', 'amount', 'currency', 'message'] },
  'recovery.authentication_required': {
    required: ['paymentMethodToken', 'amount', 'currency', 'declineCode', 'customerAuthRequired', 'reason'],
  },
  'churn.flow.retained': { required: churnFields, optional: ['offer'] },
  'churn.flow.paused': { required: churnFields, optional: ['offer'] },
  'churn.flow.downgraded': { required: churnFields, optional: ['offer'] },
  'churn.flow.cancelled': { required: churnFields, optional: ['offer'] },
};

describe("the spec's Events table", () => {
  it.each(Object.entries(specFields))(
    '%s carries exactly its fields, the required ones always',
    (name, fields) => {
      const { shape } = eventSchemas[name as EventName];
      const keys = Object.keys(shape).filter((k) => k !== 'event');
      expect(keys.sort()).toEqual([...fields.required, ...(fields.optional ?? [])].sort());
      const field = (key: string) =>
        (shape as Record<string, { safeParse(v: unknown): { success: boolean } }>)[key]!;
      for (const key of fields.required) expect(field(key).safeParse(undefined).success, key).toBe(false);
      for (const key of fields.optional ?? [])
        expect(field(key).safeParse(undefined).success, key).toBe(true);
    },
  );
});

describe('signatures', () => {
  const body = '{"event":"recovery.success","amount":4999}';
  const secret = 'whsec_test_secret';
  // openssl dgst -sha256 -hmac whsec_test_secret over the same bytes:
  const expected = '86f2daa240e9222ad482e5a0404a4a38bb4dd6582aec635700fa309ff6e330b1';

  it('are lower-case hex HMAC-SHA256 of the raw bytes keyed with the whole whsec_ secret', () => {
    expect(signWebhook(body, secret)).toBe(expected);
    expect(signWebhook(Buffer.from(body), secret)).toBe(expected);
  });

  it('verify only the exact bytes, the right secret and a well-formed header', () => {
    expect(verifyWebhookSignature(Buffer.from(body), expected, secret)).toBe(true);
    expect(verifyWebhookSignature(`${body} `, expected, secret)).toBe(false);
    expect(verifyWebhookSignature(body, expected, 'whsec_other')).toBe(false);
    expect(verifyWebhookSignature(body, expected.toUpperCase(), secret)).toBe(false);
    expect(verifyWebhookSignature(body, `sha256=${expected}`, secret)).toBe(false);
    expect(verifyWebhookSignature(body, undefined, secret)).toBe(false);
  });
});

describe('who receives what', () => {
  const settings = { dunningEnabled: true, webhookUrl: 'https://merchant.example/hooks' };
  it.each([
    ['recovery.failed', settings, null],
    ['recovery.failed', { ...settings, dunningEnabled: false }, 'suppressed'],
    ['recovery.success', { ...settings, dunningEnabled: false }, null],
    ['recovery.blocked', { ...settings, dunningEnabled: false }, null],
    ['recovery.success', { ...settings, webhookUrl: 'http://merchant.example/hooks' }, 'undeliverable'],
    ['recovery.success', { ...settings, webhookUrl: 'not a url' }, 'undeliverable'],
  ] as const)('%s with %j is %s', (event, s, expected) => {
    expect(deliveryBlock(event, s)).toBe(expected);
  });

  it('only absolute https:// URLs are https', () => {
    expect(isHttpsUrl('https://127.0.0.1:8443/x')).toBe(true);
    expect(isHttpsUrl('HTTPS://EXAMPLE.COM')).toBe(true);
    expect(isHttpsUrl('//example.com')).toBe(false);
    expect(isHttpsUrl('ftp://example.com')).toBe(false);
  });
});

describe('whether a delivery is still under way', () => {
  const now = new Date('2026-03-02T12:00:00.000Z');
  const hoursAgo = (h: number) => new Date(now.getTime() - h * 3_600_000);
  /** A delivery begun `h` hours ago whose attempts answered these status codes (null: not sent). */
  const begun = (h: number, codes: Array<number | null>, stopped?: 'suppressed' | 'undeliverable') => ({
    startedAt: hoursAgo(h),
    attempts: codes.map((statusCode, i) => ({ attempt: i + 1, at: hoursAgo(h), statusCode })),
    ...(stopped ? { stopped } : {}),
  });
  const eightRefused = Array<number>(8).fill(500);

  // [case, status, latest delivery, may post more (mayBeUnderWay), its workflow may still run (retention)]
  it.each([
    ['retrying', 'pending', begun(1, [500]), true, true],
    ['acknowledged', 'delivered', begun(1, [500, 200]), false, false],
    ['dead-lettered', 'failed', begun(1, eightRefused), false, false],
    ['a resend of a delivered event, retrying', 'delivered', begun(1, [500]), true, true],
    ['stopped by dunning off, waiting out its schedule', 'suppressed', begun(1, [500, null]), false, true],
    [
      'a resend of a delivered event, stopped',
      'delivered',
      begun(1, [500, null], 'undeliverable'),
      false,
      true,
    ],
    [
      'retrying, begun 25 hours ago (its 24 h attempt may not have run yet)',
      'pending',
      begun(25, [500]),
      true,
      true,
    ],
    ['retrying, begun 28 hours ago (its workflow is gone)', 'pending', begun(28, [500]), true, false],
    ['recorded 2 hours ago, never started', 'pending', begun(2, []), true, true],
    ['recorded 28 hours ago, never started', 'pending', begun(28, []), true, false],
  ] as const)('%s: %s', (_name, status: DeliveryStatus, latest, underWay, mayRun) => {
    expect(mayBeUnderWay(status, latest)).toBe(underWay);
    expect(deliveryMayStillRun({ deliveries: [latest] }, now)).toBe(mayRun);
  });

  it('an event with no delivery (never sent) has none under way', () => {
    expect(deliveryMayStillRun({ deliveries: [] }, now)).toBe(false);
  });

  it.each([
    ['pending, recorded 10 minutes ago with no attempt', 'pending', begun(1 / 6, []), true],
    ['pending, recorded a minute ago: its publisher is starting it', 'pending', begun(1 / 60, []), false],
    ['pending with an attempt', 'pending', begun(1, [500]), false],
    ['dead-lettered because Temporal refused the start: listed as failed', 'failed', begun(1, []), false],
  ] as const)('stranded: %s is %s', (_name, deliveryStatus: DeliveryStatus, latest, stranded) => {
    expect(isStranded({ deliveryStatus, deliveries: [latest] }, now)).toBe(stranded);
  });
});

describe('when the outbox check looks for stranded events', () => {
  const minute = 60_000;
  /** The minutes (from 0) at which the check looks, told at each of `toldAt` and looking whenever due. */
  function looksWhenTold(toldAt: number[]): number[] {
    const told = [...toldAt];
    const looks: number[] = [];
    let watch: OutboxWatch | null = null;
    while (told.length > 0 || watch) {
      const due = watch ? nextOutboxLookAt(watch) / minute : Infinity;
      if (told.length > 0 && told[0]! <= due) watch = outboxTold(watch, told.shift()! * minute);
      else if (watch) {
        looks.push(due);
        watch = outboxLooked(watch, due * minute);
      }
    }
    return looks;
  }

  it.each([
    // Told once: the first look once an event recorded then could be stranded (5 minutes, and a minute
    // for the clocks), then a look a minute until all recorded in the 2 minutes the word holds are covered.
    ['told once', [0], [6, 7, 8]],
    // Told again before that ran out (a process recording all along): a look a minute while it lasts.
    ['told every 90 s for 6 minutes', [0, 1.5, 3, 4.5, 6], [6, 7, 8, 9, 10, 11, 12, 13, 14]],
    // Told long after it rested: it starts over, with no look in between.
    ['told, then an hour later', [0, 60], [6, 7, 8, 66, 67, 68]],
  ])('%s: looks at minutes %j', (_name, toldAt, looks) => {
    expect(looksWhenTold(toldAt)).toEqual(looks);
  });

  it('every event recorded while told is looked for once it could be stranded', () => {
    // Recorded at 1.9 minutes, under the word given at 0: the look at 8 covers what was recorded up to 2.
    const watch = outboxTold(null, 0);
    expect(outboxLooked(watch, 7 * minute)).not.toBeNull();
    expect(outboxLooked(watch, 8 * minute)).toBeNull();
  });
});

describe('the events the outbox check reads (stranded)', () => {
  const { client, db } = scratchDb('stranded', { monitorCommands: true });
  const events = () => createEventStore(db(), randomBytes(32));
  beforeAll(() => ensureIndexes(db()));
  afterEach(() => db().collection(collections.events).deleteMany({}));

  const now = new Date('2026-03-02T12:00:00.000Z');
  const minutesAgo = (m: number) => new Date(now.getTime() - m * 60_000);
  const refused = (n: number, minutes: number): DeliveryAttempt => ({
    attempt: n,
    at: minutesAgo(minutes),
    statusCode: 503,
    error: null,
    latencyMs: 20,
  });
  /** A delivery recorded `minutes` ago that made these attempts. */
  const delivery = (deliveryId: string, minutes: number, attempts: DeliveryAttempt[] = []): Delivery => ({
    deliveryId,
    startedAt: minutesAgo(minutes),
    attempts,
  });
  const strandedIds = async () => (await events().stranded(now)).map((e) => e.eventId);

  /** What `work` gave, and the ids of the events the database sent back to every read meanwhile. */
  async function withReads<T>(work: () => Promise<T>): Promise<{ result: T; read: string[] }> {
    const read: string[] = [];
    const listen = (e: CommandSucceededEvent) => {
      const reply = e.reply as {
        cursor?: { ns?: string; firstBatch?: Array<{ _id: string }>; nextBatch?: Array<{ _id: string }> };
      };
      if (!reply.cursor?.ns?.endsWith(`.${collections.events}`)) return;
      for (const doc of reply.cursor.firstBatch ?? reply.cursor.nextBatch ?? []) read.push(doc._id);
    };
    client().on('commandSucceeded', listen);
    try {
      return { result: await work(), read };
    } finally {
      client().off('commandSucceeded', listen);
    }
  }

  it('with an endpoint down for hours, reads only the one event whose delivery never started', async () => {
    const store = events();
    // Retried for two hours: pending, every attempt refused, across accounts.
    for (let i = 0; i < 40; i += 1)
      await storeEvent(store, `acct_down_${i % 3}`, {
        createdAt: minutesAgo(120),
        deliveries: [delivery('initial', 120, [refused(1, 119), refused(2, 100), refused(3, 40)])],
      });
    // Its publisher died after recording it; and one recorded a minute ago, being started.
    const stranded = await storeEvent(store, 'acct_up', { createdAt: minutesAgo(10) });
    await storeEvent(store, 'acct_up', { createdAt: minutesAgo(1) });

    const { result, read } = await withReads(() => store.stranded(now));
    expect(result).toEqual([{ eventId: stranded, recordedAt: minutesAgo(10) }]);
    expect(read).toEqual([stranded]);
  });

  it('follows the writes: an attempt takes an event out, a resend recorded and never started puts it back', async () => {
    const store = events();
    const eventId = await storeEvent(store, 'acct_a', { createdAt: minutesAgo(30) });
    expect(await strandedIds()).toContain(eventId);

    await store.recordAttempt(eventId, { deliveryId: 'initial', index: 0 }, refused(1, 29), false);
    expect(await strandedIds()).not.toContain(eventId);

    // A resend recorded ten minutes ago by a process that died before starting it.
    expect(
      await store.addDelivery(eventId, { deliveries: 1, status: 'pending' }, delivery('resend-1', 10)),
    ).toBe(true);
    // Recorded when the resend was asked for, not when the event was stored.
    expect((await store.stranded(now)).find((e) => e.eventId === eventId)).toEqual({
      eventId,
      recordedAt: minutesAgo(10),
    });

    await store.recordAttempt(eventId, { deliveryId: 'resend-1', index: 1 }, refused(1, 9), false);
    expect(await strandedIds()).not.toContain(eventId);
  });

  it('judges an event stored before it kept track of the latest delivery by its deliveries, as before', async () => {
    const store = events();
    const neverStarted = await storeEvent(store, 'acct_old', { createdAt: minutesAgo(30) });
    const retrying = await storeEvent(store, 'acct_old', {
      createdAt: minutesAgo(30),
      deliveries: [delivery('initial', 30, [refused(1, 29)])],
    });
    // As the earlier code stored them.
    await db()
      .collection<{ _id: string }>(collections.events)
      .updateMany({ _id: { $in: [neverStarted, retrying] } }, { $unset: { unattemptedSince: '' } });
    const found = await strandedIds();
    expect(found).toContain(neverStarted);
    expect(found).not.toContain(retrying);
  });

  it('finds every one of more than a page of stranded events, oldest first', async () => {
    const store = events();
    const ids: string[] = [];
    for (let i = 0; i < 130; i += 1)
      ids.push(await storeEvent(store, 'acct_many', { createdAt: minutesAgo(200 - i) }));
    expect(await strandedIds()).toEqual(ids);
  });
});
