import type { Db } from 'mongodb';
import { randomUUID } from 'node:crypto';
import { sha256 } from '../runtime/crypto.js';
import { collections } from './collections.js';
import type { CustomerRefs } from './customer-refs.js';
import { isDuplicateKey } from './mongo.js';

/** The identifiers an erasure follows: everything its footprint found (recovery ids are looked up again). */
export type ErasedRefs = Omit<CustomerRefs, 'transactionIds'>;

/**
 * An erasure under way. `_id` hashes what the merchant named in the request that began it; the document
 * goes once the erasure is done.
 */
interface ErasureDoc {
  _id: string;
  /** Absent on erasures begun before they were found by `keys`: those are found by `_id` alone. */
  accountId?: string;
  pseudonym: string;
  startedAt: Date;
  /**
   * What the erasure found to erase, written before its first change: a run interrupted after unlinking
   * the record that led to another card or address still finds that card's records when run again.
   */
  refs: ErasedRefs;
  /** A hash of each identifier in `refs`: a later request naming any of them finds this erasure. */
  keys?: string[];
}

/** Unfinished erasures of the customer: their pseudonym (the first one's), what they follow, their ids. */
export interface ErasureUnderWay {
  pseudonym: string;
  refs: ErasedRefs;
  ids: string[];
}

const keysOf = (refs: ErasedRefs): string[] => [
  ...refs.emails.map((email) => sha256(`email:${email}`)),
  ...refs.tokens.map((token) => sha256(`token:${token}`)),
  ...refs.customerIds.map((id) => sha256(`customer:${id}`)),
];

const union = (lists: string[][]) => [...new Set(lists.flat())];

/**
 * Erasures under way, the pseudonym each gives the customer's records and what each found to erase. An
 * erasure interrupted half-way (or answered as not finished) and run again, with the same request or one
 * naming any identifier it found, finds them here: all the customer's records end with the same pseudonym,
 * including those only the first run's footprint led to, and the run that finishes removes every record.
 */
export function createErasureStore(db: Db) {
  const erasures = db.collection<ErasureDoc>(collections.erasures);
  const idOf = (accountId: string, request: string) => `${accountId}:${sha256(request)}`;
  return {
    /**
     * The erasures of this account begun earlier and not finished that the same `request` began, or that
     * follow any identifier it names (`named`); null when there are none.
     */
    async underWay(accountId: string, request: string, named: ErasedRefs): Promise<ErasureUnderWay | null> {
      const docs = await erasures
        .find({ $or: [{ _id: idOf(accountId, request) }, { accountId, keys: { $in: keysOf(named) } }] })
        .sort({ startedAt: 1, _id: 1 })
        .toArray();
      const [first] = docs;
      if (!first) return null;
      return {
        pseudonym: first.pseudonym,
        refs: {
          emails: union(docs.map((d) => d.refs.emails)),
          tokens: union(docs.map((d) => d.refs.tokens)),
          customerIds: union(docs.map((d) => d.refs.customerIds)),
        },
        ids: docs.map((d) => d._id),
      };
    },

    /**
     * Records the erasure and what it will erase before anything changes; returns its pseudonym: that of
     * the erasure `earlier` found (whose refs `refs` must include: they are replaced), else a new one, or
     * that of the same request begun at the same time.
     */
    async begin(
      accountId: string,
      request: string,
      earlier: ErasureUnderWay | null,
      refs: ErasedRefs,
      now: Date,
    ): Promise<string> {
      const recorded = { accountId, refs, keys: keysOf(refs) };
      const [continued] = earlier?.ids ?? [];
      if (earlier && continued) {
        const result = await erasures.updateOne({ _id: continued }, { $set: recorded });
        if (result.matchedCount === 1) return earlier.pseudonym;
      }
      const _id = idOf(accountId, request);
      const pseudonym = earlier?.pseudonym ?? `erased-${randomUUID()}@erased.invalid`;
      try {
        await erasures.insertOne({ _id, pseudonym, startedAt: now, ...recorded });
        return pseudonym;
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
        await erasures.updateOne({ _id }, { $set: recorded });
        const same = await erasures.findOne({ _id });
        if (!same) throw new Error('An erasure collided on insert but cannot be read', { cause: error });
        return same.pseudonym;
      }
    },

    /**
     * The erasure is done: nothing links the customer to the pseudonym any more. Removes its own record
     * and those of the erasures it continued.
     */
    async finish(accountId: string, request: string, earlier: ErasureUnderWay | null): Promise<void> {
      await erasures.deleteMany({ _id: { $in: [idOf(accountId, request), ...(earlier?.ids ?? [])] } });
    },
  };
}
