import type { Db } from 'mongodb';
import type { RecommendedAction } from '../domain/declines.js';
import type { Prediction, RecoveryState, Strategy } from '../domain/recovery.js';
import { statusOf } from '../domain/recovery.js';
import type { RecoveryRequest } from '../domain/recovery-request.js';
import { sha256 } from '../runtime/crypto.js';
import { collections } from './collections.js';
import { isDuplicateKey } from './mongo.js';
import { sequence, type SequenceDoc } from './sequence.js';

/** One attempt as the read model shows it. */
export interface AttemptRecord {
  no: number;
  at: Date;
  gateway: string;
  role: 'primary' | 'backup_gateway' | 'fallback_token';
  outcome: 'approved' | 'declined' | 'ambiguous' | 'not_charged';
  declineCode: string | null;
  gatewayTransactionId: string | null;
}

/** The read model of one recovery: status lookups, paywall and reports read it, never Temporal. */
export interface RecoveryDoc {
  _id: string; // transactionId (UUID)
  accountId: string;
  workflowId: string;
  idempotencyKey: string | null;
  paymentMethodToken: string;
  cardKey: string;
  amount: number;
  currency: string;
  customerEmail: string | null;
  originalDeclineCode: string | null;
  isTrialConversion: boolean;
  isSimulated: boolean;
  /** The request as validated: a resumed start needs all of it. */
  request: RecoveryRequest;
  /** Temporal could not be reached to start the workflow; a retry with the same key resumes it. */
  startFailed: boolean;
  state: RecoveryState;
  /** The id the merchant was given: the UUID, or FAILED_API_<uuid> after a synchronous failure. */
  publicId: string;
  strategyUsed: Strategy | null;
  attempts: AttemptRecord[];
  lastDeclineCode: string | null;
  recommendedAction: RecommendedAction | null;
  recommendedActionReason: string | null;
  nextAttemptAt: Date | null;
  recoveredAt: Date | null;
  gatewayTransactionId: string | null;
  ai: Prediction | null;
  createdAt: Date;
  updatedAt: Date;
}

/** Fields the workflow may change as a recovery moves. */
export type RecoveryPatch = Partial<
  Pick<
    RecoveryDoc,
    | 'state'
    | 'publicId'
    | 'strategyUsed'
    | 'lastDeclineCode'
    | 'recommendedAction'
    | 'recommendedActionReason'
    | 'nextAttemptAt'
    | 'recoveredAt'
    | 'gatewayTransactionId'
    | 'ai'
    | 'paymentMethodToken'
    | 'startFailed'
  >
>;

interface KeyDoc {
  _id: string; // `${accountId}:${idempotencyKey}`
  transactionId: string;
  createdAt: Date;
}

interface VelocityDoc extends SequenceDoc {
  // _id `${accountId}:${cardKey}:${amount}:${currency}:${n}`: the n-th claim of that card and amount
  transactionId: string;
  at: Date;
}

/** The last block of a card: `_id` is the card key. */
export interface BlockedCardDoc {
  _id: string;
  transactionId: string;
  declineCode: string;
  at: Date;
}

/** The n-th recovery of one customer: `_id` is `${accountId}:${hash of email}:${n}`. */
interface CustomerEntryDoc extends SequenceDoc {
  transactionId: string;
}

const maxPerCustomer = 500;
const customerPrefix = (accountId: string, email: string) => `${accountId}:${sha256(email).slice(0, 32)}`;

export const velocityWindowMs = 5 * 60_000;

