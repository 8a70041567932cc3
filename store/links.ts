import type { Db } from 'mongodb';
import type { ChurnOutcome, LinkKind, PageLocale } from '../domain/links.js';
import type { CancelOffer } from '../domain/settings.js';
import { batchSize } from './batches.js';
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
      /** The saved card as the page named it (brand, last four digits): a resubmitted form shows it again. */
      card?: { brand: string; last4: string };
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
  /**
   * Digest of the hosted form submission (or the gateway's card-form session) that made the use, so that
   * the same submission sent again (a second click during a slow save) is answered with its result.
   * Absent on uses made through the API, and on those recorded before it existed.
   */
  formDigest?: string;
}

/** Hosted links (hashed) and their consumptions. FerretDB has no atomic update we could rely on: inserts decide. */
export function createLinkStore(db: Db) {
  const links = db.collection<LinkDoc>(collections.links);
  const consumptions = db.collection<ConsumptionDoc>(collections.linkConsumptions);

  /**
   * Deletes links and their uses. The uses go first, so that a run interrupted in between leaves no use
   * without its link, and again after the links: a use recorded while the links were being deleted either
   * went in before that second delete, or finds its link gone and takes itself back (`consume`).
   */
  async function remove(hashes: string[]): Promise<number> {
    await consumptions.deleteMany({ _id: { $in: hashes } });
    const removed = (await links.deleteMany({ _id: { $in: hashes } })).deletedCount;
    await consumptions.deleteMany({ _id: { $in: hashes } });
    return removed;
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

    /**
     * Consumes a link once: true for the one caller whose insert wins, false for every other, and false when
     * the link is gone (its customer erased, or it was purged) by the time the use is recorded: the use is
     * taken back then, so no record of it (nor of the card it saved) outlives the link.
     */
    async consume(consumption: ConsumptionDoc): Promise<boolean> {
      try {
        await consumptions.insertOne(consumption);
      } catch (error) {
        if (isDuplicateKey(error)) return false;
        throw error;
      }
      const marked = await links.updateOne(
        { _id: consumption._id },
        { $set: { consumedAt: consumption.at } },
      );
      if (marked.matchedCount === 1) return true;
      await consumptions.deleteOne({ _id: consumption._id });
      return false;
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

    /**
     * Deletes, in every account, the uses whose link is gone (data retention): one recorded by an earlier
     * version while its link was being erased, or left by a run of `remove` interrupted before its last
     * delete. A use names the card saved through the link; without the link nothing leads to it. Looks at
     * the uses in id order, a batch at a time, from the one after `after` (null: the first), and tells
     * `onBatch` the last id of each batch and how many of it it deleted: a long scan says it is alive, and
     * one cut short goes on from there.
     */
    async purgeOrphanedUses(
      after: string | null = null,
      onBatch: (last: string, deleted: number) => void = () => {},
    ): Promise<number> {
      let deleted = 0;
      let from = after;
      for (;;) {
        const batch = await consumptions
          .find(from === null ? {} : { _id: { $gt: from } }, { projection: { _id: 1 } })
          .sort({ _id: 1 })
          .limit(batchSize)
          .toArray();
        const ids = batch.map((use) => use._id);
        const last = ids.at(-1);
        if (last === undefined) return deleted;
        const live = await links.find({ _id: { $in: ids } }, { projection: { _id: 1 } }).toArray();
        const linked = new Set(live.map((link) => link._id));
        const orphans = ids.filter((id) => !linked.has(id));
        const gone =
          orphans.length > 0 ? (await consumptions.deleteMany({ _id: { $in: orphans } })).deletedCount : 0;
        deleted += gone;
        onBatch(last, gone);
        if (ids.length < batchSize) return deleted;
        from = last;
      }
    },
  };
}
