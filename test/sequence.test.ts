import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { sequence, type SequenceDoc } from '../store/sequence.js';
import { scratchDb } from './support/scratch-db.js';

interface Doc extends SequenceDoc {
  by: string;
}

const { client, db } = scratchDb('sequence', { monitorCommands: true });
/** Commands sent to the server, by name, while `counting` is on. */
const sent: string[] = [];
let counting = false;

beforeAll(() => {
  client().on('commandStarted', (e) => {
    if (counting) sent.push(e.commandName);
  });
});

const coll = () => db().collection<Doc>(`seq_${randomUUID().slice(0, 8)}`);
const below = (limit: number) => (highest: number) => highest < limit;

describe('numbered claims', () => {
  it('stay exact when many processes with stale memories race for a limited prefix', async () => {
    const c = coll();
    // Four "processes", each with its own memory of the prefix.
    const processes = Array.from({ length: 4 }, () => sequence(c, { remember: true }));
    const first = await Promise.all(
      Array.from({ length: 40 }, (_, i) => processes[i % 4]!.claim('p', below(25), () => ({ by: `a${i}` }))),
    );
    const second = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        processes[(i + 1) % 4]!.claim('p', below(25), () => ({ by: `b${i}` })),
      ),
    );
    const won = [...first, ...second].filter((n): n is number => n !== null).sort((a, b) => a - b);
    expect(won).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
    expect(await c.countDocuments({})).toBe(25);
    for (const p of processes) expect(await p.highest('p')).toBe(25);
  });

  it('updateAll changes every document of the prefix and keeps the numbers taken', async () => {
    const c = coll();
    const seq = sequence(c, { remember: true });
    for (const by of ['x', 'y', 'z'])
      await seq.claim(
        'p',
        () => true,
        () => ({ by }),
      );
    await seq.claim(
      'q',
      () => true,
      () => ({ by: 'other prefix' }),
    );
    expect(await seq.updateAll('p', { by: 'erased' })).toBe(3);
    expect(await seq.updateAll('none', { by: 'erased' })).toBe(0);
    const docs = await c.find({}).sort({ _id: 1 }).toArray();
    expect(docs.map((d) => [d._id, d.by])).toEqual([
      ['p:1', 'erased'],
      ['p:2', 'erased'],
      ['p:3', 'erased'],
      ['q:1', 'other prefix'],
    ]);
    // A claim by a process that never saw the prefix continues after the updated ones.
    expect(
      await sequence(c).claim(
        'p',
        () => true,
        () => ({ by: 'next' }),
      ),
    ).toBe(4);
  });

  it('refuses only on the real highest number, never on a stale memory', async () => {
    const c = coll();
    const stale = sequence(c, { remember: true });
    const other = sequence(c, { remember: true });
    expect(await stale.claim('p', below(10), () => ({ by: 'stale' }))).toBe(1);
    for (let i = 0; i < 5; i += 1) await other.claim('p', below(10), () => ({ by: 'other' }));
    // `stale` believes 1 is the highest; a rule that refuses at 1 must still look at the real 6.
    const seen: number[] = [];
    const refused = await stale.claim(
      'p',
      (h) => {
        seen.push(h);
        return h >= 5;
      },
      () => ({ by: 'stale' }),
    );
    expect(seen).toEqual([1, 6]);
    expect(refused).toBe(7);
  });

  it('claims on a remembered prefix with one insert, and on a new prefix with one insert', async () => {
    const c = coll();
    const s = sequence(c, { remember: true });
    await s.claim('busy', below(100), () => ({ by: 'warm' }));
    sent.length = 0;
    counting = true;
    expect(await s.claim('busy', below(100), () => ({ by: 'x' }))).toBe(2);
    expect(await s.claim('fresh', below(100), () => ({ by: 'y' }))).toBe(1);
    counting = false;
    expect(sent).toEqual(['insert', 'insert']);
  });

  it('rethrows a duplicate key that no higher number explains (another unique index)', async () => {
    const c = coll();
    await c.createIndex({ by: 1 }, { unique: true });
    const s = sequence(c);
    await s.claim('p', below(10), () => ({ by: 'same' }));
    await expect(s.claim('p', below(10), () => ({ by: 'same' }))).rejects.toThrow(/duplicate key/);
  });
});
