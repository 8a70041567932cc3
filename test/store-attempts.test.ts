import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { RecoveryRequest } from '../domain/recovery-request.js';
import { collections } from '../store/collections.js';
import { createEventStore, type DeliveryAttempt } from '../store/events.js';
import { createRecoveryStore, type AttemptRecord } from '../store/recoveries.js';
import { storeEvent } from './support/events.js';
import { scratchDb } from './support/scratch-db.js';

// Retried activities record the same attempt again, sometimes while the first run is still writing:
// the read model and the audit log keep each attempt once.

const { db } = scratchDb('attempts');
const masterKey = randomBytes(32);

const now = new Date('2026-11-22T10:00:00Z');

async function newRecovery() {
  const recoveries = createRecoveryStore(db());
  const transactionId = randomUUID();
  await recoveries.create({
    transactionId,
    accountId: 'acct_a',
    workflowId: `recovery/acct_a/${transactionId}`,
    cardKey: `card_${transactionId}`,
    request: RecoveryRequest.parse({ paymentMethodToken: 'tok_visa', amount: 1000 }),
    isSimulated: true,
    now,
  });
  return { recoveries, transactionId };
}

const attempt = (no: number, outcome: AttemptRecord['outcome'] = 'declined'): AttemptRecord => ({
  no,
  at: new Date(now.getTime() + no * 60_000),
  gateway: 'test',
  role: 'primary',
  outcome,
  declineCode: outcome === 'declined' ? 'insufficient_funds' : null,
  gatewayTransactionId: `tgw_${no}`,
});

describe('recovery attempts in the read model', () => {
  it('are appended once when recorded again, one after the other or at the same time', async () => {
    const { recoveries, transactionId } = await newRecovery();
    await recoveries.addAttempt(transactionId, attempt(1), now);
    await recoveries.addAttempt(transactionId, attempt(1), now);
    await Promise.all(Array.from({ length: 5 }, () => recoveries.addAttempt(transactionId, attempt(2), now)));
    const doc = await recoveries.find('acct_a', transactionId);
    expect(doc?.attempts.map((a) => a.no)).toEqual([1, 2]);
    expect(doc?.lastDeclineCode).toBe('insufficient_funds');
  });

  it('keep the first record of an attempt number', async () => {
    const { recoveries, transactionId } = await newRecovery();
    await recoveries.addAttempt(transactionId, attempt(1, 'not_charged'), now);
    await recoveries.addAttempt(transactionId, attempt(1, 'approved'), now);
    expect((await recoveries.find('acct_a', transactionId))?.attempts.map((a) => a.outcome)).toEqual([
      'not_charged',
    ]);
  });

  it('are only found through the account that owns the recovery', async () => {
    const { recoveries, transactionId } = await newRecovery();
    expect(await recoveries.find('acct_b', transactionId)).toBeNull();
    expect((await recoveries.find('acct_a', `FAILED_API_${transactionId}`))?._id).toBe(transactionId);
  });
});

describe('webhook delivery attempts in the audit log', () => {
  async function newEvent() {
    const events = createEventStore(db(), masterKey);
    const eventId = await storeEvent(events, 'acct_a', {
      createdAt: now,
      deliveries: [{ deliveryId: 'd1', startedAt: now, attempts: [] }],
    });
    return { events, eventId };
  }
  const post = (n: number, statusCode: number): DeliveryAttempt => ({
    attempt: n,
    at: new Date(now.getTime() + n * 1000),
    statusCode,
    error: statusCode < 300 ? null : `HTTP ${statusCode}`,
    latencyMs: 12,
  });

  it('are recorded once when recorded again, one after the other or at the same time', async () => {
    const { events, eventId } = await newEvent();
    const d1 = { deliveryId: 'd1', index: 0 };
    expect(await events.recordAttempt(eventId, d1, post(1, 500), false)).toBe(true);
    expect(await events.recordAttempt(eventId, d1, post(1, 500), false)).toBe(true);
    const again = await Promise.all(
      Array.from({ length: 5 }, () => events.recordAttempt(eventId, d1, post(2, 200), true)),
    );
    expect(again).toEqual([true, true, true, true, true]);
    const record = await events.get(eventId);
    expect(record?.deliveries[0]?.attempts.map((a) => a.attempt)).toEqual([1, 2]);
    expect(record?.deliveryStatus).toBe('delivered');
  });

  it('are refused for a delivery the event does not have, or an event that does not exist', async () => {
    const { events, eventId } = await newEvent();
    expect(await events.recordAttempt(eventId, { deliveryId: 'other', index: 0 }, post(1, 200), true)).toBe(
      false,
    );
    expect(await events.recordAttempt(eventId, { deliveryId: 'd1', index: 1 }, post(1, 200), true)).toBe(
      false,
    );
    expect(await events.recordAttempt(randomUUID(), { deliveryId: 'd1', index: 0 }, post(1, 200), true)).toBe(
      false,
    );
    const record = await events.get(eventId);
    expect(record?.deliveries).toEqual([{ deliveryId: 'd1', startedAt: now, attempts: [] }]);
    expect(record?.deliveryStatus).toBe('pending');
  });
});

describe('events that carry a hosted link', () => {
  it('are stored with the link and the body sealed, and read back as they were sent', async () => {
    const events = createEventStore(db(), masterKey);
    // The sample's link: https://pay.example.com/update-card/abc
    const eventId = await storeEvent(events, 'acct_a', { type: 'recovery.skipped_high_risk' });
    const raw = await db()
      .collection(collections.events)
      .findOne({ _id: eventId as never });
    expect(JSON.stringify(raw)).not.toContain('update-card/abc');

    const record = await events.get(eventId);
    expect(record?.payload).toMatchObject({ cardUpdateUrl: 'https://pay.example.com/update-card/abc' });
    expect(JSON.parse(record!.body)).toEqual(record!.payload);
    expect((await events.list({ accountId: 'acct_a' })).find((e) => e._id === eventId)).toEqual(record);
    const token = String((record!.payload as { paymentMethodToken: string }).paymentMethodToken);
    const refs = { emails: [], tokens: [token], transactionIds: [], customerIds: [] };
    expect((await events.ofCustomer('acct_a', refs)).find((e) => e._id === eventId)).toEqual(record);

    // Under another master key (the old one lost) the event cannot be opened, but it is still found, as
    // stored, for the customer's erasure; sending it fails rather than post what it cannot read.
    const otherKey = createEventStore(db(), randomBytes(32));
    const found = await otherKey.ofCustomer('acct_a', refs);
    expect(found.find((e) => e._id === eventId)?.body).not.toBe(record!.body);
    await expect(otherKey.get(eventId)).rejects.toThrow();
  });
});
