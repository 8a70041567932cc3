import type { EventName } from './events.js';

/** Where an event stands: being delivered, acknowledged, dead-lettered, or never sent (and why). */
export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'suppressed' | 'undeliverable';
export const deliveryStatuses: readonly DeliveryStatus[] = [
  'pending',
  'delivered',
  'failed',
  'suppressed',
  'undeliverable',
];

/**
 * When each attempt is due, counted from the first: three quick attempts at 0 s, 2 s and 8 s, then the
 * durable schedule at 1 m, 5 m, 30 m, 2 h and 24 h. An attempt that ends after the next one is due (a
 * receiver that takes its 10 s) is followed at once: attempts never overlap.
 */
export const webhookAttemptOffsetsMs: readonly number[] = [
  0,
  2_000,
  8_000,
  60_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  24 * 3_600_000,
];

/** Attempts per delivery. */
export const webhookMaxAttempts = webhookAttemptOffsetsMs.length;

/** A receiver must answer 200 within this time; anything slower is a failed attempt. */
export const webhookAcknowledgeTimeoutMs = 10_000;

/** Why an event is not sent at all, or null when it goes to the webhook URL. */
export function deliveryBlock(
  event: EventName,
  settings: { dunningEnabled: boolean; webhookUrl: string },
): 'suppressed' | 'undeliverable' | null {
  if (event === 'recovery.failed' && !settings.dunningEnabled) return 'suppressed';
  return isHttpsUrl(settings.webhookUrl) ? null : 'undeliverable';
}

/** True for an attempt the receiver acknowledged: only a 200 (within the time) does. */
export function isAcknowledged(attempt: { statusCode: number | null }): boolean {
  return attempt.statusCode === 200;
}

/** Whether a delivery has ended by itself: one of its attempts was acknowledged, or it made its last one. */
export function deliveryEnded(
  attempts: ReadonlyArray<{ attempt: number; statusCode: number | null }>,
): boolean {
  return attempts.some((a) => isAcknowledged(a) || a.attempt >= webhookMaxAttempts);
}

/**
 * Whether an event's latest delivery may still be running: it has not ended by itself (acknowledged, or its
 * last attempt made). One the settings stopped (suppressed, undeliverable) posts nothing more even while its
 * workflow waits out its schedule, so it counts as ended. Not only a pending event: a resend of a delivered
 * one leaves it `delivered` while it runs.
 */
export function mayBeUnderWay(
  status: DeliveryStatus,
  latest: { attempts: ReadonlyArray<{ attempt: number; statusCode: number | null }> },
): boolean {
  if (status === 'suppressed' || status === 'undeliverable') return false;
  return !deliveryEnded(latest.attempts);
}

/** True for an absolute https:// URL: the only kind that receives events. */
export function isHttpsUrl(url: string): boolean {
  return URL.canParse(url) && new URL(url).protocol === 'https:';
}

/** Workflow id of the first delivery of an event, and of its n-th resend (n from 1). */
export function webhookWorkflowId(eventId: string, resend?: number): string {
  return resend === undefined ? `webhook/${eventId}` : `webhook/${eventId}/resend-${resend}`;
}

/** The delivery id recorded with each attempt: `initial`, then `resend-1`, `resend-2`, ... */
export function deliveryIdOf(resend?: number): string {
  return resend === undefined ? 'initial' : `resend-${resend}`;
}

/** The resend number of the delivery recorded as `deliveryId` (the inverse of deliveryIdOf). */
export function resendNumberOf(deliveryId: string): number | undefined {
  const resend = /^resend-(\d+)$/.exec(deliveryId)?.[1];
  return resend === undefined ? undefined : Number(resend);
}

/** The workflow id of the delivery recorded as `deliveryId`. */
export function deliveryWorkflowId(eventId: string, deliveryId: string): string {
  return webhookWorkflowId(eventId, resendNumberOf(deliveryId));
}
