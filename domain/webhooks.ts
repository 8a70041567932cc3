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

/**
 * How long one run of an attempt may take: reading the event and its account, then the POST and its 10 s.
 * A run that fails before it posts (MongoDB failing over, a read slower than this allows) is run again as
 * the same attempt; it is no attempt of the schedule, since nothing was sent.
 */
export const webhookAttemptTimeoutMs = 15_000;

/**
 * How long into its run an attempt may still post: the POST's 10 s and a second to spare must fit in what is
 * left, so that a run never times out with its POST under way (run again, it would post the attempt twice).
 */
export const webhookPostDeadlineMs = webhookAttemptTimeoutMs - webhookAcknowledgeTimeoutMs - 1_000;

/**
 * How long a delivery can run, counted from its first attempt: the schedule's 24 h and 3 h to spare (slow
 * receivers, workers down for a while). A delivery older than that has ended, whatever it recorded.
 */
export const webhookDeliveryLifetimeMs = Math.max(...webhookAttemptOffsetsMs) + 3 * 3_600_000;

/**
 * How long a recorded delivery may go without an attempt before it counts as never started: publish
 * starts it right after recording it, and its first attempt is due at once.
 */
export const strandedAfterMs = 5 * 60_000;

/**
 * How long ago a stranded event's delivery may have been recorded (when the event was stored, or a resend
 * asked for) and it still be delivered by the daily run (which sees each within a day): an older one
 * (stranded before this rule, or while the daily run could not run) is marked failed instead.
 */
export const strandedResumedWithinMs = 2 * 86_400_000;

/** Why the settings keep an event from being sent: dunning off for recovery.failed, or no https URL. */
export type DeliveryBlock = 'suppressed' | 'undeliverable';

