import Chargebee, { type Invoice } from 'chargebee';
import { z } from 'zod';
import type { WriteBackOutcome } from '../../domain/connectors.js';
import type { WriteBack } from './types.js';

/**
 * Chargebee's official client. The SDK builds the host as `{site}{hostSuffix}`, so an `apiBase` override
 * takes the whole host as the "site" with an empty suffix, plus its protocol and port.
 */
export function clientOf(site: string, apiKey: string, apiBase: string | undefined): Chargebee {
  const base = apiBase ? new URL(apiBase) : null;
  const protocol = base?.protocol === 'http:' ? 'http' : 'https';
  return new Chargebee({
    site: base ? base.hostname : site,
    apiKey,
    // Inside the write-back activity's one-minute timeout and a webhook's wait (the SDK's default is 80 s).
    timeout: 20_000,
    ...(base
      ? { hostSuffix: '', protocol, port: Number(base.port) || (protocol === 'http' ? 80 : 443) }
      : {}),
  });
}

/** Chargebee's error body, as its SDK rejects with it. */
const ApiError = z.object({
  http_status_code: z.number(),
  api_error_code: z.string().nullish(),
  message: z.string().nullish(),
});

/** The SDK rejects with Chargebee's error body, not an Error: one with a message and a stack for the logs. */
async function callApi<T>(send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (error) {
    const body = ApiError.safeParse(error);
    if (error instanceof Error || !body.success) throw error;
    const { http_status_code: status, api_error_code: code, message } = body.data;
    throw new Error(`Chargebee answered ${status} (${code ?? 'no code'}): ${message ?? ''}`, {
      cause: error,
    });
  }
}

/** The invoice as Chargebee holds it now, or null when Chargebee does not know it. */
export async function currentInvoice(client: Chargebee, invoiceId: string) {
  try {
    return (await callApi(() => client.invoice.retrieve(invoiceId))).invoice;
  } catch (error) {
    const body = ApiError.safeParse(error instanceof Error ? error.cause : error);
    if (body.success && body.data.http_status_code === 404) return null;
    throw error;
  }
}

/**
 * Whether a payment on the paid invoice carries `reference` (Recoup's gateway transaction id): the payment
 * Recoup recorded itself in an earlier write-back whose answer was lost. Reads each linked payment's
 * transaction (`transaction.retrieve`), whose `reference_number` the record carries.
 */
export async function recordedByRecoup(client: Chargebee, invoice: Invoice, reference: string) {
  const transactions = await Promise.all(
    (invoice.linked_payments ?? []).map(({ txn_id: id }) => callApi(() => client.transaction.retrieve(id))),
  );
  return transactions.some(({ transaction }) => transaction.reference_number === reference);
}

/** The API part of the connector's configuration: without site and key there is no API to call. */
interface ApiAccess {
  site?: string;
  apiKey?: string;
  apiBase?: string;
}

/**
 * Records the recovered payment on the invoice (paid outside Chargebee), so Chargebee's dunning stops.
 * Retried by the activity: the invoice's status is read first (paid by Recoup's own earlier record, whose
 * answer was lost: `recorded`; paid otherwise: `already_paid`) and the record carries an idempotency key.
 */
export async function writeBack(config: ApiAccess, payment: WriteBack): Promise<WriteBackOutcome> {
  if (!config.site || !config.apiKey) return 'not_configured';
  const client = clientOf(config.site, config.apiKey, config.apiBase);
  const invoice = await currentInvoice(client, payment.invoiceId);
  if (!invoice) throw new Error(`Chargebee has no invoice ${payment.invoiceId}`);
  if (invoice.status === 'paid')
    return (await recordedByRecoup(client, invoice, payment.gatewayTransactionId))
      ? 'recorded'
      : 'already_paid';
  if (invoice.status === 'voided') return 'closed';
  // Never more than the invoice still owes: a charge that collected while part of it was paid elsewhere
  // took more (the merchant refunds the rest), and Chargebee takes no payment over the amount due.
  const amount = Math.min(payment.amount, invoice.amount_due ?? payment.amount);
  await callApi(() =>
    client.invoice.recordPayment(
      payment.invoiceId,
      {
        comment: 'Recovered by Recoup',
        transaction: {
          amount,
          payment_method: 'other',
          reference_number: payment.gatewayTransactionId,
          date: Math.floor(payment.recoveredAt / 1000),
        },
      },
      { 'chargebee-idempotency-key': `recoup-write-back/${payment.invoiceId}` },
    ),
  );
  return 'recorded';
}
