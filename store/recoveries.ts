import type { Db, Filter } from 'mongodb';
import type { ConnectorPlatform, ConnectorSource, WriteBackOutcome } from '../domain/connectors.js';
import { classifyDecline, type RecommendedAction } from '../domain/declines.js';
import {
  recoveryStates,
  statusOf,
  stillOwed,
  type Prediction,
  type RecoveryState,
  type StopReason,
  type Strategy,
} from '../domain/recovery.js';
import type { RecoveryRequest } from '../domain/recovery-request.js';
import { sha256 } from '../runtime/crypto.js';
import { collections } from './collections.js';
import type { CustomerRefs } from './customer-refs.js';
import { inMode, isOfMode } from './modes.js';
import { isDuplicateKey, upsert } from './mongo.js';
import { listedAfter, newestFirst, type PagePlace } from './paging.js';
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
  /** The billing platform that reported the failure, when it came through a connector. */
  connector?: ConnectorSource;
  /** What recording the recovered payment on the platform's invoice did (connector recoveries). */
  writeBack?: WriteBackOutcome | 'failed';
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
  /**
   * Drawn into a Proof Mode group at intake (the control's state is `holdout`): only these take part in the
   * report's comparison. Absent when Proof Mode was off, its request blocked it at intake (a decline code
   * that stops at once, a simulated block), or it was screened before this mark was recorded.
   */
  inProofMode?: boolean;
  /** When it reached its final state; unlike updatedAt, not moved by later writes (write-back, erasure). */
  endedAt?: Date;
  /**
   * A recovery that ended without the payment — a Proof Mode control (`holdout`: Recoup made no attempt),
   * or one that failed, was blocked or stopped — whose invoice the billing platform reports paid, or that
   * the merchant stopped as `paid_elsewhere` after it ended: when it was said. The customer no longer owes
   * it, and the report counts the payment collected.
   */
  paidOnTheirOwnAt?: Date;
  /**
   * A recovery that ended without the payment (failed, blocked, a Proof Mode control) that the merchant
   * stopped as `not_owed` after it ended: when. The customer no longer owes it; the payment stays uncollected.
   */
  writtenOffAt?: Date;
  /**
   * A stop asked while the recovery ran (the merchant's, a pulse naming it, a billing platform's notice),
   * recorded before its workflow is asked: the latest reason. An end without the payment is settled as it
   * says, and a lookup of an ambiguous charge only reads from then on.
   */
  stopAsked?: StopReason;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * Who decided the id of a recovery's answer, when execute answered late (see claimAnswer): `processing` —
 * 202 under the bare id; `failure` — the first phase failed first, under FAILED_API_.
 */
export type AnswerClaim = 'processing' | 'failure';

interface AnswerClaimDoc {
  _id: string; // transactionId
  accountId: string;
  as: AnswerClaim;
  at: Date;
}

/** Fields the workflow may change as a recovery moves. */
export type RecoveryPatch = Partial<
  Pick<
    RecoveryDoc,
    | 'state'
    | 'publicId'
    | 'amount'
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
    | 'writeBack'
    | 'inProofMode'
    | 'endedAt'
    | 'paidOnTheirOwnAt'
    | 'writtenOffAt'
  >
>;

/** The last block of a card: `_id` is the card key. */
export interface BlockedCardDoc {
  _id: string;
  transactionId: string;
  declineCode: string;
  at: Date;
}

/** What the summary report reads of a recovery; the breakdown also reads how it went. */
const summaryFields = [
  '_id',
  'state',
  'amount',
  'currency',
  'customerEmail',
  'createdAt',
  'recoveredAt',
  'endedAt',
  'inProofMode',
  'paidOnTheirOwnAt',
] as const;
const breakdownFields = [...summaryFields, 'originalDeclineCode', 'strategyUsed', 'attempts'] as const;

/** The n-th recovery of one customer: `_id` is `${accountId}:${hash of email}:${n}`. */
interface CustomerEntryDoc extends SequenceDoc {
  /** null once the customer was erased: the entry no longer leads to the recovery. */
  transactionId: string | null;
}

