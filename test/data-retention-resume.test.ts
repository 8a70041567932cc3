import { randomUUID } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RetentionResult } from '../activities/data-retention.js';
import { createActivities } from '../activities/index.js';
import { collections } from '../store/collections.js';
import type { EventRecord } from '../store/events.js';
import type { ConsumptionDoc } from '../store/links.js';
import { sampleEvent } from './support/sample-events.js';
import { activityDeps, startStack, type Stack } from './support/stack.js';

const day = 86_400_000;
let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ worker: false });
});
afterAll(async () => {
  await stack.close();
});

/** What a try of the daily activity reported in its heartbeats, as a retried try would be handed them. */
interface Reported {
  step: string;
  account: string | null;
  linkUse: string | null;
  counts: Partial<RetentionResult>;
}

/**
 * One try of the daily activity on `asOf`, as Temporal runs it: handed the details of the previous try's
 * last heartbeat (none on a first try); returns its result and every heartbeat it sent.
 */
async function tryOfDailyRun(
  asOf: number,
  reported?: Reported,
): Promise<{ result: RetentionResult; beats: unknown[] }> {
  const activities = createActivities(activityDeps(stack));
  const env = new MockActivityEnvironment(reported ? { heartbeatDetails: reported } : {});
  const beats: unknown[] = [];
  env.on('heartbeat', (details: unknown) => beats.push(details));
  const result = await env.run<[], RetentionResult, () => Promise<RetentionResult>>(() =>
    activities.purgeExpiredData({ asOf }),
  );
  return { result, beats };
}

const uses = () => stack.stores.db.collection<ConsumptionDoc>(collections.linkConsumptions);

/** `count` uses of hosted links that are gone, named `<prefix>-0000` onwards (in id order). */
async function orphanedUses(prefix: string, count: number): Promise<string[]> {
  const ids = Array.from({ length: count }, (_, i) => `${prefix}-${String(i).padStart(4, '0')}`);
  await uses().insertMany(
    ids.map((id) => ({
      _id: id,
      accountId: 'acct_gone',
      at: new Date(),
      eventId: randomUUID(),
      outcome: { kind: 'card_updated', newPaymentMethodToken: `tok_${id}`, eligibleGateways: ['test'] },
      effectsDoneAt: new Date(),
    })),
  );
  return ids;
}

/** The heartbeats sent while the scan for orphaned link uses ran, with the last use each had looked at. */
const scanBeats = (beats: unknown[]) =>
  beats.flatMap((b) =>
    typeof b === 'object' && b !== null && 'step' in b && b.step === 'linkUses' && 'linkUse' in b
      ? [b.linkUse].filter((use) => use !== null)
      : [],
  );

describe('the daily data retention on a large deployment', () => {
  it('heartbeats during the scan for orphaned link uses, after each batch of 500', async () => {
    const ids = await orphanedUses('a', 1_200);
    const { result, beats } = await tryOfDailyRun(Date.now());
    expect(result.orphanedLinkUses).toBe(1_200);
    expect(await uses().countDocuments({})).toBe(0);
    // Three batches (500, 500, 200): a heartbeat after each, saying how far the scan has got.
    expect(scanBeats(beats)).toEqual([ids[499], ids[999], ids[1_199]]);
  });

  it('a retried try goes on with the scan for orphaned link uses after the last use reported', async () => {
    const ids = await orphanedUses('b', 1_100);
    // The first try had scanned (and deleted) the first 600 and said so before it was cut short; the 600
    // are still here only so that this test can see the retry leave them alone.
    const { result } = await tryOfDailyRun(Date.now(), {
      step: 'linkUses',
      account: null,
      linkUse: ids[599] ?? null,
      counts: { orphanedLinkUses: 600 },
    });
    expect(result.orphanedLinkUses).toBe(1_100);
    const left = await uses()
      .find({}, { projection: { _id: 1 } })
      .sort({ _id: 1 })
      .toArray();
    expect(left.map((u) => u._id)).toEqual(ids.slice(0, 600));
    await uses().deleteMany({});
  });

  it('a retried try starts after the last account its heartbeat reported finished', async () => {
    const accounts = [];
    for (let i = 0; i < 3; i += 1) {
      const { account } = await stack.createAccount({ dataRetentionDays: 90 });
      await stack.stores.connectorEvents.receive(
        account.id,
        'chargebee',
        'ev_1',
        'payment_failed',
        new Date(),
      );
      accounts.push(account.id);
    }
    const [first, ...rest] = accounts.sort();
    // The first try had purged the first account (in id order) before it was cut short; its platform event
    // is still here only so that this test can see the retry leave that account alone.
    const { result, beats } = await tryOfDailyRun(Date.now() + 100 * day, {
      step: 'accounts',
      account: first ?? null,
      linkUse: null,
      counts: { accounts: 1, platformEvents: 1 },
    });
    const platformEvents = (accountId: string) =>
      stack.stores.db.collection(collections.connectorEvents).countDocuments({ accountId });
    expect(await platformEvents(first ?? '')).toBe(1);
    for (const accountId of rest) expect(await platformEvents(accountId)).toBe(0);
    // What the earlier try counted is counted in.
    expect(result).toMatchObject({ accounts: 3, platformEvents: 3 });
    expect(beats).toContainEqual(expect.objectContaining({ account: rest.at(-1) }));
  });

  it("deletes an account's old events a batch at a time, telling the caller after each", async () => {
    const accountId = `acct_${randomUUID().slice(0, 8)}`;
    const createdAt = new Date(Date.now() - 200 * day);
    const old = Array.from({ length: 1_100 }, (): EventRecord => {
      const eventId = randomUUID();
      const payload = { ...sampleEvent('recovery.success'), eventId, createdAt: createdAt.toISOString() };
      return {
        _id: eventId,
        accountId,
        type: 'recovery.success',
        payload,
        body: JSON.stringify(payload),
        createdAt,
        deliveryStatus: 'delivered',
        deliveries: [{ deliveryId: 'initial', startedAt: createdAt, attempts: [] }],
      };
    });
    await stack.stores.db.collection<EventRecord>(collections.events).insertMany(old);
    let batches = 0;
    const now = new Date();
    const deleted = await stack.stores.events.purgeBefore(
      accountId,
      new Date(now.getTime() - 90 * day),
      now,
      () => {
        batches += 1;
      },
    );
    expect(deleted).toBe(1_100);
    expect(batches).toBe(3);
    expect(await stack.stores.events.list({ accountId })).toEqual([]);
  });
});
