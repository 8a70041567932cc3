import type { Db } from 'mongodb';
import { collections } from './collections.js';
import { isDuplicateKey } from './mongo.js';
import { erasedToken } from './recoveries.js';
import { sequence, type SequenceDoc } from './sequence.js';

interface KeyDoc {
  _id: string; // `${accountId}:${idempotencyKey}`
  transactionId: string;
  createdAt: Date;
}

/** Who holds an idempotency key, and since when. */
export type KeyClaim = Pick<KeyDoc, 'transactionId' | 'createdAt'>;

interface VelocityDoc extends SequenceDoc {
  // _id `${accountId}:${cardKey}:${amount}:${currency}:${n}`: the n-th claim of that card and amount
  transactionId: string;
  at: Date;
}

export const velocityWindowMs = 5 * 60_000;

/**
 * What execute claims before it starts a recovery: the idempotency key (kept as long as the record, at
 * least 90 days) and "this card and amount" for 5 minutes. Both are unique inserts read by `_id`, so
 * concurrent duplicates resolve to exactly one winner on MongoDB and FerretDB alike.
 */
export function createIntakeClaims(db: Db) {
  const keys = db.collection<KeyDoc>(collections.idempotencyKeys);
  const velocity = db.collection<VelocityDoc>(collections.velocity);
  const velocityClaims = sequence(velocity);
  const velocityPrefix = (accountId: string, cardKey: string, amount: number, currency: string) =>
    `${accountId}:${cardKey}:${amount}:${currency}`;

  return {
    /** Claims an idempotency key for a new transaction; returns the claim holding it if taken. */
    async claimKey(
      accountId: string,
      key: string,
      transactionId: string,
      now: Date,
    ): Promise<KeyClaim | null> {
      const _id = `${accountId}:${key}`;
      for (;;) {
        try {
          await keys.insertOne({ _id, transactionId, createdAt: now });
          return null;
        } catch (error) {
          if (!isDuplicateKey(error)) throw error;
          const held = await keys.findOne({ _id });
          if (held) return { transactionId: held.transactionId, createdAt: held.createdAt };
          // Released between the refused insert and the read: it is free again, so claim it again.
        }
      }
    },

    releaseKey: (accountId: string, key: string) => keys.deleteOne({ _id: `${accountId}:${key}` }),

    /**
     * Claims "this card and amount" for 5 minutes; returns the transaction holding it if within the window.
     * Claims are numbered per card and amount (see `sequence`): claim n+1 is inserted only after claim n
     * was seen expired, and only once — exact under any concurrency, by `_id` alone.
     */
    async claimVelocity(
      accountId: string,
      cardKey: string,
      amount: number,
      currency: string,
      transactionId: string,
      now: Date,
    ): Promise<string | null> {
      let held: string | null = null;
      await velocityClaims.claim(
        velocityPrefix(accountId, cardKey, amount, currency),
        async (highest) => {
          const latest =
            highest > 0
              ? await velocityClaims.get(velocityPrefix(accountId, cardKey, amount, currency), highest)
              : null;
          held =
            latest && now.getTime() - latest.at.getTime() < velocityWindowMs ? latest.transactionId : null;
          return held === null;
        },
        () => ({ transactionId, at: now }),
      );
      return held;
    },

    /**
     * Forgets which transactions claimed the card and amount (a customer's erasure): the claims keep their
     * numbers, so later claims stay exact, and lose their transaction; a claim still within its 5 minutes
     * keeps its time and refuses a duplicate as before (naming the transaction `erased`), an older one
     * loses its time too. Only the claims whose transaction is `erasable` (the erased recoveries, or one
     * deleted since) and those already erased: a recovery admitted while the erasure ran keeps its claim.
     * Returns how many claims changed.
     */
    async forgetVelocity(
      accountId: string,
      cardKey: string,
      amount: number,
      currency: string,
      erasable: (transactionId: string) => Promise<boolean>,
      now: Date,
    ): Promise<number> {
      const prefix = velocityPrefix(accountId, cardKey, amount, currency);
      const all = await velocityClaims.readDown(
        prefix,
        await velocityClaims.highest(prefix),
        () => true,
        Infinity,
      );
      let changed = 0;
      for (const c of all) {
        if (c.transactionId !== erasedToken && !(await erasable(c.transactionId))) continue;
        const at = now.getTime() - c.at.getTime() < velocityWindowMs ? c.at : new Date(0);
        if (c.transactionId === erasedToken && at.getTime() === c.at.getTime()) continue;
        await velocity.updateOne({ _id: c._id }, { $set: { transactionId: erasedToken, at } });
        changed++;
      }
      return changed;
    },

    /** Gives the claim back when the request it was made for is refused (only that transaction's claim). */
    async releaseVelocity(
      accountId: string,
      cardKey: string,
      amount: number,
      currency: string,
      transactionId: string,
    ): Promise<void> {
      const prefix = velocityPrefix(accountId, cardKey, amount, currency);
      const recent = await velocityClaims.readDown(
        prefix,
        await velocityClaims.highest(prefix),
        () => true,
        4,
      );
      const mine = recent.find((c) => c.transactionId === transactionId);
      if (mine) await velocity.deleteOne({ _id: mine._id });
    },
  };
}

export type IntakeClaims = ReturnType<typeof createIntakeClaims>;
