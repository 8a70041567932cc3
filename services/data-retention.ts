import { minRetentionDays } from '../domain/settings.js';
import type { Stores } from '../store/index.js';

const dayMs = 86_400_000;

/**
 * How long the records that only serve a running recovery are kept, in every account whatever its own
 * retention: the results Adyen's webhook brought (the lookup that reads one stops within 7 days of the
 * payment, and Adyen gives up resending a webhook after 30) and when each attempt was first sent (a
 * recovery runs at most 60 days). 90 days (the shortest `dataRetentionDays`) outlasts both.
 */
const operationalRecordDays = minRetentionDays;

/** What one account's purge deleted. */
export interface PurgeCounts {
  recoveries: number;
  events: number;
  pulses: number;
  links: number;
  platformEvents: number;
}

/**
 * Deletes an account's records older than its `dataRetentionDays` as of `asOf`: recoveries settled
 * before the cutoff (a payment still owed stays: the paywall reads it), webhook events whose delivery can
 * no longer run (a resend may still be under way on an old event), pulses, hosted links that expired
 * before it and billing-platform events. Temporal's own histories follow the namespace's retention.
 * Safe to repeat; the daily data retention workflow's activity runs it for each account.
 */
export async function purgeAccountData(
  stores: Stores,
  account: { id: string; days: number },
  asOf: Date,
): Promise<PurgeCounts> {
  const cutoff = new Date(asOf.getTime() - account.days * dayMs);
  return {
    recoveries: await stores.recoveries.purgeSettledBefore(account.id, cutoff),
    events: await stores.events.purgeBefore(account.id, cutoff, asOf),
    pulses: await stores.pulses.purgeBefore(account.id, cutoff),
    links: await stores.links.purgeExpiredBefore(account.id, cutoff),
    platformEvents: await stores.connectorEvents.purgeBefore(account.id, cutoff),
  };
}

/** What the purge of the records that only serve running recoveries deleted. */
export interface OperationalCounts {
  adyenAuthorisations: number;
  attemptSends: number;
}

/** Deletes, across accounts, the records that only serve running recoveries, `operationalRecordDays` old. */
export async function purgeOperationalRecords(stores: Stores, asOf: Date): Promise<OperationalCounts> {
  const cutoff = new Date(asOf.getTime() - operationalRecordDays * dayMs);
  return {
    adyenAuthorisations: await stores.adyenAuthorisations.purgeBefore(cutoff),
    attemptSends: await stores.attemptSends.purgeBefore(cutoff),
  };
}
