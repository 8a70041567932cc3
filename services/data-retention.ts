import { minRetentionDays } from '../domain/settings.js';
import type { Stores } from '../store/index.js';
import { unlinkPurgedRecoveries } from '../store/recovery-traces.js';

const dayMs = 86_400_000;

/**
 * How long the records that only serve a running recovery are kept, in every account whatever its own
 * retention: the results Adyen's webhook brought (the lookup that reads one stops within 7 days of the
 * payment, and Adyen gives up resending a webhook after 30) and when each attempt was first sent (a
 * recovery runs at most 60 days). 90 days (the shortest `dataRetentionDays`) outlasts both.
 */
const operationalRecordDays = minRetentionDays;

/** What one account's purge deleted, or changed so that it names no one. */
export interface PurgeCounts {
  recoveries: number;
  events: number;
  pulses: number;
  links: number;
  platformEvents: number;
  /** Attempts logged for the learned statistics (what they taught stays in the account's counts). */
  learnedAttempts: number;
  /** Risk predictions, and the outcomes reported for them (what these taught stays in the calibration). */
  predictions: number;
  predictionOutcomes: number;
  /**
   * Records derived from old payments that no longer name them, as after an erasure: the cards' attempt
   * budgets, the 5-minute duplicate claims, the customer index, the cards' blocks, retention notices.
   */
  unlinked: number;
  /** Proof Mode groups of customers no recovery read within the retention (drawn afresh next time). */
  proofModeGroups: number;
}

/**
 * Deletes an account's records older than its `dataRetentionDays` as of `asOf`: recoveries settled
 * before the cutoff (a payment still owed stays: the paywall reads it), webhook events whose delivery can
 * no longer run (a resend may still be under way on an old event), pulses, hosted links that expired
 * before it, billing-platform events, the attempts logged for the learned statistics, and risk predictions
 * and their reported outcomes (the learned counts and the calibration stay: they name nothing); then
 * unlinks what was derived from them (`unlinked`) and forgets the Proof Mode groups of customers not seen
 * since. Temporal's own histories follow the namespace's retention. Safe to repeat; the daily data
 * retention workflow's activity runs it for each account, and is told through `beat` after each step and
 * each batch of the events' deletes, so that it can heartbeat through a long one.
 */
export async function purgeAccountData(
  stores: Stores,
  account: { id: string; days: number },
  asOf: Date,
  beat: () => void = () => {},
): Promise<PurgeCounts> {
  const cutoff = new Date(asOf.getTime() - account.days * dayMs);
  const told = <T>(done: T): T => {
    beat();
    return done;
  };
  const recoveries = told(await stores.recoveries.purgeSettledBefore(account.id, cutoff));
  // After the recoveries: what names one that is gone is found by that.
  const unlinked =
    told(await stores.cardBudgets.forgetAttemptsBefore(account.id, cutoff)) +
    told(await unlinkPurgedRecoveries(stores.db, account.id, cutoff)) +
    told(await stores.retentionNotices.forgetBefore(account.id, cutoff));
  return {
    recoveries,
    events: told(await stores.events.purgeBefore(account.id, cutoff, asOf, beat)),
    pulses: told(await stores.pulses.purgeBefore(account.id, cutoff)),
    links: told(await stores.links.purgeExpiredBefore(account.id, cutoff)),
    platformEvents: told(await stores.connectorEvents.purgeBefore(account.id, cutoff)),
    learnedAttempts: told(await stores.learning.purgeBefore(account.id, cutoff)),
    ...told(await stores.predictions.purgeBefore(account.id, cutoff)),
    unlinked,
    proofModeGroups: await stores.holdouts.forgetUnseenSince(account.id, cutoff),
  };
}

/** What the purge of the records kept for a fixed time in every account deleted. */
export interface OperationalCounts {
  adyenAuthorisations: number;
  attemptSends: number;
  /** The records of card expiry warnings sent, once their card has expired. */
  expiryWarnings: number;
}

/**
 * Deletes, across accounts, the records that only serve running recoveries, `operationalRecordDays` old,
 * and those of card expiry warnings whose card has expired by `asOf` (needed until then: a card is warned
 * about once per expiry); `beat` is told between the deletes. (The uses of hosted links whose link is gone
 * are the activity's own step: `purgeOrphanedUses`, which it resumes where a try cut short left it.)
 */
export async function purgeOperationalRecords(
  stores: Stores,
  asOf: Date,
  beat: () => void = () => {},
): Promise<OperationalCounts> {
  const cutoff = new Date(asOf.getTime() - operationalRecordDays * dayMs);
  const adyenAuthorisations = await stores.adyenAuthorisations.purgeBefore(cutoff);
  beat();
  const attemptSends = await stores.attemptSends.purgeBefore(cutoff);
  beat();
  return {
    adyenAuthorisations,
    attemptSends,
    expiryWarnings: await stores.expiryWarnings.purgeExpired(asOf),
  };
}