const maxPerCustomer = 500;

/** How many customer index entries a walk through all of a customer's recoveries reads at a time. */
const customerBatch = 100;

/** States a recovery never leaves. */
const endedStates = recoveryStates.filter((s) => statusOf(s) !== 'unknown');

/** What an erased customer's payment-method tokens (and the card keys made from them) read as. */
export const erasedToken = 'erased';

/**
 * Ended recoveries that data retention may delete: those whose payment is no longer owed (`stillOwed`:
 * paid by Recoup or elsewhere, written off, or paid on the customer's own after it ended unpaid, a Proof
 * Mode control included), and those of an erased customer: the paywall no longer reaches them, and no one
 * is left to collect them from.
 */
const done: Filter<RecoveryDoc> = {
  $or: [
    { state: { $in: endedStates.filter((state) => !stillOwed({ state })) } },
    { state: { $in: endedStates }, paidOnTheirOwnAt: { $exists: true } },
    { state: { $in: endedStates }, writtenOffAt: { $exists: true } },
    { state: { $in: endedStates }, paymentMethodToken: erasedToken },
  ],
};

/**
 * Ended recoveries settled before `cutoff`: when the customer paid on their own or the merchant wrote the
 * payment off after it ended, else when the recovery ended (an erased one still owed included). Not
 * updatedAt, which later writes (a write-back, an erasure) move; only a recovery that ended before endedAt
 * was recorded falls back to it.
 */
const settledBefore = (cutoff: Date): Filter<RecoveryDoc> => {
  const unsettled = { paidOnTheirOwnAt: { $exists: false }, writtenOffAt: { $exists: false } };
  return {
    $or: [
      { paidOnTheirOwnAt: { $lt: cutoff } },
      { writtenOffAt: { $lt: cutoff } },
      { ...unsettled, endedAt: { $lt: cutoff } },
      { ...unsettled, endedAt: { $exists: false }, updatedAt: { $lt: cutoff } },
    ],
  };
};

const customerPrefix = (accountId: string, email: string) => `${accountId}:${sha256(email).slice(0, 32)}`;

/** The UUID a recovery is stored under, from either form of its id (UUID or FAILED_API_<uuid>). */
const storedIdOf = (transactionId: string) => transactionId.replace(/^FAILED_API_/, '');

