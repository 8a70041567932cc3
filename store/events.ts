import type { Db, Filter } from 'mongodb';
import type { EventName, StoredEvent } from '../domain/events.js';
import { seal, unseal, type Sealed } from '../runtime/crypto.js';
import {
  deliveryMayStillRun,
  isAcknowledged,
  isStranded,
  strandedAfterMs,
  webhookDeliveryLifetimeMs,
  type DeliveryBlock,
  type DeliveryStatus,
} from '../domain/webhooks.js';
import { batchSize } from './batches.js';
import { collections } from './collections.js';
import type { CustomerRefs } from './customer-refs.js';
import { isDuplicateKey } from './mongo.js';
import { listedAfter, newestFirst, oldestFirst, type PagePlace } from './paging.js';

/** One POST of an event: when, what came back (status code, or the error when none did), how long. */
export interface DeliveryAttempt {
  attempt: number;
  at: Date;
  statusCode: number | null;
  error: string | null;
  latencyMs: number;
}

/** One delivery workflow of an event (the first, or a resend) and its attempts. */
export interface Delivery {
  deliveryId: string;
  startedAt: Date;
  attempts: DeliveryAttempt[];
  /** Why it sends nothing more: the settings stopped it at an attempt (it stays stopped when they change back). */
  stopped?: DeliveryBlock;
}

/** An emitted event: the outbox entry and its audit log. `body` is the exact string signed and posted. */
export interface EventRecord {
  _id: string; // eventId
  accountId: string;
  type: EventName;
  payload: StoredEvent;
  body: string;
  createdAt: Date;
  deliveryStatus: DeliveryStatus;
  deliveries: Delivery[];
  /**
   * Its link fields and body were sealed under a master key this deployment no longer has: they read as
   * `unreadableField`, and it can be neither sent nor exported as it was. Only on events listed or found
   * for a customer; `get` throws for such an event instead.
   */
  unreadable?: true;
}

/** What the link fields and body of an unreadable event read as. */
export const unreadableField = '[sealed under a master key this deployment no longer has]';

/**
 * Payload fields that carry a hosted link's token. Links are stored hashed, so that a database dump opens
 * none of them (decisions.md); the events that carry one (and the body posted with it) are kept sealed
 * with the master key, and opened only to be listed or sent (an export withholds the links).
 */
export const linkFields = ['cardUpdateUrl', 'cancelFlowUrl', 'cancelFlowToken'] as const;

/**
 * An event as stored: `sealed` when its payload carries a link, whose fields and body are then sealed.
 * `unattemptedSince` is when its latest delivery was recorded while that delivery has made no attempt, and
 * false once it has (or when the event has none): what the outbox check looks for a stranded event by,
 * kept in the same writes as the deliveries. Absent on events stored before it was kept.
 */
type EventDoc = EventRecord & { sealed?: true; unattemptedSince?: Date | false };

/** `unattemptedSince` of an event with these deliveries. */
function unattemptedSinceOf(deliveries: readonly Delivery[]): Date | false {
  const latest = deliveries.at(-1);
  return latest && latest.attempts.length === 0 ? latest.startedAt : false;
}

/** How many events the outbox check reads at a time. */
const strandedPageSize = 100;

function sealLinks(masterKey: Buffer, record: EventRecord): EventDoc {
  const payload: Record<string, unknown> = record.payload;
  const carried = linkFields.filter((field) => typeof payload[field] === 'string');
  if (carried.length === 0) return record;
  const sealedFields = Object.fromEntries(carried.map((field) => [field, seal(masterKey, payload[field])]));
  return {
    ...record,
    payload: { ...record.payload, ...sealedFields },
    body: seal(masterKey, record.body),
    sealed: true,
  };
}

function openLinks(masterKey: Buffer, doc: EventDoc): EventRecord {
  const { sealed, unattemptedSince: _unattempted, ...record } = doc;
  if (!sealed) return record;
  const payload: Record<string, unknown> = record.payload;
  const opened = Object.fromEntries(
    linkFields
      .filter((field) => typeof payload[field] === 'string')
      .map((field) => [field, unseal<string>(masterKey, payload[field] as Sealed)]),
  );
  return { ...record, payload: { ...record.payload, ...opened }, body: unseal<string>(masterKey, doc.body) };
}