/** Why an event is not sent at all, or null when it goes to the webhook URL. */
export function deliveryBlock(
  event: EventName,
  settings: { dunningEnabled: boolean; webhookUrl: string },
): DeliveryBlock | null {
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

/** The fields of a delivery the rules below read. */
interface DeliveryFacts {
  startedAt: Date;
  attempts: ReadonlyArray<{ attempt: number; at: Date; statusCode: number | null }>;
  /** Set when the settings stopped the delivery at one of its attempts. */
  stopped?: DeliveryBlock;
}

/**
 * Why a delivery sends nothing more, or null while it may send: the settings stopped it at an attempt. The
 * stop is recorded on the delivery, since a resend of a delivered event stays delivered; a suppressed or
 * undeliverable event's status says it too (only such a stop of its latest delivery, or its publishing with
 * no delivery, sets it).
 */
export function stopOf(
  status: DeliveryStatus,
  delivery: Pick<DeliveryFacts, 'stopped'>,
): DeliveryBlock | null {
  if (delivery.stopped) return delivery.stopped;
  return status === 'suppressed' || status === 'undeliverable' ? status : null;
}

/**
 * Whether an event's latest delivery may still post: it has not ended by itself (acknowledged, or its last
 * attempt made) and the settings did not stop it (its workflow may wait out its schedule, posting nothing).
 * Not only a pending event: a resend of a delivered one leaves it `delivered` while it runs.
 */
export function mayBeUnderWay(
  status: DeliveryStatus,
  latest: Pick<DeliveryFacts, 'attempts' | 'stopped'>,
): boolean {
  return stopOf(status, latest) === null && !deliveryEnded(latest.attempts);
}

/** When a delivery's schedule began: its first attempt, or when it was recorded while it has made none. */
function scheduleStartMs(delivery: DeliveryFacts): number {
  if (delivery.attempts.length === 0) return delivery.startedAt.getTime();
  return Math.min(...delivery.attempts.map((a) => a.at.getTime()));
}

/**
 * Whether the workflow of an event's latest delivery may still run at `now`, so that the event must stay:
 * the delivery has not ended by itself and began less than `webhookDeliveryLifetimeMs` ago. One the
 * settings stopped counts too: its workflow waits out the schedule, and an attempt that finds its event
 * gone fails the workflow. A delivery started late (never started, then resumed) counts from its first
 * attempt. Data retention deletes only events for which this is false.
 */
export function deliveryMayStillRun(event: { deliveries: readonly DeliveryFacts[] }, now: Date): boolean {
  const latest = event.deliveries.at(-1);
  if (!latest || deliveryEnded(latest.attempts)) return false;
  return now.getTime() - scheduleStartMs(latest) < webhookDeliveryLifetimeMs;
}

/**
 * Whether a pending event waits on a delivery nothing started: its latest delivery was recorded at least
 * `strandedAfterMs` before `now` and has made no attempt (the process that recorded it died before
 * starting it).
 */
export function isStranded(
  event: { deliveryStatus: DeliveryStatus; deliveries: readonly DeliveryFacts[] },
  now: Date,
): boolean {
  const latest = event.deliveries.at(-1);
  if (event.deliveryStatus !== 'pending' || !latest || latest.attempts.length > 0) return false;
  return now.getTime() - latest.startedAt.getTime() >= strandedAfterMs;
}

/**
 * How long the outbox check follows a process's events once told (the process tells it before recording
 * them, `outboxWatchRenewMs` before this runs out): it looks for stranded events until those recorded in
 * that time could all be stranded, then rests until told again.
 */
export const outboxWatchMs = 2 * 60_000;

/** How long before its word to the outbox check runs out a recording process tells it again. */
export const outboxWatchRenewMs = 30_000;

/** The least time between two looks of the outbox check while events go on being recorded. */
export const outboxLookEveryMs = 60_000;

/**
 * Allowance between the clock of the process that records an event (its `startedAt`) and the check's
 * (Temporal's), and for the word reaching the check: an event is looked for this much later.
 */
const outboxClockSlackMs = 60_000;

/**
 * What the outbox check knows, in its clock: events recorded from `since` on may not have been looked for,
 * more may be recorded until `until`, and it last looked at `lookedAt`. Null while no process is recording.
 */
export interface OutboxWatch {
  since: number;
  until: number;
  lookedAt: number | null;
}

/** The watch once a process said at `nowMs` that it is recording events. */
export function outboxTold(watch: OutboxWatch | null, nowMs: number): OutboxWatch {
  const until = nowMs + outboxWatchMs;
  return watch ? { ...watch, until: Math.max(watch.until, until) } : { since: nowMs, until, lookedAt: null };
}

/**
 * When the check looks next: once the first event not yet looked for could be stranded, and no sooner than
 * `outboxLookEveryMs` after the last look.
 */
export function nextOutboxLookAt(watch: OutboxWatch): number {
  const stranded = watch.since + strandedAfterMs + outboxClockSlackMs;
  return watch.lookedAt === null ? stranded : Math.max(stranded, watch.lookedAt + outboxLookEveryMs);
}

/**
 * The watch after a look as of `asOfMs`, which found every event stranded that was recorded up to
 * `strandedAfterMs` (and the slack) before: null once that covers all that may be recorded under it.
 */
export function outboxLooked(watch: OutboxWatch, asOfMs: number): OutboxWatch | null {
  const covered = asOfMs - strandedAfterMs - outboxClockSlackMs;
  if (watch.until <= covered) return null;
  return { since: Math.max(watch.since, covered), until: watch.until, lookedAt: asOfMs };
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
function resendNumberOf(deliveryId: string): number | undefined {
  const resend = /^resend-(\d+)$/.exec(deliveryId)?.[1];
  return resend === undefined ? undefined : Number(resend);
}

/** The workflow id of the delivery recorded as `deliveryId`. */
export function deliveryWorkflowId(eventId: string, deliveryId: string): string {
  return webhookWorkflowId(eventId, resendNumberOf(deliveryId));
}
