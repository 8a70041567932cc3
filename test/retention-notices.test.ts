import { randomUUID } from 'node:crypto';
import type { Db, MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { proactiveRetention } from '../domain/retention.js';
import { ensureIndexes } from '../store/indexes.js';
import { connectMongo } from '../store/mongo.js';
import { createRetentionNoticeStore, type RetentionNoticeStore } from '../store/retention-notices.js';

const day = 86_400_000;
const start = new Date(Date.UTC(2026, 5, 1, 9));
const { windowMs } = proactiveRetention;
const at = (days: number, ms = 0) => new Date(start.getTime() + days * day + ms);

let mongo: MongoClient;
let db: Db;
let notices: RetentionNoticeStore;

beforeAll(async () => {
  ({ client: mongo, db } = await connectMongo(`${inject('mongoUri')}t_notices_${randomUUID().slice(0, 8)}`));
  await ensureIndexes(db);
  notices = createRetentionNoticeStore(db);
});
afterAll(async () => {
  await db.dropDatabase();
  await mongo.close();
});

describe('one proactive-retention notice per customer per 30 days', () => {
  it('is the 30-day window the engine uses', () => {
    expect(windowMs).toBe(30 * day);
  });

  it('refuses another event within 30 days of the last notice, and takes one from the 30th day on', async () => {
    const account = `acct_${randomUUID().slice(0, 8)}`;
    const claim = (eventId: string, now: Date) =>
      notices.claim(account, 'ada@example.com', eventId, now, windowMs);

    expect(await claim('evt-1', at(0))).toBe(true);
    expect(await claim('evt-2', at(29))).toBe(false);
    expect(await claim('evt-2', at(30, -1))).toBe(false);
    expect(await claim('evt-2', at(30))).toBe(true);
    // The window now runs from the new notice, not the first one.
    expect(await claim('evt-3', at(59))).toBe(false);
    expect(await claim('evt-3', at(60))).toBe(true);
  });

  it('a retry of the event that holds the notice still holds it, whenever it comes', async () => {
    const account = `acct_${randomUUID().slice(0, 8)}`;
    const claim = (eventId: string, now: Date) =>
      notices.claim(account, 'Grace@Example.com', eventId, now, windowMs);

    expect(await claim('evt-1', at(0))).toBe(true);
    expect(await claim('evt-1', at(29))).toBe(true);
    expect(await claim('evt-1', at(31))).toBe(true);
    expect(await notices.claim(account, 'grace@example.com', 'evt-2', at(1), windowMs)).toBe(false);
  });
});
