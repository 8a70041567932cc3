import { createHmac, randomBytes } from 'node:crypto';
import type { Stack } from './stack.js';

/** A fresh HMAC key as Adyen's Customer Area shows one: 32 bytes in upper-case hex. */
export const newHmacKey = () => randomBytes(32).toString('hex').toUpperCase();

/** What a test says about one webhook item; the rest is filled in as Adyen sends it. */
export interface ItemFields {
  pspReference: string;
  merchantReference: string;
  success: boolean;
  value?: number;
  currency?: string;
  reason?: string;
  eventCode?: string;
  merchantAccountCode?: string;
}

/**
 * Adyen's HMAC signature of a standard webhook item, computed here as Adyen documents it (independently of
 * the library Recoup verifies with): HMAC-SHA256, keyed by the hex key's bytes, of pspReference,
 * originalReference, merchantAccountCode, merchantReference, value, currency, eventCode and success joined
 * by colons, in Base64.
 */
export function adyenSignature(item: Record<string, unknown>, hmacKey: string): string {
  const amount = item.amount as { value: number; currency: string };
  const fields = [
    item.pspReference,
    item.originalReference ?? '',
    item.merchantAccountCode,
    item.merchantReference,
    amount.value,
    amount.currency,
    item.eventCode,
    item.success,
  ].map(String);
  return createHmac('sha256', Buffer.from(hmacKey, 'hex')).update(fields.join(':')).digest('base64');
}

/**
 * One NotificationRequestItem as Adyen sends it, with what it says about the shopper and the card, signed
 * with `hmacKey`. An authorised card payment's `reason` is Adyen's `authCode:last4:expiry`.
 */
export function signedItem(fields: ItemFields, hmacKey: string): Record<string, unknown> {
  const success = String(fields.success);
  const item: Record<string, unknown> = {
    additionalData: {
      shopperReference: 'shopper-ann',
      shopperEmail: 'ann@example.com',
      cardSummary: '1111',
      expiryDate: '03/2030',
      recurringProcessingModel: 'Subscription',
    },
    amount: { value: fields.value ?? 4900, currency: fields.currency ?? 'EUR' },
    eventCode: fields.eventCode ?? 'AUTHORISATION',
    eventDate: '2026-11-25T15:02:11+01:00',
    merchantAccountCode: fields.merchantAccountCode ?? 'AcmeECOM',
    merchantReference: fields.merchantReference,
    operations: ['CANCEL', 'CAPTURE', 'REFUND'],
    paymentMethod: 'visa',
    pspReference: fields.pspReference,
    reason: fields.reason ?? (fields.success ? '874574:1111:03/2030' : 'Refused'),
    success,
  };
  (item.additionalData as Record<string, string>).hmacSignature = adyenSignature(item, hmacKey);
  return item;
}

/** Adyen's standard webhook body around these items. */
export const notification = (...items: Array<Record<string, unknown>>) => ({
  live: 'false',
  notificationItems: items.map((NotificationRequestItem) => ({ NotificationRequestItem })),
});

/** Posts a body (an object as JSON, or a string as it is) to an account's Adyen webhook URL. */
export async function postAdyenWebhook(
  stack: Stack,
  clientId: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string }> {
  const res = await fetch(`${stack.baseUrl}/api/gateways/adyen/webhook/${clientId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, text: await res.text() };
}
