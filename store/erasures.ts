import type { Db } from 'mongodb';
import { randomUUID } from 'node:crypto';
import { sha256 } from '../runtime/crypto.js';
import { collections } from './collections.js';
import { isDuplicateKey } from './mongo.js';

/** An erasure under way. `_id` hashes what the merchant named; the document goes once the erasure is done. */
interface ErasureDoc {
  _id: string;
  pseudonym: string;
  startedAt: Date;
}

/**
 * Erasures under way and the pseudonym each gives the customer's records. An erasure interrupted half-way
 * and run again finds its pseudonym here, so all the customer's records end with the same one.
 */
export function createErasureStore(db: Db) {
  const erasures = db.collection<ErasureDoc>(collections.erasures);
  const idOf = (accountId: string, customer: string) => `${accountId}:${sha256(customer)}`;
  return {
    /** The erasure's pseudonym: a new one, or the one of the same erasure begun earlier. */
    async begin(accountId: string, customer: string, now: Date): Promise<string> {
      const _id = idOf(accountId, customer);
      const pseudonym = `erased-${randomUUID()}@erased.invalid`;
      try {
        await erasures.insertOne({ _id, pseudonym, startedAt: now });
        return pseudonym;
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
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

export type ErasureStore = ReturnType<typeof createErasureStore>;
