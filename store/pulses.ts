import type { Db } from 'mongodb';
import { randomUUID } from 'node:crypto';
import type { NamedPulse } from '../domain/report-matching.js';
import { sha256 } from '../runtime/crypto.js';
import { collections } from './collections.js';
import { inMode } from './modes.js';
import { isDuplicateKey } from './mongo.js';

/** A payment that succeeded on the first try, logged by the merchant (the baseline for lift). */
export interface PulseDoc {
  _id: string; // the service-assigned transactionId
  accountId: string;
  merchantTransactionId: string | null;
  amount: number;
  currency: string;
  customerEmail: string | null;
  /**
   * The failed payment this one pays, as the merchant named it: the recovery's stored id (the UUID), or
   * null when the merchant said it pays none. Absent when the merchant did not say: the report then
   * matches the pulse to a failure by its customer's email.
   */
  paysTransactionId?: string | null;
  /** Logged while the account was in test mode: the sandbox's, counted only by its reports (absent: live). */
  isSimulated?: true;
  occurredAt: Date;
  createdAt: Date;
}

/** Organic successes. Re-sending a merchant transaction id returns the first record's service id. */
export function createPulseStore(db: Db) {
  const pulses = db.collection<PulseDoc>(collections.pulses);
  return {
    /** How many organic successes the account logged in [from, to), in the mode given (`simulated`). */
    countBetween(accountId: string, simulated: boolean, from: Date, to: Date): Promise<number> {
      return pulses.countDocuments({
        accountId,
        occurredAt: { $gte: from, $lt: to },
        ...inMode<PulseDoc>(simulated),
      });
    },

    /**
     * When each of these customers paid on their own in [from, to), by email: the pulses that do not say
     * which failed payment they pay, if any; in the mode given (`simulated`).
     */
    async paidBy(
      accountId: string,
      simulated: boolean,
      emails: string[],
      from: Date,
      to: Date,
    ): Promise<Map<string, Date[]>> {
      const paid = new Map<string, Date[]>();
      if (emails.length === 0) return paid;
      const found = pulses.find(
        {
          accountId,
          customerEmail: { $in: emails },
          occurredAt: { $gte: from, $lt: to },
          paysTransactionId: { $exists: false },
          ...inMode<PulseDoc>(simulated),
        },
        { projection: { customerEmail: 1, occurredAt: 1 } },
      );
      for await (const p of found) {
        const list = paid.get(p.customerEmail ?? '') ?? [];
        list.push(p.occurredAt);
        paid.set(p.customerEmail ?? '', list);
      }
      return paid;
    },

    /** The account's pulses in [from, to) that name the failed payment they pay, in the mode given. */
    async namedBetween(accountId: string, simulated: boolean, from: Date, to: Date): Promise<NamedPulse[]> {
      const found = await pulses
        .find(
          {
            accountId,
            occurredAt: { $gte: from, $lt: to },
            paysTransactionId: { $exists: true, $ne: null },
            ...inMode<PulseDoc>(simulated),
          },
          { projection: { paysTransactionId: 1, occurredAt: 1 } },
        )
        .toArray();
      return found.flatMap((p) =>
        p.paysTransactionId ? [{ pays: p.paysTransactionId, at: p.occurredAt }] : [],
      );
    },

    /** The account's pulses of these customers, oldest first (a customer's data export). */
    ofCustomer(accountId: string, emails: string[]): Promise<PulseDoc[]> {
      return pulses
        .find({ accountId, customerEmail: { $in: emails } })
        .sort({ occurredAt: 1 })
        .toArray();
    },

    /** Deletes the account's pulses of payments before `cutoff` (data retention). */
    async purgeBefore(accountId: string, cutoff: Date): Promise<number> {
      return (await pulses.deleteMany({ accountId, occurredAt: { $lt: cutoff } })).deletedCount;
    },

    /** Erasure: the customers' pulses carry the pseudonym instead of their email; returns how many. */
    async pseudonymise(accountId: string, emails: string[], pseudonym: string): Promise<number> {
      if (emails.length === 0) return 0;
      const result = await pulses.updateMany(
        { accountId, customerEmail: { $in: emails } },
        { $set: { customerEmail: pseudonym } },
      );
      return result.modifiedCount;
    },

    async log(input: Omit<PulseDoc, '_id' | 'createdAt'>, now: Date): Promise<PulseDoc> {
      // A merchant id maps to one deterministic service id, so the unique _id deduplicates re-sends; the
      // sandbox's ids are its own (a merchant's live ids may start over where its test ids did).
      const key = input.isSimulated
        ? `${input.accountId}:sandbox:${input.merchantTransactionId}`
        : `${input.accountId}:${input.merchantTransactionId}`;
      const _id = input.merchantTransactionId
        ? `pulse_${sha256(key).slice(0, 32)}`
        : `pulse_${randomUUID().replaceAll('-', '')}`;
      const doc: PulseDoc = { _id, ...input, createdAt: now };
      try {
        await pulses.insertOne(doc);
        return doc;
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
        return (await pulses.findOne({ _id })) ?? doc;
      }
    },
  };
}
