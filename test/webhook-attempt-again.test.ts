import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createEventStore, type DeliveryAttempt } from '../store/events.js';
import { storeEvent } from './support/events.js';
import { scratchDb } from './support/scratch-db.js';

// A worker that dies after recording an attempt's outcome, before Temporal learned of it, makes the
// workflow run that attempt again: the same POST, recorded a second time with whatever came back then.

const { db } = scratchDb('attempt_again');
const masterKey = randomBytes(32);

const now = new Date('2026-11-22T10:00:00Z');
const initial = { deliveryId: 'initial', index: 0 };

async function pendingEvent() {
  const events = createEventStore(db(), masterKey);
  const eventId = await storeEvent(events, 'acct_a', { createdAt: now });
  return { events, eventId };
}

const post = (n: number, statusCode: number, late = 0): DeliveryAttempt => ({
  attempt: n,
  at: new Date(now.getTime() + n * 1000 + late),
  statusCode,
  error: statusCode === 200 ? null : `HTTP ${statusCode}: only 200 acknowledges`,
  latencyMs: 12,
});

describe('an attempt recorded again after a worker died', () => {
  it('marks the event delivered when the attempt first failed and then was acknowledged', async () => {
    const { events, eventId } = await pendingEvent();
    expect(await events.recordAttempt(eventId, initial, post(1, 500), false)).toBe(true);
    expect(await events.recordAttempt(eventId, initial, post(1, 200, 30_000), true)).toBe(true);
    const record = await events.get(eventId);
    expect(record?.deliveryStatus).toBe('delivered');
    // Both POSTs of attempt 1 stay in the audit log: it was sent twice, and the second was acknowledged.
    expect(record?.deliveries[0]?.attempts.map((a) => [a.attempt, a.statusCode])).toEqual([
      [1, 500],
      [1, 200],
    ]);
  });

  it('keeps the event delivered, and records nothing more, once an attempt was acknowledged', async () => {
    const { events, eventId } = await pendingEvent();
    expect(await events.recordAttempt(eventId, initial, post(1, 200), true)).toBe(true);
    expect(await events.recordAttempt(eventId, initial, post(1, 500, 30_000), false)).toBe(true);
    expect(await events.recordAttempt(eventId, initial, post(2, 500), false)).toBe(true);
    const record = await events.get(eventId);
    expect(record?.deliveryStatus).toBe('delivered');
    expect(record?.deliveries[0]?.attempts.map((a) => [a.attempt, a.statusCode])).toEqual([[1, 200]]);
  });

  it('records a failure once, however often it is recorded again', async () => {
    const { events, eventId } = await pendingEvent();
    await events.recordAttempt(eventId, initial, post(1, 500), false);
    await events.recordAttempt(eventId, initial, post(1, 502, 30_000), false);
    const record = await events.get(eventId);
    expect(record?.deliveryStatus).toBe('pending');
    expect(record?.deliveries[0]?.attempts.map((a) => a.statusCode)).toEqual([500]);
  });
});
