import { statusOf, stillOwed, type StopReason } from '../domain/recovery.js';
import type { Stores } from '../store/index.js';
import type { RecoveryDoc } from '../store/recoveries.js';

/**
 * Settles a recovery that ended without the payment although a stop was asked: the customer paid on their
 * own (`paid_elsewhere`: the report counts it collected, as a billing platform's notice does) or no longer
 * owes it (`not_owed`: written off). Either way the paywall no longer holds the customer past due for it. A
 * payment is written off once; word that it was paid stands over a write-off. One that collected the payment
 * is left as it is. Whoever sees the end first settles it (the stop, or the workflow recording its end).
 */
export async function settleStopped(
  stores: Stores,
  doc: RecoveryDoc,
  reason: StopReason,
  now: Date,
): Promise<void> {
  if (statusOf(doc.state) === 'succeeded' || statusOf(doc.state) === 'unknown') return;
  if (reason === 'paid_elsewhere' && doc.paidOnTheirOwnAt === undefined)
    await stores.recoveries.settle(doc._id, { paidOnTheirOwnAt: now }, now);
  if (reason === 'not_owed' && stillOwed(doc))
    await stores.recoveries.settle(doc._id, { writtenOffAt: now }, now);
}
