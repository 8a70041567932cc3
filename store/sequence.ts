import type { Collection } from 'mongodb';
import { isDuplicateKey } from './mongo.js';

/** A document of a numbered sequence: `_id` is `${prefix}:${n}`, n = 1, 2, 3 … without gaps. */
export interface SequenceDoc {
  _id: string;
  n: number;
}

/** How many prefixes a sequence remembers the highest number of, per process. */
const rememberedPrefixes = 50_000;

/**
 * Numbered documents `${prefix}:1`, `${prefix}:2`, … read and written by `_id` alone. Claiming number n+1 is
 * a unique insert, so concurrent claimers can never both win it: counters, rate-limit slots and per-card
 * budgets stay exact without atomic updates (FerretDB has none) and without secondary-index queries
 * (FerretDB's SQLite backend scans the whole collection for any filter but `_id` equality).
 *
 * A claim is optimistic: it decides on the highest number it knows of and inserts the next one at once. The
 * insert can only win when the number it knew was the highest (numbers have no gaps), so a stale guess costs
 * one refused insert and a search, never a wrong claim; a refusal is only ever based on a number searched
 * for. With `remember`, the sequence keeps the highest number it has seen per prefix in this process, so a
 * claim on a busy prefix usually costs one insert. Only sequences whose documents are never deleted one by
 * one may remember (a deleted number would make a gap).
 */
export function sequence<T extends SequenceDoc>(coll: Collection<T>, opts: { remember?: boolean } = {}) {
  const idOf = (prefix: string, n: number) => `${prefix}:${n}`;
  const exists = async (prefix: string, n: number) =>
    (await coll.findOne({ _id: idOf(prefix, n) } as Parameters<typeof coll.findOne>[0], {
      projection: { _id: 1 },
    })) !== null;
  const known = new Map<string, number>();
  const remember = (prefix: string, n: number) => {
    if (!opts.remember || n <= (known.get(prefix) ?? 0)) return;
    if (known.size >= rememberedPrefixes) known.clear();
    known.set(prefix, n);
  };
  const guess = (prefix: string) => (opts.remember ? (known.get(prefix) ?? 0) : 0);

  /** The highest claimed number (0 if none), searched upwards from `from`, a number known to exist. */
  async function search(prefix: string, from: number): Promise<number> {
    let low = from;
    let step = 1;
    let high = low + step;
    while (await exists(prefix, high)) {
      low = high;
      step *= 2;
      high = low + step;
    }
    while (high - low > 1) {
      const mid = Math.floor((low + high) / 2);
      if (await exists(prefix, mid)) low = mid;
      else high = mid;
    }
    remember(prefix, low);
    return low;
  }

  return {
    /** The highest claimed number (0 if none): exponential then binary search over `_id`s. */
    highest: (prefix: string) => search(prefix, guess(prefix)),

    /** Reads one numbered document. */
    get: (prefix: string, n: number) =>
      coll.findOne({ _id: idOf(prefix, n) } as Parameters<typeof coll.findOne>[0]),

    /**
     * Claims the next number if `decide` allows it, given the highest number known; on a lost race it
     * looks again and decides again. Returns the claimed number, or null when `decide` refused the highest
     * number there is.
     */
    async claim(
      prefix: string,
      decide: (highest: number) => Promise<boolean> | boolean,
      make: (n: number) => Omit<T, '_id' | 'n'>,
    ): Promise<number | null> {
      let seen = guess(prefix);
      let searched = false;
      for (;;) {
        if (!(await decide(seen))) {
          if (searched) return null;
          // Refuse only on the real highest number: the guess may be stale.
          const real = await search(prefix, seen);
          searched = true;
          if (real === seen) return null;
          seen = real;
          continue;
        }
        const n = seen + 1;
        try {
          await coll.insertOne({ ...make(n), _id: idOf(prefix, n), n } as unknown as Parameters<
            typeof coll.insertOne
          >[0]);
          remember(prefix, n);
          return n;
        } catch (error) {
          if (!isDuplicateKey(error)) throw error;
          const before = seen;
          seen = await search(prefix, seen);
          // No higher number: another unique index refused the document, not a lost race.
          if (seen === before) throw error;
          searched = true;
        }
      }
    },

    /** Reads documents from number `from` downwards while `keep` holds, at most `max`, newest first. */
    async readDown(prefix: string, from: number, keep: (doc: T) => boolean, max: number): Promise<T[]> {
      const out: T[] = [];
      for (let n = from; n >= 1 && out.length < max; n -= 8) {
        const batch = await Promise.all(
          Array.from({ length: Math.min(8, n) }, (_, i) =>
            coll.findOne({ _id: idOf(prefix, n - i) } as Parameters<typeof coll.findOne>[0]),
          ),
        );
        for (const doc of batch) {
          if (!doc || !keep(doc as T) || out.length >= max) return out;
          out.push(doc as T);
        }
      }
      return out;
    },

    /**
     * Sets fields on every document of the prefix; returns how many changed. The documents stay: deleting
     * them would reopen numbers a claimer may still remember as taken.
     */
    async updateAll(prefix: string, fields: Partial<Omit<T, '_id' | 'n'>>): Promise<number> {
      const highest = await search(prefix, 0);
      if (highest === 0) return 0;
      const ids = Array.from({ length: highest }, (_, i) => idOf(prefix, i + 1));
      const result = await coll.updateMany(
        { _id: { $in: ids } } as Parameters<typeof coll.updateMany>[0],
        {
          $set: fields,
        } as Parameters<typeof coll.updateMany>[1],
      );
      return result.modifiedCount;
    },
  };
}
