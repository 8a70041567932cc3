import { heartbeat } from '@temporalio/activity';
import { strandedResumedWithinMs } from '../domain/webhooks.js';
import {
  purgeAccountData,
  purgeOperationalRecords,
  type OperationalCounts,
  type PurgeCounts,
} from '../services/data-retention.js';
import type { ActivityDeps } from './deps.js';

/** What one day's run did over the deployment. */
export interface RetentionResult extends PurgeCounts, OperationalCounts {
  accounts: number;
  /** Events left pending on a delivery nothing started, handed to their delivery again (2 days old at most). */
  resumedEvents: number;
}

export function retentionActivities({ stores, log, events }: ActivityDeps) {
  /**
   * Starts the delivery of every event left pending on one that was recorded but never started (the
   * process that recorded it died first, or Temporal refused the start, and its publisher, e.g. an API
   * request, never publishes that eventId again), heartbeating after each. Republishing starts only a
   * delivery that made no attempt, under its own workflow id: one already started (running or ended) is
   * never started twice. One that cannot be started (Temporal refuses it, which dead-letters it; it cannot
   * be read) is logged and passed over: it holds up none of the others.
   */
  async function resumeStranded(asOf: Date): Promise<number> {
    let resumed = 0;
    heartbeat();
    for (const { eventId, createdAt } of await stores.events.stranded(asOf)) {
      try {
        // Days old, its news is stale (a recovery.failed of a payment settled since): dead-lettered as
        // failed, where `?status=failed` and resend find it, so that sending it is the merchant's choice.
        if (asOf.getTime() - createdAt.getTime() > strandedResumedWithinMs)
          await stores.events.setStatus(eventId, 'failed', ['pending']);
        else if (await events.republish(eventId)) resumed += 1;
      } catch (error) {
        log.warn({ eventId, err: error }, 'stranded event not resumed');
      }
      heartbeat(eventId);
    }
    return resumed;
  }

  return {
    /**
     * The outbox check's look (minutes after a process said it was recording events): starts the
     * deliveries of the events stranded as of `asOf` (epoch ms, the workflow's clock), as the daily run
     * does; returns how many. A retry looks again: a delivery already started is not started again.
     */
    async resumeStrandedEvents(input: { asOf: number }): Promise<number> {
      const resumed = await resumeStranded(new Date(input.asOf));
      if (resumed > 0) log.info({ resumedEvents: resumed }, 'stranded events resumed');
      return resumed;
    },

    /**
     * Deletes, for every account with a `dataRetentionDays`, its records older than that as of `asOf`
     * (epoch ms, the workflow's clock), heartbeating after each account, then the records that only serve
     * running recoveries, past their fixed age in every account, and the uses of hosted links whose link is
     * gone. Last, starts the deliveries of the events
     * stranded pending: after the purge, so that one older than its account's retention is deleted, not sent
     * late. A retry starts over: deleting what is already gone changes nothing, and a delivery already
     * started is not started again.
     */
    async purgeExpiredData(input: { asOf: number }): Promise<RetentionResult> {
      const asOf = new Date(input.asOf);
      const total: RetentionResult = {
        accounts: 0,
        recoveries: 0,
        events: 0,
        pulses: 0,
        links: 0,
        platformEvents: 0,
        learnedAttempts: 0,
        predictions: 0,
        predictionOutcomes: 0,
        unlinked: 0,
        proofModeGroups: 0,
        adyenAuthorisations: 0,
        attemptSends: 0,
        orphanedLinkUses: 0,
        resumedEvents: 0,
      };
      for (const account of await stores.accounts.withRetention()) {
        const counts = await purgeAccountData(stores, account, asOf);
        total.accounts += 1;
        for (const [kind, n] of Object.entries(counts) as Array<[keyof PurgeCounts, number]>)
          total[kind] += n;
        heartbeat(account.id);
      }
      Object.assign(total, await purgeOperationalRecords(stores, asOf));
      total.resumedEvents = await resumeStranded(asOf);
      log.info(total, 'data retention purge');
      return total;
    },
  };
}
