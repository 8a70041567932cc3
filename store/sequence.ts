import type { Collection } from 'mongodb';
import { isDuplicateKey } from './mongo.js';

/** A document of a numbered sequence: `_id` is `${prefix}:${n}`, n = 1, 2, 3 … without gaps. */
export interface SequenceDoc {
  _id: string;
  n: number;
}

/**
 * Numbered documents `${prefix}:1`, `${prefix}:2`, … read and written by `_id` alone. Claiming number n+1 is
 * a unique insert, so concurrent claimers can never both win it: counters, rate-limit slots and per-card
 * budgets stay exact without atomic updates (FerretDB has none) and without secondary-index queries
 * (FerretDB's SQLite backend scans the whole collection for any filter but `_id` equality).
 */
export function sequence<T extends SequenceDoc>(coll: Collection<T>) {
  const idOf = (prefix: string, n: number) => `${prefix}:${n}`;
  const exists = async (prefix: string, n: number) =>
    (await coll.findOne({ _id: idOf(prefix, n) } as Parameters<typeof coll.findOne>[0], {
      projection: { _id: 1 },
    })) !== null;

  /** The highest claimed number (0 if none): exponential then binary search over `_id`s, from a hint. */
  async function highest(prefix: string, hint = 0): Promise<number> {
    let low = hint > 0 && (await exists(prefix, hint)) ? hint : 0;
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
    return low;
  }

  return {
    highest,

    /** Reads one numbered document. */
    get: (prefix: string, n: number) =>
      coll.findOne({ _id: idOf(prefix, n) } as Parameters<typeof coll.findOne>[0]),

    /**
     * Claims the next number if `decide` allows it, given the highest number seen; on a lost race it
     * looks again and decides again. Returns the claimed number, or null when `decide` refused.
     */
    async claim(
      prefix: string,
      decide: (highest: number) => Promise<boolean> | boolean,
      make: (n: number) => Omit<T, '_id' | 'n'>,
      hint = 0,
    ): Promise<number | null> {
      let seen = await highest(prefix, hint);
      for (;;) {
        if (!(await decide(seen))) return null;
        const n = seen + 1;
        try {
          await coll.insertOne({ ...make(n), _id: idOf(prefix, n), n } as unknown as Parameters<
            typeof coll.insertOne
          >[0]);
          return n;
        } catch (error) {
          if (!isDuplicateKey(error)) throw error;
          seen = await highest(prefix, n);
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
  };
}
