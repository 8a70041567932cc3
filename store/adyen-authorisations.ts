import type { Db } from 'mongodb';
import { collections } from './collections.js';
import { isDuplicateKey } from './mongo.js';

/** Adyen's final result of one payment, from its AUTHORISATION webhook. */
export interface AdyenAuthorisation {
  pspReference: string;
  /** The payment's `reference`: the attempt key Recoup sent, or its SHA-256. */
  merchantReference: string;
  success: boolean;
  /** Adyen's refusal reason; null when authorised (its `reason` then holds the card's last digits and expiry). */
  reason: string | null;
  /** In Adyen's minor units, as the payment was sent. */
  value: number;
  currency: string;
  /** When Adyen generated the event, as Adyen wrote it. */
  eventDate: string;
}

/** One authorisation as stored: `_id` is `${accountId}/${pspReference}`, so Adyen's resends are no-ops. */
export interface AdyenAuthorisationDoc extends AdyenAuthorisation {
  _id: string;
  accountId: string;
  receivedAt: Date;
}

/**
 * The final results Adyen sent for payments it first answered `Received` or `Pending`: what the Adyen
 * gateway's lookup reads. Nothing about the shopper is kept.
 */
export function createAdyenAuthorisationStore(db: Db) {
  const authorisations = db.collection<AdyenAuthorisationDoc>(collections.adyenAuthorisations);
  const idOf = (accountId: string, pspReference: string) => `${accountId}/${pspReference}`;

  return {
    /** Keeps the first notice of a payment; Adyen's resends of it (and concurrent deliveries) change nothing. */
    async record(accountId: string, authorisation: AdyenAuthorisation, receivedAt: Date): Promise<void> {
      try {
        await authorisations.insertOne({
          _id: idOf(accountId, authorisation.pspReference),
          accountId,
          ...authorisation,
          receivedAt,
        });
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
      }
    },

    /** The account's authorisation of the payment `pspReference`, or null while Adyen has sent none. */
    async find(accountId: string, pspReference: string): Promise<AdyenAuthorisation | null> {
      const doc = await authorisations.findOne({ _id: idOf(accountId, pspReference) });
      if (!doc) return null;
      const { _id, accountId: _account, receivedAt: _at, ...authorisation } = doc;
      return authorisation;
    },

    /** Deletes every account's authorisations received before `cutoff` (data retention). */
    async purgeBefore(cutoff: Date): Promise<number> {
      return (await authorisations.deleteMany({ receivedAt: { $lt: cutoff } })).deletedCount;
    },
  };
}

export type AdyenAuthorisationStore = ReturnType<typeof createAdyenAuthorisationStore>;
