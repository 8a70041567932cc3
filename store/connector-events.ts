import type { Db } from 'mongodb';
import type { ConnectorPlatform } from '../domain/connectors.js';
import { collections } from './collections.js';
import { isDuplicateKey } from './mongo.js';

/** One platform event as received: `_id` is `${accountId}/${platform}/${eventId}`. */
export interface ConnectorEventDoc {
  _id: string;
  accountId: string;
  platform: ConnectorPlatform;
  eventId: string;
  type: string;
  receivedAt: Date;
  /** Set once the event's action is complete; a platform retry of a done event changes nothing. */
  doneAt: Date | null;
  /** What Recoup did with it (a receipt's `action`). */
  outcome: string | null;
  /** Why nothing was done with it (an `ignored` receipt's reason), for the operator. */
  reason?: string;
}

/**
 * Platform events, by the platform's own event id: the deduplication of platform retries. An event counts
 * as handled only once its action completed, so a retry of one whose handling died midway runs it again
 * (every action is idempotent: recoveries are keyed by invoice, signals are checked against the read model).
 */
export function createConnectorEventStore(db: Db) {
  const events = db.collection<ConnectorEventDoc>(collections.connectorEvents);
  const idOf = (accountId: string, platform: ConnectorPlatform, eventId: string) =>
    `${accountId}/${platform}/${eventId}`;

  return {
    /**
     * Deletes the account's platform events received before `cutoff` (data retention): platforms stop
     * retrying an event within days, so none of them can arrive again.
     */
    async purgeBefore(accountId: string, cutoff: Date): Promise<number> {
      return (await events.deleteMany({ accountId, receivedAt: { $lt: cutoff } })).deletedCount;
    },

    /** Records the event's arrival; returns the earlier record when it was handled already, else null. */
    async receive(
      accountId: string,
      platform: ConnectorPlatform,
      eventId: string,
      type: string,
      now: Date,
    ): Promise<ConnectorEventDoc | null> {
      const _id = idOf(accountId, platform, eventId);
      const earlier = await events.findOne({ _id });
      if (earlier?.doneAt) return earlier;
      if (earlier) return null;
      try {
        await events.insertOne({
          _id,
          accountId,
          platform,
          eventId,
          type,
          receivedAt: now,
          doneAt: null,
          outcome: null,
        });
      } catch (error) {
        // A concurrent delivery of the same event: both handle it, which every action allows.
        if (!isDuplicateKey(error)) throw error;
      }
      return null;
    },

    async done(
      accountId: string,
      platform: ConnectorPlatform,
      eventId: string,
      handled: { outcome: string; reason?: string },
      now: Date,
    ) {
      await events.updateOne(
        { _id: idOf(accountId, platform, eventId) },
        { $set: { doneAt: now, ...handled } },
      );
    },

    /** An account's latest platform events, newest first (the operator's view). */
    latest(accountId: string, limit: number): Promise<ConnectorEventDoc[]> {
      return events.find({ accountId }).sort({ receivedAt: -1 }).limit(limit).toArray();
    },
  };
}
