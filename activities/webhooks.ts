import { performance } from 'node:perf_hooks';
import { ApplicationFailure } from '@temporalio/common';
import {
  deliveryBlock,
  deliveryEnded,
  deliveryIdOf,
  isAcknowledged,
  stopOf,
  webhookAcknowledgeTimeoutMs,
  webhookPostDeadlineMs,
  type DeliveryBlock,
} from '../domain/webhooks.js';
import { version } from '../runtime/version.js';
import { signWebhook, webhookHeaders } from '../runtime/webhook-signature.js';
import type { EventRecord } from '../store/events.js';
import type { ActivityDeps } from './deps.js';

/** The result of one POST: acknowledged (200 in time) or not, and what the audit log records. */
export interface AttemptOutcome {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  at: string; // ISO 8601, when the request was sent
  latencyMs: number;
}

/** Why a request got no usable answer, in one line for the audit log. */
function describeFailure(error: unknown): string {
  if (error instanceof Error && error.name === 'TimeoutError')
    return `no answer within ${webhookAcknowledgeTimeoutMs / 1000} s`;
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause as { code?: unknown; message?: unknown } | undefined;
  const detail =
    typeof cause?.code === 'string' ? cause.code : typeof cause?.message === 'string' ? cause.message : '';
  return detail ? `${error.message}: ${detail}` : error.message;
}

function statusError(status: number): string | null {
  if (status === 200) return null;
  if (status >= 300 && status < 400) return `HTTP ${status}: redirects are not followed`;
  return `HTTP ${status}: only 200 acknowledges`;
}

/** Why an event the settings block is not posted, as an attempt's audit log records it. */
const blockedAttempt = {
  suppressed: 'recovery.failed is not sent while dunningEnabled is false: nothing sent',
  undeliverable: 'webhook URL is not https: nothing sent',
} as const;

/**
 * Why this attempt of the delivery posts nothing, or null when it is sent. The settings are checked at each
 * attempt, as at publish: they may have changed since (dunning turned off). A delivery the settings stopped
 * stays stopped (a resend of a delivered event too, which stays delivered), and one a later delivery (a
 * resend) replaced sends nothing more: never two at once.
 */
function holdOf(
  record: EventRecord,
  deliveryId: string,
  settings: { dunningEnabled: boolean; webhookUrl: string },
): { block: DeliveryBlock | null; error: string } | null {
  const block = deliveryBlock(record.type, settings);
  if (block) return { block, error: blockedAttempt[block] };
  const delivery = record.deliveries.find((d) => d.deliveryId === deliveryId);
  const stopped = stopOf(record.deliveryStatus, delivery ?? {});
  if (stopped) return { block: null, error: `this delivery was stopped (${stopped}): it sends nothing more` };
  const latest = record.deliveries.at(-1)?.deliveryId;
  if (latest !== deliveryId)
    return { block: null, error: `delivery ${latest ?? '(none)'} replaced this one: nothing sent` };
  return null;
}

