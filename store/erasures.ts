import type { Db } from 'mongodb';
import { randomUUID } from 'node:crypto';
import { sha256 } from '../runtime/crypto.js';
import { collections } from './collections.js';
import type { CustomerRefs } from './customer-refs.js';
import { isDuplicateKey } from './mongo.js';

/** The identifiers an erasure follows: everything its footprint found (recovery ids are looked up again). */
export type ErasedRefs = Omit<CustomerRefs, 'transactionIds'>;

/** An erasure under way. `_id` hashes what the merchant named; the document goes once the erasure is done. */
interface ErasureDoc {
  _id: string;
  pseudonym: string;
  startedAt: Date;
  /**
   * What the erasure found to erase, written before its first change: a run interrupted after unlinking
   * the record that led to another card or address still finds that card's records when run again.
   */
  refs: ErasedRefs;
}

/** An erasure begun earlier and not finished. */
export type ErasureUnderWay = Pick<ErasureDoc, 'pseudonym' | 'refs'>;

/**
 * Erasures under way, the pseudonym each gives the customer's records and what each found to erase. An
 * erasure interrupted half-way and run again finds both here, so all the customer's records end with the
 * same pseudonym, including those only the first run's footprint led to.
 */
export function createErasureStore(db: Db) {
  const erasures = db.collection<ErasureDoc>(collections.erasures);
  const idOf = (accountId: string, customer: string) => `${accountId}:${sha256(customer)}`;
  return {
    /** The same erasure begun earlier and not finished, or null. */
    async underWay(accountId: string, customer: string): Promise<ErasureUnderWay | null> {
      const doc = await erasures.findOne({ _id: idOf(accountId, customer) });
      return doc ? { pseudonym: doc.pseudonym, refs: doc.refs } : null;
    },

    /**
     * Records the erasure and what it will erase before anything changes; returns its pseudonym: a new one,
     * or the one of the same erasure begun earlier (whose refs `refs` must include: they are replaced).
     */
    async begin(accountId: string, customer: string, refs: ErasedRefs, now: Date): Promise<string> {
      const _id = idOf(accountId, customer);
      const pseudonym = `erased-${randomUUID()}@erased.invalid`;
      try {
        await erasures.insertOne({ _id, pseudonym, startedAt: now, refs });
        return pseudonym;
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
        await erasures.updateOne({ _id }, { $set: { refs } });
        const earlier = await erasures.findOne({ _id });
        if (!earlier) throw new Error('An erasure collided on insert but cannot be read', { cause: error });
        return earlier.pseudonym;
      }
    },

    /** The erasure is done: nothing links the customer to the pseudonym any more. */
    async finish(accountId: string, customer: string): Promise<void> {
      await erasures.deleteOne({ _id: idOf(accountId, customer) });
    },
  };
}
