import type { Db } from 'mongodb';
import type { ChurnOutcome, LinkKind, PageLocale } from '../domain/links.js';
import type { CancelOffer } from '../domain/settings.js';
import { collections } from './collections.js';
import type { CustomerRefs } from './customer-refs.js';
import { isDuplicateKey } from './mongo.js';
import type { PaymentMethodType } from '../domain/gateway-kinds.js';

/** What a card-update link was minted for. */
export interface CardUpdateData {
  paymentMethodToken: string;
  customerEmail: string | null;
  returnUrl: string | null;
  transactionId: string | null;
  /** The page's language when the merchant chose one (else the customer's browser decides). */
  locale?: PageLocale | null;
}

/** What a cancel-flow link was minted for; `amount` and `currency` render the offers. */
export interface CancelFlowData {
  customerId: string;
  customerEmail: string | null;
  subscriptionId: string | null;
  amount: number | null;
  currency: string;
  returnUrl: string | null;
  /** The page's language when the merchant chose one (else the customer's browser decides). */
  locale?: PageLocale | null;
}

interface LinkBase {
  _id: string; // SHA-256 of the token: the token itself is never stored
  accountId: string;
  expiresAt: Date;
  /** Informational copy of the consumption time; the linkConsumptions insert is what decides. */
  consumedAt: Date | null;
  /** Keys the HMAC of the page's form tokens (CSRF); never leaves the server. */
  formSecret: string;
  createdAt: Date;
}

/** A hosted link as stored. */
export type LinkDoc =
  | (LinkBase & { kind: Extract<LinkKind, 'card_update'>; data: CardUpdateData })
  | (LinkBase & { kind: Extract<LinkKind, 'cancel_flow'>; data: CancelFlowData });

/** What using a link decided: recorded with the consumption so its effects can be completed later. */
export type LinkOutcome =
  | {
      kind: 'card_updated';
      newPaymentMethodToken: string;
      eligibleGateways: string[];
      /** Absent on uses recorded before it existed: a card. */
      paymentMethodType?: PaymentMethodType;
    }
  | { kind: 'churn'; outcome: ChurnOutcome; offer: CancelOffer | null };

/** The one use of a link. Its unique `_id` (the link's hash) makes consumption exactly-once. */
export interface ConsumptionDoc {
  _id: string;
  accountId: string;
  at: Date;
  /** The event the use emits; stable, so completing the effects again cannot send a second one. */
  eventId: string;
  outcome: LinkOutcome;
  effectsDoneAt: Date | null;
}

/** Hosted links (hashed) and their consumptions. FerretDB has no atomic update we could rely on: inserts decide. */
export function createLinkStore(db: Db) {
  const links = db.collection<LinkDoc>(collections.links);
  const consumptions = db.collection<ConsumptionDoc>(collections.linkConsumptions);

  async function remove(hashes: string[]): Promise<number> {
    await consumptions.deleteMany({ _id: { $in: hashes } });
    return (await links.deleteMany({ _id: { $in: hashes } })).deletedCount;
  }

  return {
    async insert(link: LinkDoc): Promise<void> {
      await links.insertOne(link);
    },

    /** The link with this hash and its consumption, if any. */
    async find(hash: string): Promise<{ link: LinkDoc; consumption: ConsumptionDoc | null } | null> {
      const link = await links.findOne({ _id: hash });
      if (!link) return null;
      return { link, consumption: await consumptions.findOne({ _id: hash }) };
    },

    /** Consumes a link once: true for the one caller whose insert wins, false for every other. */
    async consume(consumption: ConsumptionDoc): Promise<boolean> {
      try {
        await consumptions.insertOne(consumption);
      } catch (error) {
        if (isDuplicateKey(error)) return false;
        throw error;
      }
      await links.updateOne({ _id: consumption._id }, { $set: { consumedAt: consumption.at } });
      return true;
    },

    async markEffectsDone(hash: string, at: Date): Promise<void> {
      await consumptions.updateOne({ _id: hash }, { $set: { effectsDoneAt: at } });
    },

    /**
     * The account's links minted for the customer (by email, customer id, card token or one of their
     * recoveries) and their uses. Scans the account's links: export and erasure only.
     */
    async ofCustomer(
      accountId: string,
      who: CustomerRefs,
    ): Promise<Array<{ link: LinkDoc; consumption: ConsumptionDoc | null }>> {
      const found = await links
        .find({
          accountId,
          $or: [
            { 'data.customerEmail': { $in: who.emails } },
            { 'data.customerId': { $in: [...who.customerIds, ...who.emails] } },
            { 'data.paymentMethodToken': { $in: who.tokens } },
            { 'data.transactionId': { $in: who.transactionIds } },
          ],
        })
        .toArray();
      const used = await consumptions.find({ _id: { $in: found.map((l) => l._id) } }).toArray();
      return found.map((link) => ({ link, consumption: used.find((c) => c._id === link._id) ?? null }));
    },

    /** Deletes links and their uses (erasure); returns how many links were there. */
    remove,

    /** Deletes the account's links that expired before `cutoff`, with their uses (data retention). */
    async purgeExpiredBefore(accountId: string, cutoff: Date): Promise<number> {
      const expired = await links
        .find({ accountId, expiresAt: { $lt: cutoff } }, { projection: { _id: 1 } })
        .toArray();
      return remove(expired.map((l) => l._id));
    },
  };
}