/** Recoveries, their idempotency keys and the 5-minute velocity rule. */
export function createRecoveryStore(db: Db) {
  const recoveries = db.collection<RecoveryDoc>(collections.recoveries);
  const keys = db.collection<KeyDoc>(collections.idempotencyKeys);
  const velocity = db.collection<VelocityDoc>(collections.velocity);
  const velocityClaims = sequence(velocity);
  const blocked = db.collection<BlockedCardDoc>(collections.blockedCards);
  const customerIndex = sequence(db.collection<CustomerEntryDoc>(collections.customerRecoveries));
  const velocityPrefix = (accountId: string, cardKey: string, amount: number, currency: string) =>
    `${accountId}:${cardKey}:${amount}:${currency}`;

  return {
    /** Claims an idempotency key for a new transaction; returns the existing transaction id if taken. */
    async claimKey(accountId: string, key: string, transactionId: string, now: Date): Promise<string | null> {
      try {
        await keys.insertOne({ _id: `${accountId}:${key}`, transactionId, createdAt: now });
        return null;
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
        return (await keys.findOne({ _id: `${accountId}:${key}` }))?.transactionId ?? null;
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

    async create(input: {
      transactionId: string;
      accountId: string;
      workflowId: string;
      cardKey: string;
      request: RecoveryRequest;
      isSimulated: boolean;
      now: Date;
    }): Promise<RecoveryDoc> {
      const { request: r, now } = input;
      const doc: RecoveryDoc = {
        _id: input.transactionId,
        accountId: input.accountId,
        workflowId: input.workflowId,
        idempotencyKey: r.idempotencyKey ?? null,
        paymentMethodToken: r.paymentMethodToken,
        cardKey: input.cardKey,
        amount: r.amount,
        currency: r.currency,
        customerEmail: r.customerEmail ?? null,
        originalDeclineCode: r.originalDeclineCode ?? null,
        isTrialConversion: r.isTrialConversion,
        isSimulated: input.isSimulated,
        request: r,
        startFailed: false,
        state: 'processing',
        publicId: input.transactionId,
        strategyUsed: null,
        attempts: [],
        lastDeclineCode: r.originalDeclineCode ?? null,
        recommendedAction: null,
        recommendedActionReason: null,
        nextAttemptAt: null,
        recoveredAt: null,
        gatewayTransactionId: null,
        ai: null,
        createdAt: now,
        updatedAt: now,
      };
      await recoveries.insertOne(doc);
      if (doc.customerEmail) {
        const email = doc.customerEmail;
        await customerIndex.claim(
          customerPrefix(doc.accountId, email),
          () => true,
          () => ({ transactionId: doc._id }),
        );
      }
      return doc;
    },

    /** Removes a recovery whose workflow certainly never started, so nothing refers to it. */
    discard: (transactionId: string) => recoveries.deleteOne({ _id: transactionId, state: 'processing' }),

    /** Finds an account's recovery by either form of its id (UUID or FAILED_API_<uuid>). */
    find(accountId: string, transactionId: string): Promise<RecoveryDoc | null> {
      return recoveries.findOne({ _id: transactionId.replace(/^FAILED_API_/, ''), accountId });
    },

    async findByKey(accountId: string, key: string): Promise<RecoveryDoc | null> {
      const claimed = await keys.findOne({ _id: `${accountId}:${key}` });
      return claimed ? recoveries.findOne({ _id: claimed.transactionId, accountId }) : null;
    },

    async update(transactionId: string, patch: RecoveryPatch, now: Date): Promise<void> {
      await recoveries.updateOne({ _id: transactionId }, { $set: { ...patch, updatedAt: now } });
      if (patch.state === 'blocked') {
        // Remembered per card, by _id, for the risk screen of later recoveries.
        const doc = await recoveries.findOne(
          { _id: transactionId },
          { projection: { cardKey: 1, lastDeclineCode: 1 } },
        );
        if (doc)
          await blocked.replaceOne(
            { _id: doc.cardKey },
            { transactionId, declineCode: doc.lastDeclineCode ?? 'fraudulent', at: now },
            { upsert: true },
          );
      }
    },

    /** Appends an attempt once (a retried activity does not add it twice). */
    async addAttempt(transactionId: string, attempt: AttemptRecord, now: Date): Promise<void> {
      await recoveries.updateOne(
        { _id: transactionId, 'attempts.no': { $ne: attempt.no } },
        {
          $push: { attempts: attempt },
          $set: { updatedAt: now, ...(attempt.declineCode ? { lastDeclineCode: attempt.declineCode } : {}) },
        },
      );
    },

    /** Whether this card was blocked (fraud, lost, stolen…) on this account since `since`. */
    /** The latest block of this card (cardKeys are per account) since `since`, if any. */
    async blockedCard(cardKey: string, since: Date): Promise<BlockedCardDoc | null> {
      const found = await blocked.findOne({ _id: cardKey });
      return found && found.at >= since ? found : null;
    },

    /** A customer's recoveries (paywall, proactive retention). */
    /** A customer's recoveries, oldest first (paywall, proactive retention), through the customer index. */
    async forCustomer(accountId: string, customerEmail: string): Promise<RecoveryDoc[]> {
      const prefix = customerPrefix(accountId, customerEmail);
      const entries = await customerIndex.readDown(
        prefix,
        await customerIndex.highest(prefix),
        () => true,
        maxPerCustomer,
      );
      const docs = await Promise.all(
        entries.map((e) => recoveries.findOne({ _id: e.transactionId, accountId })),
      );
      return docs
        .filter((d): d is RecoveryDoc => d !== null)
        .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
    },

    /** An account's recoveries waiting for a timed retry on this token (a card update retries them at once). */
    queuedOnToken(accountId: string, paymentMethodToken: string): Promise<RecoveryDoc[]> {
      return recoveries.find({ accountId, paymentMethodToken, state: 'queued' }).toArray();
    },
  };
}

export type RecoveryStore = ReturnType<typeof createRecoveryStore>;

/** The spec's status record, from the read model. */
export function statusRecord(doc: RecoveryDoc) {
  const status = statusOf(doc.state);
  const recovered = doc.state === 'succeeded';
  return {
    transactionId: doc.publicId,
    status,
    state: doc.state,
    recovered,
    amount: doc.amount,
    currency: doc.currency,
    recoveredAt: doc.recoveredAt?.toISOString() ?? null,
    strategyUsed: doc.strategyUsed ?? (doc.state === 'holdout' ? 'holdout' : 'primary'),
    attemptCount: doc.attempts.filter((a) => a.outcome !== 'not_charged').length,
    lastDeclineCode: doc.lastDeclineCode ?? '',
    ...(doc.nextAttemptAt && doc.state === 'queued'
      ? { nextAttemptAt: doc.nextAttemptAt.toISOString() }
      : {}),
    ...(doc.state === 'holdout' ? { holdout: true } : {}),
    ...(recovered
      ? {}
      : doc.recommendedAction
        ? {
            recommendedAction: doc.recommendedAction,
            recommendedActionReason: doc.recommendedActionReason ?? '',
          }
        : {}),
    ...(doc.isSimulated ? { isSimulated: true } : {}),
  };
}