/** Webhook delivery activities: one signed POST, and the bookkeeping of the audit log. */
export function webhookActivities(deps: ActivityDeps) {
  const { stores, clock, metrics } = deps;

  /**
   * What to send where: the stored bytes, the account's URL, secret and settings; and the event's record. A
   * read that fails (MongoDB failing over) throws and is retried; an event or account that is gone (erased,
   * the account closed) is not coming back, so that failure is not retried.
   */
  async function load(eventId: string, now: Date) {
    const record = await stores.events.get(eventId);
    if (!record) throw ApplicationFailure.nonRetryable(`No event ${eventId}`, 'EventMissing');
    const [target, account] = await Promise.all([
      stores.accounts.webhookTarget(record.accountId, now),
      stores.accounts.find(record.accountId),
    ]);
    if (!target || !account)
      throw ApplicationFailure.nonRetryable(
        `No account ${record.accountId} for event ${eventId}`,
        'AccountMissing',
      );
    return { record, ...target, settings: account.settings };
  }

  /** One signed POST of the stored body; only 200 within 10 s counts. Never follows redirects. */
  async function post(
    record: EventRecord,
    target: { url: string; secret: string },
    attempt: number,
    at: string,
  ): Promise<AttemptOutcome> {
    const started = performance.now();
    const latency = () => Math.round(performance.now() - started);
    try {
      const response = await fetch(target.url, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'User-Agent': `Recoup-Webhooks/${version}`,
          [webhookHeaders.signature]: signWebhook(record.body, target.secret),
          [webhookHeaders.eventId]: record._id,
          [webhookHeaders.attempt]: String(attempt),
        },
        body: record.body,
        redirect: 'manual',
        signal: AbortSignal.timeout(webhookAcknowledgeTimeoutMs),
      });
      const latencyMs = latency();
      await response.body?.cancel(); // the status is the answer; the body is not read
      const error = statusError(response.status);
      return { ok: error === null, statusCode: response.status, error, at, latencyMs };
    } catch (error) {
      return { ok: false, statusCode: null, error: describeFailure(error), at, latencyMs: latency() };
    }
  }

  return {
    /**
     * POSTs the stored body once, signed now, and counts the outcome. Posts nothing when the delivery was
     * already acknowledged (a worker died after recording that, and the workflow runs the attempt again):
     * the recorded acknowledgement is the answer, and the workflow ends. Posts nothing either while the
     * settings keep the event from being sent (the delivery is then recorded as stopped, and a pending event
     * marked so, as publish marks it) or once this delivery was stopped or replaced. Throws only before it
     * posts (the database did not answer, or answered too late to post within the run's time): run again,
     * the attempt is still the same one, since the receiver has seen nothing of it.
     */
    async deliverWebhook(input: {
      eventId: string;
      deliveryId: string;
      attempt: number;
    }): Promise<AttemptOutcome> {
      const started = performance.now();
      const now = clock();
      const { record, url, secret, settings } = await load(input.eventId, now);
      const at = now.toISOString();
      const index = record.deliveries.findIndex((d) => d.deliveryId === input.deliveryId);
      const acknowledged = record.deliveries[index]?.attempts.find(isAcknowledged);
      if (acknowledged) {
        const { statusCode, latencyMs } = acknowledged;
        return { ok: true, statusCode, error: null, at: acknowledged.at.toISOString(), latencyMs };
      }
      const hold = holdOf(record, input.deliveryId, {
        dunningEnabled: settings.dunningEnabled,
        webhookUrl: url,
      });
      if (hold) {
        if (hold.block)
          await stores.events.stopDelivery(record._id, { deliveryId: input.deliveryId, index }, hold.block);
        metrics.webhookAttempt(record.type, 'not_sent');
        return { ok: false, statusCode: null, error: hold.error, at, latencyMs: 0 };
      }
      if (performance.now() - started > webhookPostDeadlineMs)
        throw ApplicationFailure.retryable(
          `Reading event ${record._id} took too long to post it within the attempt's time: nothing sent`,
          'PostDeadlinePassed',
        );
      const outcome = await post(record, { url, secret }, input.attempt, at);
      if (!outcome.ok) metrics.webhookAttempt(record.type, 'failed');
      else {
        // The first acknowledgement of an event's own delivery: how long after it was recorded (a resend's
        // lag is the time until someone asked for it, not the delivery's).
        const lag = (clock().getTime() - record.createdAt.getTime()) / 1000;
        const first = record.deliveryStatus === 'pending' && input.deliveryId === deliveryIdOf();
        metrics.webhookAttempt(record.type, 'acknowledged', first ? Math.max(0, lag) : undefined);
      }
      return outcome;
    },

    /**
     * Appends one attempt to the event's audit log (idempotent per delivery and attempt number, but for an
     * attempt acknowledged when posted again after its failure was recorded); an acknowledged attempt marks
     * the event delivered in the same write.
     */
    async recordWebhookAttempt(
      input: { eventId: string; deliveryId: string; deliveryIndex: number; attempt: number } & AttemptOutcome,
    ) {
      const { eventId, deliveryId, deliveryIndex, attempt, statusCode, error, latencyMs } = input;
      const recorded = await stores.events.recordAttempt(
        eventId,
        { deliveryId, index: deliveryIndex },
        { attempt, at: new Date(input.at), statusCode, error, latencyMs },
        input.ok,
      );
      // Retrying cannot bring a deleted event back: fail the delivery workflow visibly instead.
      if (!recorded)
        throw ApplicationFailure.nonRetryable(
          `Event ${eventId} has no delivery ${deliveryId}`,
          'EventMissing',
        );
    },

    /**
     * Dead-letters the event once its latest delivery made its last attempt unacknowledged. Leaves an event
     * acknowledged or stopped by its settings as it is, and one a later delivery (a resend) is under way
     * for: a delivery it replaced may still end its schedule.
     */
    async markEventStatus(input: { eventId: string; status: 'failed' }): Promise<void> {
      const record = await stores.events.get(input.eventId);
      const latest = record?.deliveries.at(-1);
      if (!record || !latest || !deliveryEnded(latest.attempts)) return;
      const deliveries = record.deliveries.length;
      if (await stores.events.setStatus(input.eventId, input.status, ['pending'], deliveries))
        metrics.webhookFailed(record.type);
    },
  };
}

export type WebhookActivities = ReturnType<typeof webhookActivities>;
