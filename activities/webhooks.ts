import { performance } from 'node:perf_hooks';
import { ApplicationFailure } from '@temporalio/common';
import { deliveryIdOf, isHttpsUrl, webhookAcknowledgeTimeoutMs } from '../domain/webhooks.js';
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

/** Webhook delivery activities: one signed POST, and the bookkeeping of the audit log. */
export function webhookActivities(deps: ActivityDeps) {
  const { stores, clock, metrics } = deps;

  /** What to send where: the stored bytes, the account's URL and signing secret; and the event's record. */
  async function load(eventId: string, now: Date) {
    const record = await stores.events.get(eventId);
    if (!record) throw new Error(`No event ${eventId}`);
    const target = await stores.accounts.webhookTarget(record.accountId, now);
    if (!target) throw new Error(`No account ${record.accountId} for event ${eventId}`);
    return { record, ...target };
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
    /** POSTs the stored body once, signed now (nothing to a URL that is not https), and counts the outcome. */
    async deliverWebhook(input: {
      eventId: string;
      deliveryId: string;
      attempt: number;
    }): Promise<AttemptOutcome> {
      const now = clock();
      const { record, url, secret } = await load(input.eventId, now);
      const at = now.toISOString();
      if (!isHttpsUrl(url)) {
        metrics.webhookAttempt(record.type, 'not_sent');
        return {
          ok: false,
          statusCode: null,
          error: 'webhook URL is not https: nothing sent',
          at,
          latencyMs: 0,
        };
      }
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
     * Appends one attempt to the event's audit log (idempotent per delivery and attempt number); an
     * acknowledged attempt marks the event delivered in the same write.
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

    /** Marks a delivery that exhausted its attempts; never overwrites one acknowledged by another. */
    async markEventStatus(input: { eventId: string; status: 'failed' }): Promise<void> {
      if (!(await stores.events.setStatus(input.eventId, input.status, ['pending']))) return;
      const record = await stores.events.get(input.eventId);
      if (record) metrics.webhookFailed(record.type);
    },
  };
}

export type WebhookActivities = ReturnType<typeof webhookActivities>;