/**
 * The event opened, or, when it was sealed under another master key (a lost key), the event with its link
 * fields and body read as `unreadableField`: a listing or an erasure must never fail on one such event.
 */
function openOrMark(masterKey: Buffer, doc: EventDoc): EventRecord {
  try {
    return openLinks(masterKey, doc);
  } catch {
    // The seal does not open (wrong key, or tampered with): said on the record instead of thrown.
    const { sealed: _sealed, unattemptedSince: _unattempted, ...record } = doc;
    const payload: Record<string, unknown> = record.payload;
    const marked = Object.fromEntries(
      linkFields
        .filter((field) => typeof payload[field] === 'string')
        .map((field) => [field, unreadableField]),
    );
    return { ...record, payload: { ...record.payload, ...marked }, body: unreadableField, unreadable: true };
  }
}

/** Filters and order of the audit log listing. */
export interface EventQuery {
  accountId?: string;
  status?: DeliveryStatus;
  /** Only events of these kinds. */
  types?: readonly EventName[];
  /** Only events created at or after `from` and before `to`. */
  from?: Date;
  to?: Date;
  /** Newest first unless told otherwise. */
  order?: typeof newestFirst | typeof oldestFirst;
  /** Only events listed after this one in that order: the next page. */
  after?: PagePlace;
  limit?: number;
}

/**
 * The events collection. Updates name array positions explicitly (`deliveries.<i>.attempts`) because
 * FerretDB has no positional operator; deliveries are only ever appended, so a position never changes.
 */