/** The read model of recoveries, with the customer index and blocked cards that hang off it. */
export function createRecoveryStore(db: Db) {
  const recoveries = db.collection<RecoveryDoc>(collections.recoveries);
  const keys = db.collection<{ _id: string; transactionId: string }>(collections.idempotencyKeys);
  const blocked = db.collection<BlockedCardDoc>(collections.blockedCards);
  const answerClaims = db.collection<AnswerClaimDoc>(collections.answerClaims);
  const customerEntries = db.collection<CustomerEntryDoc>(collections.customerRecoveries);
  const customerIndex = sequence(customerEntries, { remember: true });

  /** The customer index entries of an email, newest first, up to `limit`. */
  async function customerEntriesOf(accountId: string, email: string, limit: number) {
    const prefix = customerPrefix(accountId, email);
    return customerIndex.readDown(prefix, await customerIndex.highest(prefix), () => true, limit);
  }

  /**
   * A recovery of this account, or null. Looked up by _id alone and checked here: the embedded FerretDB
   * answers a filter of _id alone from an index and scans the collection for any other filter.
   */
  async function accountsRecovery(accountId: string, transactionId: string): Promise<RecoveryDoc | null> {
    const doc = await recoveries.findOne({ _id: transactionId });
    return doc?.accountId === accountId ? doc : null;
  }

  /** Indexes the recovery under its customer (paywall, retention) if `decide` allows; not without email. */
  async function indexUnderCustomer(
    doc: RecoveryDoc,
    decide: (prefix: string, highest: number) => boolean | Promise<boolean>,
  ): Promise<void> {
    if (!doc.customerEmail) return;
    const prefix = customerPrefix(doc.accountId, doc.customerEmail);
    await customerIndex.claim(
      prefix,
      (highest) => decide(prefix, highest),
      () => ({ transactionId: doc._id }),
    );
  }

  /** An account's recoveries of one mode whose failure falls in [from, to), with only `fields` read. */
  function createdIn<F extends keyof RecoveryDoc>(
    accountId: string,
    simulated: boolean,
    from: Date,
    to: Date,
    fields: readonly F[],
  ): Promise<Array<Pick<RecoveryDoc, F>>> {
    return recoveries
      .find(
        { accountId, createdAt: { $gte: from, $lt: to }, ...inMode<RecoveryDoc>(simulated) },
        { projection: Object.fromEntries(fields.map((f) => [f, 1])) },
      )
      .toArray();
  }

  return {
    /**
     * Stores a new recovery and indexes it under its customer; null when a recovery of this transaction id
     * exists already (two retries taking over one abandoned idempotency key: the unique `_id` picks one).
     */
    async create(input: {
      transactionId: string;
      accountId: string;
      workflowId: string;
      cardKey: string;
      request: RecoveryRequest;
      isSimulated: boolean;
      connector?: ConnectorSource;
      now: Date;
    }): Promise<RecoveryDoc | null> {
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
        ...(input.connector ? { connector: input.connector } : {}),
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
      try {
        await recoveries.insertOne(doc);
      } catch (error) {
        if (isDuplicateKey(error)) return null;
        throw error;
      }
      await indexUnderCustomer(doc, () => true);
      return doc;
    },

    /**
     * Indexes a recovery under its customer unless it is there already: a recovery resumed after its intake
     * died between storing and indexing it. Exact under concurrent resumes: each claim decides on every
     * entry below the number it takes, so the second sees the first's.
     */
    indexCustomer: (doc: RecoveryDoc) =>
      indexUnderCustomer(doc, async (prefix, highest) => {
        const entries = await customerIndex.readDown(prefix, highest, () => true, maxPerCustomer);
        return !entries.some((e) => e.transactionId === doc._id);
      }),

    /** Removes a recovery whose workflow certainly never started, so nothing refers to it. */
    discard: (transactionId: string) => recoveries.deleteOne({ _id: transactionId, state: 'processing' }),

    /** A recovery by its stored id, for the workflow that runs it (which knows it is its own). */
    findById: (transactionId: string): Promise<RecoveryDoc | null> =>
      recoveries.findOne({ _id: transactionId }),

    /** The stop recorded on a recovery while it ran (`askStop`), or null: one field read. */
    async stopAskedOf(transactionId: string): Promise<StopReason | null> {
      const doc = await recoveries.findOne({ _id: transactionId }, { projection: { stopAsked: 1 } });
      return doc?.stopAsked ?? null;
    },

    /** Finds an account's recovery by either form of its id (UUID or FAILED_API_<uuid>). */
    find(accountId: string, transactionId: string): Promise<RecoveryDoc | null> {
      return accountsRecovery(accountId, storedIdOf(transactionId));
    },

    async findByKey(accountId: string, key: string): Promise<RecoveryDoc | null> {
      const claimed = await keys.findOne({ _id: `${accountId}:${key}` });
      return claimed ? accountsRecovery(accountId, claimed.transactionId) : null;
    },

    async update(transactionId: string, patch: RecoveryPatch, now: Date): Promise<void> {
      await recoveries.updateOne({ _id: transactionId }, { $set: { ...patch, updatedAt: now } });
    },

    /**
     * Records a stop asked of a running recovery, before its workflow is asked (see `stopAsked`). The first
     * stop's reason stays, as the workflow keeps the first one it is told: a later ask, of another reason,
     * cannot make the read model settle an end otherwise than the workflow ended it.
     */
    async askStop(transactionId: string, reason: StopReason, now: Date): Promise<void> {
      await recoveries.updateOne(
        { _id: transactionId, stopAsked: { $exists: false } },
        { $set: { stopAsked: reason, updatedAt: now } },
      );
    },

    /**
     * Records that an ended recovery's payment was settled outside it: paid on the customer's own (once),
     * or written off (once, and not after it was paid).
     */
    async settle(
      transactionId: string,
      settled: { paidOnTheirOwnAt: Date } | { writtenOffAt: Date },
      now: Date,
    ): Promise<void> {
      const unsettled =
        'paidOnTheirOwnAt' in settled
          ? { paidOnTheirOwnAt: { $exists: false } }
          : { paidOnTheirOwnAt: { $exists: false }, writtenOffAt: { $exists: false } };
      await recoveries.updateOne(
        { _id: transactionId, state: { $in: endedStates }, ...unsettled },
        { $set: { ...settled, updatedAt: now } },
      );
    },

    /**
     * Claims the id of the recovery's answer for `as`: true when this claim holds (made now, or by an earlier
     * try of the same caller), false when the other side claimed first. Execute answering 202 under the bare
     * id, and a slow first phase failing under FAILED_API_, each claim before they answer, so a merchant's
     * id and the webhook's agree whichever comes first. A unique insert: exact on FerretDB too, whose
     * conditional updates are not atomic.
     */
    async claimAnswer(accountId: string, transactionId: string, as: AnswerClaim): Promise<boolean> {
      try {
        await answerClaims.insertOne({ _id: transactionId, accountId, as, at: new Date() });
        return true;
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
        return (await answerClaims.findOne({ _id: transactionId }))?.as === as;
      }
    },

    /** Who claimed the id of the recovery's answer, if anyone did. */
    async answerClaimOf(transactionId: string): Promise<AnswerClaim | null> {
      return (await answerClaims.findOne({ _id: transactionId }))?.as ?? null;
    },

    /**
     * Remembers a card that was blocked (its own decline, or the screen's), by _id, for the risk screen of
     * later recoveries: the latest block stands.
     */
    async rememberBlockedCard(
      cardKey: string,
      block: { transactionId: string; declineCode: string; at: Date },
    ): Promise<void> {
      await upsert(() => blocked.replaceOne({ _id: cardKey }, block, { upsert: true }));
    },

    /**
     * Appends an attempt once. A retried activity records the same attempt again: it is skipped once
     * there, and `$addToSet` drops an identical copy written by a run racing this one. Both writes filter
     * by _id alone (see accountsRecovery).
     */
    async addAttempt(transactionId: string, attempt: AttemptRecord, now: Date): Promise<void> {
      const doc = await recoveries.findOne({ _id: transactionId }, { projection: { attempts: 1 } });
      if (!doc || doc.attempts.some((a) => a.no === attempt.no)) return;
      await recoveries.updateOne(
        { _id: transactionId },
        {
          $addToSet: { attempts: attempt },
          $set: { updatedAt: now, ...(attempt.declineCode ? { lastDeclineCode: attempt.declineCode } : {}) },
        },
      );
    },

    /**
     * The latest block of this card (cardKeys are per account) since `since`, if any. One remembered for an
     * answer that says nothing about the card (a payment no longer owed, remembered before such answers were
     * told apart) blocks nothing.
     */
    async blockedCard(cardKey: string, since: Date): Promise<BlockedCardDoc | null> {
      const found = await blocked.findOne({ _id: cardKey });
      return found && found.at >= since && classifyDecline(found.declineCode).aboutTheCard ? found : null;
    },

    /**
     * Every recovery of a customer, through the customer index from its newest entry down, `customerBatch`
     * entries at a time: however many the customer has, one batch is held at once. Only those of one mode
     * with `simulated`. Entries of erased or deleted recoveries lead nowhere and are passed over. Index
     * order is admission order, nearly but not exactly newest first: a recovery resumed after its intake
     * died is indexed when it resumes.
     */
    async *eachOfCustomer(
      accountId: string,
      customerEmail: string,
      only: { simulated?: boolean } = {},
    ): AsyncGenerator<RecoveryDoc> {
      const prefix = customerPrefix(accountId, customerEmail);
      // A recovery indexed twice (its entry beyond the newest 500 `indexCustomer` checks) is given once.
      const seen = new Set<string>();
      for (let from = await customerIndex.highest(prefix); from >= 1; from -= customerBatch) {
        const entries = await customerIndex.readDown(prefix, from, () => true, customerBatch);
        const ids = entries.flatMap((e) =>
          e.transactionId && !seen.has(e.transactionId) ? [e.transactionId] : [],
        );
        for (const id of ids) seen.add(id);
        const docs = await Promise.all([...new Set(ids)].map((id) => accountsRecovery(accountId, id)));
        for (const doc of docs)
          if (doc && (only.simulated === undefined || isOfMode(doc, only.simulated))) yield doc;
      }
    },

    /**
     * A customer's newest recoveries (those of the newest 500 index entries), oldest first, through the
     * customer index: proactive retention counts the failures of the last days. Only those of one mode
     * with `simulated`. What must see every one (the paywall, the listing) walks them all with
     * `eachOfCustomer`.
     */
    async forCustomer(
      accountId: string,
      customerEmail: string,
      only: { simulated?: boolean } = {},
    ): Promise<RecoveryDoc[]> {
      const entries = await customerEntriesOf(accountId, customerEmail, maxPerCustomer);
      const docs = await Promise.all(
        entries.flatMap((e) => (e.transactionId ? [accountsRecovery(accountId, e.transactionId)] : [])),
      );
      return docs
        .filter(
          (d): d is RecoveryDoc =>
            d !== null && (only.simulated === undefined || isOfMode(d, only.simulated)),
        )
        .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
    },

    /**
     * Every recovery of the account that names the customer: by email, by a token it charged or could
     * charge, or by the billing platform's customer id; and those named by id (either form), such as the one
     * a card-update link was minted for. Scans the account's recoveries: export and erasure only.
     */
    ofCustomer(accountId: string, who: CustomerRefs): Promise<RecoveryDoc[]> {
      return recoveries
        .find({
          accountId,
          $or: [
            { _id: { $in: who.transactionIds.map(storedIdOf) } },
            { customerEmail: { $in: who.emails } },
            { paymentMethodToken: { $in: who.tokens } },
            { 'request.paymentMethodToken': { $in: who.tokens } },
            { 'request.fallbackPaymentMethodTokens': { $in: who.tokens } },
            { 'connector.customerId': { $in: who.customerIds } },
          ],
        })
        .toArray();
    },

    /**
     * Replaces what names the customer in a recovery (email, payment-method tokens and the card key hashed
     * from one, card number prefix, the platform's customer id) and keeps what the merchant's books and
     * reports need (amount, currency, states, attempts, decline codes, dates, the merchant's own ids). One
     * pseudonym per erased customer keeps their recoveries and pulses one customer for Proof Mode reports.
     * A block the recovery left on a card stays (later recoveries of the card are still refused) but no
     * longer names the recovery: with the token, the block's card key would lead to the pseudonym.
     */
    async pseudonymise(doc: RecoveryDoc, pseudonym: string, now: Date): Promise<void> {
      const { binPrefix: _bin, fallbackPaymentMethodTokens: _fallbacks, ...request } = doc.request;
      // Before the recovery, which an interrupted erasure starts again from.
      await blocked.updateMany({ transactionId: doc._id }, { $set: { transactionId: erasedToken } });
      await recoveries.updateOne(
        { _id: doc._id },
        {
          $set: {
            customerEmail: doc.customerEmail === null ? null : pseudonym,
            paymentMethodToken: erasedToken,
            cardKey: erasedToken,
            request: {
              ...request,
              paymentMethodToken: erasedToken,
              ...(request.customerEmail ? { customerEmail: pseudonym } : {}),
            },
            ...(doc.connector ? { 'connector.customerId': null } : {}),
            updatedAt: now,
          },
        },
      );
    },

    /**
     * Deletes the account's recoveries that were settled before `cutoff` (data retention); a payment still
     * owed stays, however old, while the paywall reads it: until the customer is erased. Their idempotency
     * keys stay claimed (a key is never used twice: it names the workflow and the gateway's attempt keys),
     * and customer index entries that led to them now lead nowhere.
     */
    async purgeSettledBefore(accountId: string, cutoff: Date): Promise<number> {
      const result = await recoveries.deleteMany({ accountId, $and: [done, settledBefore(cutoff)] });
      // Answer claims matter only while a first phase is answered (a minute at most).
      await answerClaims.deleteMany({ accountId, at: { $lt: cutoff } });
      return result.deletedCount;
    },

    /**
     * The customer index of this email no longer leads to the erased recoveries (`erased`: their ids), nor
     * to recoveries deleted since they were indexed; an entry of a recovery admitted after the erasure
     * looked still leads to it, so the paywall reads it. Returns how many entries changed.
     */
    async unlinkCustomer(accountId: string, email: string, erased: readonly string[]): Promise<number> {
      const entries = await customerEntriesOf(accountId, email, Infinity);
      const unlinked: string[] = [];
      for (const { _id, transactionId: id } of entries)
        if (id !== null && (erased.includes(id) || !(await accountsRecovery(accountId, id))))
          unlinked.push(_id);
      if (unlinked.length === 0) return 0;
      const result = await customerEntries.updateMany(
        { _id: { $in: unlinked } },
        { $set: { transactionId: null } },
      );
      return result.modifiedCount;
    },

    /**
     * An account's recoveries of one mode (sandbox when `simulated`, else live) whose failure falls in
     * [from, to), with the fields the summary reads.
     */
    createdBetween: (accountId: string, simulated: boolean, from: Date, to: Date) =>
      createdIn(accountId, simulated, from, to, summaryFields),

    /** The same recoveries with what the breakdown also reads: decline code, strategy and attempts. */
    brokenDownBetween: (accountId: string, simulated: boolean, from: Date, to: Date) =>
      createdIn(accountId, simulated, from, to, breakdownFields),

    /** A page of an account's recoveries, newest first, in `states` when given, after `before`'s place. */
    page(
      accountId: string,
      query: {
        states?: RecoveryState[];
        before?: PagePlace;
        limit: number;
      },
    ): Promise<RecoveryDoc[]> {
      const filter: Filter<RecoveryDoc> = {
        accountId,
        ...(query.states ? { state: { $in: query.states } } : {}),
        ...(query.before ? listedAfter<RecoveryDoc>(query.before) : {}),
      };
      return recoveries.find(filter).sort(newestFirst).limit(query.limit).toArray();
    },

    /** An account's recoveries still being worked on (closure stops them). */
    underWay(accountId: string): Promise<RecoveryDoc[]> {
      return recoveries
        .find({ accountId, state: { $nin: endedStates } })
        .sort({ createdAt: 1 })
        .toArray();
    },

    /**
     * The recoveries of the account's card (`cardKey`) in the mode given whose payment is still owed (as
     * the paywall counts it): waiting for a retry, or ended unpaid and not settled since.
     */
    async owedOnCard(accountId: string, cardKey: string, simulated: boolean): Promise<RecoveryDoc[]> {
      const onCard = await recoveries
        .find({
          accountId,
          cardKey,
          state: { $in: recoveryStates.filter((state) => stillOwed({ state })) },
          paidOnTheirOwnAt: { $exists: false },
          writtenOffAt: { $exists: false },
        })
        .toArray();
      return onCard.filter((r) => isOfMode(r, simulated) && stillOwed(r));
    },

    /**
     * An account's recoveries under way on this token: waiting for a timed retry, or with an attempt (or its
     * lookup at the gateway) under way, which waits next unless it ends the recovery. A card update retries
     * them at once.
     */
    underWayOnToken(accountId: string, paymentMethodToken: string): Promise<RecoveryDoc[]> {
      return recoveries.find({ accountId, paymentMethodToken, state: { $nin: endedStates } }).toArray();
    },

    /** An account's recoveries under way (as underWayOnToken) that a platform reported for one of its customers. */
    underWayForPlatformCustomer(
      accountId: string,
      platform: ConnectorPlatform,
      customerId: string,
    ): Promise<RecoveryDoc[]> {
      return recoveries
        .find({
          accountId,
          'connector.platform': platform,
          'connector.customerId': customerId,
          state: { $nin: endedStates },
        })
        .toArray();
    },
  };
}
