import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { MongoClient, type Db } from 'mongodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

// The embedded FerretDB (tools/ferretdb) indexes the expression its SQLite backend looks documents up by,
// so a lookup by _id is an index search instead of a scan of the whole collection.

let mongo: MongoClient;
let ferret = false;

beforeAll(async () => {
  mongo = await MongoClient.connect(inject('mongoUri'));
  ferret = 'ferretdbVersion' in (await mongo.db('admin').command({ buildInfo: 1 }));
});
afterAll(() => mongo.close());

/**
 * SQLite's plan for a lookup by _id, as FerretDB's explain reports it. EXPLAIN does not reload a
 * connection's schema, so a lookup runs first: it does, as every real query does after a schema change.
 */
async function planOf(db: Db, coll: string): Promise<string> {
  await db.collection(coll).findOne({ _id: 'some-id' } as never);
  const explained = await db.command({ explain: { find: coll, filter: { _id: 'some-id' } } });
  return JSON.stringify(explained['queryPlanner']);
}

/** Waits until the wrapper has indexed the collection (it checks every 200 ms). */
async function indexedPlan(db: Db, coll: string): Promise<string> {
  let plan = await planOf(db, coll);
  for (let i = 0; i < 50 && !plan.includes('USING INDEX'); i++) {
    await delay(100);
    plan = await planOf(db, coll);
  }
  return plan;
}

describe('FerretDB lookups by _id', () => {
  it('use an index on new collections, also in a database dropped and created again', async (ctx) => {
    if (!ferret) ctx.skip();
    const db = mongo.db(`t_idindex_${randomUUID().slice(0, 8)}`);
    await db.collection('first').insertOne({ _id: 'a' } as never);
    expect(await indexedPlan(db, 'first')).toMatch(/SEARCH \S+ USING INDEX \S+__recoup_id_lookup/);

    await db.dropDatabase();
    await db.collection('second').insertOne({ _id: 'b' } as never);
    const plan = await indexedPlan(db, 'second');
    expect(plan).toMatch(/SEARCH \S+ USING INDEX \S+__recoup_id_lookup/);
    expect(plan).not.toMatch(/\bSCAN\b/);
    await db.dropDatabase();
  });

  it('are found, updated and deleted through the index like any other', async (ctx) => {
    if (!ferret) ctx.skip();
    const db = mongo.db(`t_idindex_${randomUUID().slice(0, 8)}`);
    const c = db.collection<{ _id: string; n: number }>('docs');
    await c.insertMany(Array.from({ length: 50 }, (_, n) => ({ _id: `d${n}`, n })));
    await indexedPlan(db, 'docs');
    expect(await c.findOne({ _id: 'd17' })).toEqual({ _id: 'd17', n: 17 });
    await c.updateOne({ _id: 'd17' }, { $set: { n: 170 } });
    expect((await c.findOne({ _id: 'd17' }))?.n).toBe(170);
    await c.deleteOne({ _id: 'd18' });
    expect(await c.findOne({ _id: 'd18' })).toBeNull();
    expect(await c.countDocuments()).toBe(49);
    await expect(c.insertOne({ _id: 'd17', n: 0 })).rejects.toThrow(/duplicate key/);
    await db.dropDatabase();
  });
});
