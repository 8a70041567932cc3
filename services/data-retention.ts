import type { Stores } from '../store/index.js';

const dayMs = 86_400_000;

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
 * before the cutoff (a payment still owed stays: the paywall reads it), webhook events whose delivery has ended, pulses, hosted links that expired before it
 * and billing-platform events. Temporal's own histories follow the namespace's retention. Safe to repeat;
 * the daily data retention workflow's activity runs it for each account.
 */
export async function purgeAccountData(
  stores: Stores,
  account: { id: string; days: number },
  asOf: Date,
): Promise<PurgeCounts> {
  const cutoff = new Date(asOf.getTime() - account.days * dayMs);
  return {
    recoveries: await stores.recoveries.purgeSettledBefore(account.id, cutoff),
    events: await stores.events.purgeBefore(account.id, cutoff),
    pulses: await stores.pulses.purgeBefore(account.id, cutoff),
    links: await stores.links.purgeExpiredBefore(account.id, cutoff),
    platformEvents: await stores.connectorEvents.purgeBefore(account.id, cutoff),
  };
}