export function createEventStore(db: Db, masterKey: Buffer) {
  const events = db.collection<EventDoc>(collections.events);
  const open = (doc: EventDoc) => openLinks(masterKey, doc);
  const readable = (doc: EventDoc) => openOrMark(masterKey, doc);

  async function get(eventId: string): Promise<EventRecord | null> {
    const doc = await events.findOne({ _id: eventId });
    return doc && open(doc);
  }

  /** The event as `list` gives it: one sealed under another master key comes marked `unreadable`. */
  async function find(eventId: string): Promise<EventRecord | null> {
    const doc = await events.findOne({ _id: eventId });
    return doc && readable(doc);
  }

  /**
   * Sets the delivery status, only from one of `from` when given, and only while the event has
   * `deliveries` deliveries when given (none added since it was read); true if it changed.
   */
  async function setStatus(
    eventId: string,
    status: DeliveryStatus,
    from?: DeliveryStatus[],
    deliveries?: number,
  ): Promise<boolean> {
    const filter: Filter<EventRecord> = { _id: eventId };
    if (from) filter.deliveryStatus = { $in: from };
    if (deliveries !== undefined) filter.deliveries = { $size: deliveries };
    const result = await events.updateOne(filter, { $set: { deliveryStatus: status } });
    return result.modifiedCount === 1;
  }

  return {
    get,
    find,

    /** Inserts a new event; if one with the same id exists, returns that one untouched instead. */
    async insert(record: EventRecord): Promise<{ record: EventRecord; inserted: boolean }> {
      try {
        await events.insertOne({
          ...sealLinks(masterKey, record),
          unattemptedSince: unattemptedSinceOf(record.deliveries),
        });
        return { record, inserted: true };
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
        const existing = await get(record._id);
        if (!existing)
          throw new Error(`Event ${record._id} collided on insert but cannot be read`, { cause: error });
        return { record: existing, inserted: false };
      }
    },

    /**
     * Appends a delivery if the event still stands as `seen` (its number of deliveries and its status), and
     * in the same write puts it back to pending unless it was delivered (an acknowledged event stays so) and
     * marks it as waiting for the new delivery's first attempt; false if another write got there first.
     */
    async addDelivery(
      eventId: string,
      seen: { deliveries: number; status: DeliveryStatus },
      delivery: Delivery,
    ): Promise<boolean> {
      const result = await events.updateOne(
        { _id: eventId, deliveries: { $size: seen.deliveries }, deliveryStatus: seen.status },
        {
          $push: { deliveries: delivery },
          $set: {
            unattemptedSince: unattemptedSinceOf([delivery]),
            ...(seen.status === 'delivered' ? {} : { deliveryStatus: 'pending' as const }),
          },
        },
      );
      return result.modifiedCount === 1;
    },

    /**
     * Records one attempt of the delivery at `delivery.index`, and in the same write marks the event no
     * longer waiting for a first attempt when that is its latest delivery, and delivered with `delivered`.
     * A delivery ends at its first acknowledgement: once one is recorded, nothing more is. An attempt already
     * recorded is recorded again only when it now succeeded (a worker died after recording its failure, and
     * the same attempt was posted again), so the event is still marked delivered; a racing identical copy is
     * dropped by `$addToSet`. False when the event has no such delivery. Both operations
     * filter by _id alone: the embedded FerretDB scans for any other filter.
     */
    async recordAttempt(
      eventId: string,
      delivery: { deliveryId: string; index: number },
      attempt: DeliveryAttempt,
      delivered: boolean,
    ): Promise<boolean> {
      const record = await events.findOne({ _id: eventId }, { projection: { deliveries: 1 } });
      const deliveries = record?.deliveries ?? [];
      const current = deliveries[delivery.index];
      if (current?.deliveryId !== delivery.deliveryId) return false;
      if (current.attempts.some(isAcknowledged)) return true;
      if (!delivered && current.attempts.some((a) => a.attempt === attempt.attempt)) return true;
      // A delivery is added only once the latest has ended: the latest as read is still the latest.
      const set = {
        ...(delivered ? { deliveryStatus: 'delivered' as const } : {}),
        ...(delivery.index === deliveries.length - 1 ? { unattemptedSince: false as const } : {}),
      };
      const result = await events.updateOne(
        { _id: eventId },
        {
          $addToSet: { [`deliveries.${delivery.index}.attempts`]: attempt },
          ...(Object.keys(set).length > 0 ? { $set: set } : {}),
        },
      );
      return result.matchedCount === 1;
    },

    /**
     * Records that the settings stopped the delivery at `delivery.index` (once: the first reason stays), then
     * marks a pending event so; an event already delivered stays delivered (it was a resend of it that was
     * stopped). Filters by _id alone, as recordAttempt does.
     */
    async stopDelivery(
      eventId: string,
      delivery: { deliveryId: string; index: number },
      block: DeliveryBlock,
    ): Promise<void> {
      const record = await events.findOne({ _id: eventId }, { projection: { deliveries: 1 } });
      const current = record?.deliveries[delivery.index];
      if (current?.deliveryId === delivery.deliveryId && !current.stopped)
        await events.updateOne(
          { _id: eventId },
          { $set: { [`deliveries.${delivery.index}.stopped`]: block } },
        );
      await setStatus(eventId, block, ['pending']);
    },

    setStatus,

    /**
     * The account's events that name the customer in their body: an email, a payment-method token, one
     * of their recoveries or their customer id. Scans the account's events: export and erasure only. An
     * event sealed under another master key (a lost key) comes marked `unreadable`: erasure must never fail.
     */
    async ofCustomer(accountId: string, who: CustomerRefs): Promise<EventRecord[]> {
      const naming = (fields: string[], values: string[]) =>
        fields.map((field) => ({ [`payload.${field}`]: { $in: values } }));
      const docs = await events
        .find({
          accountId,
          $or: [
            ...naming(['customerEmail'], who.emails),
            ...naming(['paymentMethodToken', 'oldPaymentMethodToken', 'newPaymentMethodToken'], who.tokens),
            ...naming(['serviceTransactionId', 'skippedChargeId'], who.transactionIds),
            ...naming(['customerId'], [...who.customerIds, ...who.emails]),
          ],
        })
        .toArray();
      return docs.map(readable);
    },

    /**
     * Deletes the account's events created before `cutoff` whose delivery can no longer run at `now` (data
     * retention): never one whose latest delivery (a resend of a delivered event, one the settings stopped)
     * may still have a workflow that reads it. Those with no delivery begun within a delivery's lifetime go
     * a batch at a time (by id, each delete asking that again), telling `onBatch` after each, so that an
     * account's first purge, years of events, is no single long delete; the few with one (an old event
     * resent lately) are read and judged one by one, each deleted only while it has as many deliveries as
     * when read: one resent in between stays.
     */
    async purgeBefore(
      accountId: string,
      cutoff: Date,
      now: Date,
      onBatch: () => void = () => {},
    ): Promise<number> {
      const old = { accountId, createdAt: { $lt: cutoff } };
      const lately = {
        'deliveries.startedAt': { $gte: new Date(now.getTime() - webhookDeliveryLifetimeMs) },
      };
      const ended = { ...old, $nor: [lately] };
      let deleted = 0;
      for (;;) {
        const batch = await events
          .find(ended, { projection: { _id: 1 } })
          .limit(batchSize)
          .toArray();
        if (batch.length === 0) break;
        const ids = batch.map((event) => event._id);
        deleted += (await events.deleteMany({ ...ended, _id: { $in: ids } })).deletedCount;
        onBatch();
        if (batch.length < batchSize) break;
      }
      const resent = events.find({ ...old, ...lately }, { projection: { deliveries: 1 } });
      for await (const event of resent)
        if (!deliveryMayStillRun(event, now))
          deleted += (
            await events.deleteOne({ _id: event._id, deliveries: { $size: event.deliveries.length } })
          ).deletedCount;
      return deleted;
    },

    /**
     * The ids of events left pending on a delivery nothing started as of `now` (see `isStranded`), oldest
     * first, across accounts, with when that delivery was recorded (a resend's is when it was asked for).
     * Reads, a page at a time, only the pending events whose latest delivery has made no attempt
     * (`unattemptedSince`), not those still being retried; an event stored before that was kept is read and
     * judged by its deliveries, as all were before (until its next attempt keeps it).
     */
    async stranded(now: Date): Promise<Array<{ eventId: string; recordedAt: Date }>> {
      const cutoff = new Date(now.getTime() - strandedAfterMs);
      const candidates: Filter<EventDoc> = {
        deliveryStatus: 'pending',
        $or: [
          { unattemptedSince: { $lte: cutoff } },
          { unattemptedSince: { $exists: false }, createdAt: { $lte: cutoff } },
        ],
      };
      const found: Array<{ eventId: string; recordedAt: Date }> = [];
      for (let after: PagePlace | undefined; ;) {
        const page = await events
          .find(after ? { $and: [candidates, listedAfter<EventDoc>(after, oldestFirst)] } : candidates, {
            projection: { deliveryStatus: 1, deliveries: 1, createdAt: 1 },
          })
          .sort(oldestFirst)
          .limit(strandedPageSize)
          .toArray();
        for (const e of page)
          if (isStranded(e, now)) found.push({ eventId: e._id, recordedAt: e.deliveries.at(-1)!.startedAt });
        after = page.at(-1);
        if (page.length < strandedPageSize || !after) return found;
      }
    },

    /** Deletes events (erasure); returns how many were there. */
    async remove(eventIds: string[]): Promise<number> {
      return (await events.deleteMany({ _id: { $in: eventIds } })).deletedCount;
    },

    /**
     * The audit log, newest first (or oldest first), filtered. An event sealed under another master key
     * comes marked `unreadable`, as `ofCustomer` gives it: one such event never fails the page it is on.
     */
    async list(query: EventQuery = {}): Promise<EventRecord[]> {
      const order = query.order ?? newestFirst;
      const filter: Filter<EventDoc> = {};
      if (query.accountId) filter.accountId = query.accountId;
      if (query.status) filter.deliveryStatus = query.status;
      if (query.types) filter.type = { $in: [...query.types] };
      if (query.from ?? query.to)
        filter.createdAt = {
          ...(query.from ? { $gte: query.from } : {}),
          ...(query.to ? { $lt: query.to } : {}),
        };
      if (query.after) Object.assign(filter, listedAfter<EventDoc>(query.after, order));
      const docs = await events
        .find(filter)
        .sort(order)
        .limit(query.limit ?? 50)
        .toArray();
      return docs.map(readable);
    },
  };
}

export type EventStore = ReturnType<typeof createEventStore>;
