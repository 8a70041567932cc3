import Chargebee, { type Invoice } from 'chargebee';
import { z } from 'zod';

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
export async function callApi<T>(send: () => Promise<T>): Promise<T> {
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
