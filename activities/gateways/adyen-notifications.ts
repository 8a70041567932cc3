// The library is CommonJS whose named exports Node's ESM loader cannot see: its values come off the default export.
import adyen, { type Types } from '@adyen/api-library';
import { z } from 'zod';
import { isAttemptKey, recoveryWorkflowId } from '../../domain/recovery.js';
import type { GatewayConfig } from '../../domain/settings.js';
import type { AdyenAuthorisation } from '../../store/adyen-authorisations.js';
import { basicAuthMatches } from '../connectors/webhook-body.js';
import { AdyenCredentials } from './adyen.js';

type LibraryItem = Types.notification.NotificationRequestItem;

/**
 * One item of Adyen's standard webhook: the fields its HMAC signature covers, and those Recoup keeps.
 * Other fields (the shopper's, the card's) are dropped here; Adyen adds fields, so none is refused.
 */
const NotificationRequestItem = z.object({
  eventCode: z.string().min(1),
  success: z.enum(['true', 'false']),
  pspReference: z.string().min(1),
  originalReference: z.string().optional(),
  merchantAccountCode: z.string(),
  merchantReference: z.string(),
  amount: z.object({ value: z.int(), currency: z.string() }),
  eventDate: z.string(),
  reason: z.string().optional(),
  additionalData: z.object({ hmacSignature: z.string().optional() }).optional(),
});
export type NotificationRequestItem = z.infer<typeof NotificationRequestItem>;

/** Adyen's standard webhook body: a batch of items, each signed on its own. */
export const AdyenNotification = z.object({
  live: z.string().optional().describe('"true" from Adyen\'s live platform, "false" from its test one'),
  notificationItems: z.array(z.object({ NotificationRequestItem })).min(1),
});
export type AdyenNotification = z.infer<typeof AdyenNotification>;

/** What authenticates an account's Adyen webhook: one Adyen gateway's HMAC key and its basic-auth pair, if set. */
export interface AdyenWebhookKey {
  gateway: string;
  hmacKey: string;
  basicAuth: { username: string; password: string } | null;
}

/** The webhook keys of an account's Adyen gateways that have an `hmacKey`, in the gateways' order. */
export function adyenWebhookKeys(gateways: GatewayConfig[]): AdyenWebhookKey[] {
  return gateways.flatMap((g) => {
    const credentials = g.kind === 'adyen' ? AdyenCredentials.safeParse(g.credentials).data : undefined;
    if (!credentials?.hmacKey) return [];
    const { hmacKey, notificationUsername: username, notificationPassword: password } = credentials;
    return [{ gateway: g.name, hmacKey, basicAuth: username && password ? { username, password } : null }];
  });
}

const validator = new adyen.hmacValidator();

/**
 * The gateway whose key signed the item (Adyen's HMAC over its payment fields, checked by the library's
 * validator) and whose basic-auth pair, when it has one, the request carries; null when there is none.
 */
export function signerOf(
  item: NotificationRequestItem,
  keys: AdyenWebhookKey[],
  authorization: string | undefined,
): string | null {
  if (!item.additionalData?.hmacSignature) return null;
  // The library types these two as its enums; the strings Adyen sent are what it signed.
  const signed: LibraryItem = {
    ...item,
    eventCode: item.eventCode as LibraryItem['eventCode'],
    success: item.success as LibraryItem['success'],
  };
  const key = keys.find(
    (k) =>
      (k.basicAuth === null || basicAuthMatches(authorization, k.basicAuth)) &&
      validator.validateHMAC(signed, k.hmacKey),
  );
  return key?.gateway ?? null;
}

/**
 * Whether a payment reference can be one Recoup sent for the account: one of its attempt keys
 * (`recovery/<accountId>/…/<n>`) or, for a key longer than Adyen takes, its SHA-256 in hex (`keyWithin`).
 * The merchant's other Adyen payments reach the same webhook; their results are none of Recoup's business.
 */
function mayBeRecoups(reference: string, accountId: string): boolean {
  const ownKey = isAttemptKey(reference) && reference.startsWith(recoveryWorkflowId(accountId, ''));
  return ownKey || /^[0-9a-f]{64}$/.test(reference);
}

/**
 * The AUTHORISATION items of payments Recoup may have made for the account, in Recoup's terms; every other
 * item is left out. The reason is kept only for a refusal: for an authorised card payment Adyen's `reason`
 * holds the authorisation code and the card's last four digits and expiry.
 */
export function authorisationsOf(notification: AdyenNotification, accountId: string): AdyenAuthorisation[] {
  return notification.notificationItems
    .map((i) => i.NotificationRequestItem)
    .filter((i) => i.eventCode === 'AUTHORISATION' && mayBeRecoups(i.merchantReference, accountId))
    .map((i) => ({
      pspReference: i.pspReference,
      merchantReference: i.merchantReference,
      success: i.success === 'true',
      reason: i.success === 'true' ? null : (i.reason ?? null),
      value: i.amount.value,
      currency: i.amount.currency,
      eventDate: i.eventDate,
    }));
}
