import type { Db } from 'mongodb';
import { collections } from './collections.js';
import { isDuplicateKey } from './mongo.js';

/** A sandbox charge of the built-in test gateway, keyed by its idempotency key. */
export interface SandboxCharge {
  _id: string; // gateway-scoped idempotency key
  gateway: string;
  token: string;
  amount: number;
  currency: string;
  approved: boolean;
  code: string | null;
  transactionId: string;
  isSimulated: true;
  createdAt: Date;
}

/** A card saved in a test gateway's sandbox vault (by the hosted card-update page): never a real number. */
export interface SandboxCard {
  _id: string; // the token
  accountId: string;
  gateway: string;
  brand: string;
  last4: string;
  expMonth: number;
  expYear: number;
  customerEmail: string | null;
  createdAt: Date;
}

/** The test gateway's own records: what a real gateway would keep on its side. */
export function createTestGatewayStore(db: Db) {
  const charges = db.collection<SandboxCharge>(collections.sandboxCharges);
  const cards = db.collection<SandboxCard>(collections.sandboxCards);
  return {
    /** Records a charge once per key; a replay returns the first record (gateway idempotency). */
    async record(charge: SandboxCharge): Promise<SandboxCharge> {
      try {
        await charges.insertOne(charge);
        return charge;
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
        const first = await charges.findOne({ _id: charge._id });
        if (!first) throw error;
        return first;
      }
    },
    find: (key: string) => charges.findOne({ _id: key }),
    countForToken: (gateway: string, token: string) => charges.countDocuments({ gateway, token }),

    saveCard: async (card: SandboxCard) => {
      await cards.insertOne(card);
    },
    /** One account's cards on one test gateway, in token order, `limit` at a time after `after`. */
    listCards: (accountId: string, gateway: string, after: string | null, limit: number) =>
      cards
        .find({ accountId, gateway, ...(after === null ? {} : { _id: { $gt: after } }) })
        .sort({ _id: 1 })
        .limit(limit)
        .toArray(),
  };
}

export type TestGatewayStore = ReturnType<typeof createTestGatewayStore>;
