import type { RecoveryDoc } from '../../store/recoveries.js';
import type { Stack } from './stack.js';

/**
 * Posts a platform webhook body as the platform sends it (exact bytes) to an account's intake URL;
 * `platform` is any path segment, so unknown platforms can be tried too.
 */
export async function postWebhook(
  stack: Stack,
  platform: string,
  clientId: string,
  body: string,
  headers: Record<string, string>,
) {
  const res = await fetch(`${stack.baseUrl}/api/connectors/${platform}/webhook/${clientId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as Record<string, unknown> };
}

/** Waits until the recovery of `invoiceId` (its idempotency key) satisfies `ready`; returns it, or the last read. */
export async function recoveryOfInvoice(
  stack: Stack,
  accountId: string,
  invoiceId: string,
  ready: (doc: RecoveryDoc) => boolean = () => true,
  timeoutMs = 15_000,
): Promise<RecoveryDoc | null> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const doc = await stack.stores.recoveries.findByKey(accountId, invoiceId);
    if ((doc && ready(doc)) || Date.now() > deadline) return doc;
    await new Promise((r) => setTimeout(r, 100));
  }
}
