import { amountDueSignal } from '../workflows/recovery-definitions.js';
import { connectorFor } from './connectors/registry.js';
import type { ActivityDeps } from './deps.js';
import { declined, type ChargeAnswer } from './gateways/types.js';
import type { AttemptInput, AttemptResult } from './recovery-attempt.js';

/** What the billing platform's invoice allows a new attempt of a recovery to charge. */
export type InvoiceCheck =
  /** Owed in full, or nothing to ask (no connector, no API credentials, a platform whose charge checks itself). */
  | { kind: 'charge' }
  /** Paid, voided or cancelled on the platform since the failure: nothing is charged. */
  | { kind: 'not_owed'; reason: string; paid?: boolean }
  /** Less is owed than the attempt would charge (part paid on the platform): never charged more than due. */
  | { kind: 'less_due'; amountDue: number; workflowId: string }
  /** Billed now in a currency other than the recovery's: this recovery's payment is owed no more. */
  | { kind: 'other_currency' };

/**
 * Reads the invoice of a recovery a billing platform reported, just before a new attempt charges it: the
 * platform's paid notice may be late, lost, or behind another event (a card the customer saved while paying
 * the invoice on the platform's own page), and a charge then would collect the payment twice. The platform
 * not answering throws, so the attempt is retried rather than sent blind.
 */
async function checkInvoice(
  deps: Pick<ActivityDeps, 'stores' | 'log'>,
  attempt: AttemptInput,
): Promise<InvoiceCheck> {
  const { stores } = deps;
  const recovery = await stores.recoveries.find(attempt.accountId, attempt.transactionId);
  const source = recovery?.connector;
  const connector = source && connectorFor(source.platform);
  if (!recovery || !source || !connector?.invoiceStanding) return { kind: 'charge' };
  // Sent before (a retried activity, a worker replaying the workflow): it may have charged, and is sent
  // again under its key so the gateway answers it as it did.
  if (await stores.attemptSends.wasSent(attempt.attemptKey)) return { kind: 'charge' };
  // The connector removed since: no credentials to read the platform with, so the attempt goes as before.
  const loaded = await stores.accounts.withConnector(attempt.accountId, source.platform);
  if (!loaded) return { kind: 'charge' };
  const standing = await connector.invoiceStanding(
    loaded.config,
    { id: source.invoiceId, currency: attempt.currency },
    { gateways: loaded.gateways },
  );
  const where = { transactionId: attempt.transactionId, platform: source.platform, standing };
  if (standing.kind !== 'unreadable') deps.log.info(where, 'invoice read before charging');
  if (standing.kind === 'unreadable') return { kind: 'charge' };
  if (standing.kind === 'not_owed') return standing;
  if (standing.currency && standing.currency.toUpperCase() !== attempt.currency.toUpperCase())
    return { kind: 'other_currency' };
  return standing.amountDue < attempt.amount
    ? { kind: 'less_due', amountDue: standing.amountDue, workflowId: recovery.workflowId }
    : { kind: 'charge' };
}

/**
 * What the billing platform's invoice says of a new attempt of a recovery it reported (see checkInvoice):
 * null to charge; else the attempt's answer, with nothing sent (`record` notes a not-owed answer as the
 * attempt's). Not asked for an attempt sent before, nor for a recovery no platform reported.
 */
export async function heldByInvoice(
  deps: Pick<ActivityDeps, 'stores' | 'log' | 'temporal'>,
  input: AttemptInput,
  record: (outcome: ChargeAnswer) => Promise<void>,
): Promise<AttemptResult | null> {
  const check = await checkInvoice(deps, input);
  // Answered as the workflow answers a payment no longer owed: the recovery stops, the card is not blamed.
  const notOwed = async (code: 'invoice_not_owed' | 'invoice_other_currency') => {
    const outcome = declined(code, null, null);
    await record(outcome);
    return outcome;
  };
  switch (check.kind) {
    case 'charge':
      return null;
    case 'not_owed': {
      // Collected on the platform, its notice late or lost: recorded as a stop the platform asked, so the
      // recovery's end is settled as paid on the customer's own (the report counts it collected), as the
      // notice would have done.
      if (check.paid)
        await deps.stores.recoveries.askStop(input.transactionId, 'paid_elsewhere', new Date(input.now));
      return notOwed('invoice_not_owed');
    }
    case 'less_due':
      // Told to the workflow as the platform's notice of a partial payment would: the attempt is held, and
      // the next one (a minute on at the earliest, as after any refusal before charging) collects what is due.
      await deps.temporal.workflow
        .getHandle(check.workflowId)
        .signal(amountDueSignal, { amount: check.amountDue });
      return {
        kind: 'not_allowed',
        reason: `The invoice owes ${check.amountDue}, less than the attempt's ${input.amount}`,
        retryAt: input.now,
      };
    case 'other_currency':
      return notOwed('invoice_other_currency');
  }
}
