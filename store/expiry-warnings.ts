import type { Db } from 'mongodb';
import { sha256 } from '../runtime/crypto.js';
import { collections } from './collections.js';
import { upsert } from './mongo.js';

/**
 * A card.expiring_soon once sent: `_id` is `${accountId}:${hash of its eventId}` (the eventId itself hashes
 * the card's token and expiry), so it names neither the customer nor the card. Erasure and an account's
 * retention leave it; the daily data retention deletes it once the card has expired (`expiresAt`), and
 * closing the account with the rest.
 */
interface WarnedDoc {
  _id: string;
  expiresAt: Date;
}

const idOf = (accountId: string, eventId: string) => `${accountId}:${sha256(eventId)}`;

/**
 * The card expiry warnings sent, kept apart from the events: "once per card and expiry" holds after an
 * erasure or a purge deleted the warning (the card is still on file at the gateway, and still expiring).
 */
export function createExpiryWarningStore(db: Db) {
  const warned = db.collection<WarnedDoc>(collections.expiryWarnings);
  return {
    /** Remembers the warning `eventId` until `expiresAt` (a card past it is warned about no more). */
    async remember(accountId: string, eventId: string, expiresAt: Date): Promise<void> {
      const _id = idOf(accountId, eventId);
      await upsert(() => warned.updateOne({ _id }, { $set: { expiresAt } }, { upsert: true }));
    },

    /** Whether the warning `eventId` was sent, even if its event is gone. */
    async sent(accountId: string, eventId: string): Promise<boolean> {
      return (await warned.findOne({ _id: idOf(accountId, eventId) })) !== null;
    },

    /**
     * Deletes the warnings of cards expired by `asOf`, in every account: the daily data retention's (FerretDB
     * has no TTL indexes).
     */
    async purgeExpired(asOf: Date): Promise<number> {
      return (await warned.deleteMany({ expiresAt: { $lt: asOf } })).deletedCount;
    },
  };
}
