import { heartbeat } from '@temporalio/activity';
import { z } from 'zod';
import { strandedResumedWithinMs } from '../domain/webhooks.js';
import {
  purgeAccountData,
  purgeOperationalRecords,
  type OperationalCounts,
  type PurgeCounts,
} from '../services/data-retention.js';
import type { ActivityDeps } from './deps.js';
import { resumedProgress } from './heartbeat-progress.js';

/** What one day's run did over the deployment. */
export interface RetentionResult extends PurgeCounts, OperationalCounts {
  accounts: number;
  /** Uses of hosted links whose link is gone (each names the card saved through it). */
  orphanedLinkUses: number;
  /** Events left pending on a delivery nothing started, handed to their delivery again (2 days old at most). */
  resumedEvents: number;
}

/** A day's run before it has done anything. */
const nothingYet = (): RetentionResult => ({
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
  expiryWarnings: 0,
  orphanedLinkUses: 0,
  resumedEvents: 0,
});

/**
 * Where a day's run had got to, saved with each heartbeat: a retried try goes on from there, not from the
 * first account again, with what the earlier tries counted. Its steps come in this order.
 */
const Progress = z.object({
  step: z.enum(['accounts', 'operational', 'linkUses', 'stranded']),
  /** The last account purged, accounts taken in id order (null: none yet). */
  account: z.string().nullable(),
  /** The last link use the scan for orphaned ones looked at, in id order (null: none yet). */
  linkUse: z.string().nullable(),
  counts: z.record(z.string(), z.int()),
});
type Progress = z.infer<typeof Progress>;

const firstTry = (): Progress => ({ step: 'accounts', account: null, linkUse: null, counts: {} });

export function retentionActivities({ stores, log, events }: ActivityDeps) {
  /**
   * Starts the delivery of every event left pending on one that was recorded but never started (the
   * process that recorded it died first, or Temporal refused the start, and its publisher, e.g. an API
   * request, never publishes that eventId again), heartbeating after each. Republishing starts only a
   * delivery that made no attempt, under its own workflow id: one already started (running or ended) is
   * never started twice. One that cannot be started (Temporal refuses it, which dead-letters it; it cannot
   * be read) is logged and passed over: it holds up none of the others.
   */
  async function resumeStranded(asOf: Date, beat: (eventId?: string) => void): Promise<number> {
    let resumed = 0;
    beat();
    for (const { eventId, recordedAt } of await stores.events.stranded(asOf)) {
      try {
        // Recorded days ago, its news is stale (a recovery.failed of a payment settled since): dead-lettered
        // as failed, where `?status=failed` and resend find it, so that sending it is the merchant's choice.
        // A resend's delivery counts from when the merchant asked for it, however old the event.
        if (asOf.getTime() - recordedAt.getTime() > strandedResumedWithinMs)
          await stores.events.setStatus(eventId, 'failed', ['pending']);
        else if (await events.republish(eventId)) resumed += 1;
      } catch (error) {
        log.warn({ eventId, err: error }, 'stranded event not resumed');
      }
      beat(eventId);
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
      const resumed = await resumeStranded(new Date(input.asOf), heartbeat);
      if (resumed > 0) log.info({ resumedEvents: resumed }, 'stranded events resumed');
      return resumed;
    },

    /**
     * Deletes, for every account with a `dataRetentionDays`, its records older than that as of `asOf`
     * (epoch ms, the workflow's clock), then the records that only serve running recoveries, past their
     * fixed age in every account, the records of card expiry warnings whose card has expired, and the
     * uses of hosted links whose link is gone. Last, starts the deliveries of the events stranded pending:
     * after the purge, so that one older than its account's retention is deleted, not sent late. It
     * heartbeats after each step of an account's purge, each batch of its events' deletes and each batch
     * of link uses scanned, with where it has got to (`Progress`): a retry goes on after the last account
     * finished, or the last link use looked at. Whatever a retry does again is safe to repeat: deleting
     * what is already gone changes nothing, and a delivery already started is not started again.
     */
    async purgeExpiredData(input: { asOf: number }): Promise<RetentionResult> {
      const asOf = new Date(input.asOf);
      const progress = resumedProgress(Progress, firstTry);
      const total = nothingYet();
      for (const kind of Object.keys(total) as Array<keyof RetentionResult>)
        total[kind] = progress.counts[kind] ?? 0;
      const beat = () => heartbeat({ ...progress, counts: { ...total } });

      if (progress.step === 'accounts') {
        const after = progress.account;
        const accounts = (await stores.accounts.withRetention())
          .filter(({ id }) => after === null || id > after)
          .sort((a, b) => (a.id < b.id ? -1 : 1));
        for (const account of accounts) {
          const counts = await purgeAccountData(stores, account, asOf, beat);
          total.accounts += 1;
          for (const [kind, n] of Object.entries(counts) as Array<[keyof PurgeCounts, number]>)
            total[kind] += n;
          progress.account = account.id;
          beat();
        }
        progress.step = 'operational';
      }
      if (progress.step === 'operational') {
        Object.assign(total, await purgeOperationalRecords(stores, asOf, beat));
        progress.step = 'linkUses';
        beat();
      }
      if (progress.step === 'linkUses') {
        await stores.links.purgeOrphanedUses(progress.linkUse, (last, deleted) => {
          progress.linkUse = last;
          total.orphanedLinkUses += deleted;
          beat();
        });
        progress.step = 'stranded';
      }
      total.resumedEvents += await resumeStranded(asOf, () => beat());
      log.info(total, 'data retention purge');
      return total;
    },
  };
}
