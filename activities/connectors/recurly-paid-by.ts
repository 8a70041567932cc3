import type Recurly from 'recurly';
import { minorUnitsOf } from '../../domain/money.js';

/** A payment Recurly collected for an invoice: a successful purchase or capture (not a refund, nor a card check). */
export const collectedByRecurly = (transaction: Recurly.Transaction): boolean =>
  !!transaction.success && ['purchase', 'capture'].includes(transaction.type ?? '');

/**
 * How far Recurly's clock may run behind the worker's: Recoup marks the invoice moments after its recovery
 * succeeded, and Recurly stamps the mark with its own clock.
 */
const clockSkewMs = 5 * 60_000;

/** Minor units of the invoice's currency that Recurly collected for it: its payments and the credit applied. */
function collectedOn(invoice: Recurly.Invoice): number {
  const currency = invoice.currency ?? '';
  const payments = (invoice.transactions ?? []).filter(collectedByRecurly).map((t) => t.amount);
  const credit = (invoice.creditPayments ?? []).filter((c) => c.action === 'payment').map((c) => c.amount);
  return [...payments, ...credit].reduce<number>(
    (sum, amount) => sum + (minorUnitsOf(amount ?? 0, currency) ?? 0),
    0,
  );
}

/**
 * Whether a paid invoice is Recoup's own `mark_successful`, made by an earlier write-back of the recovery
 * whose answer was lost. A mark leaves no transaction, so it is that when what Recurly collected (payments,
 * account credit) does not cover the invoice and it was closed once the recovery had succeeded; an invoice
 * Recurly collected itself, or one marked paid before the recovery succeeded (by the merchant), is not.
 */
export function markedByRecoup(invoice: Recurly.Invoice, recoveredAt: number): boolean {
  const total = minorUnitsOf(invoice.total ?? 0, invoice.currency ?? '') ?? 0;
  const closedAt = invoice.closedAt?.getTime();
  return collectedOn(invoice) < total && closedAt !== undefined && closedAt >= recoveredAt - clockSkewMs;
}
