import { proxyLocalActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { AttemptOutcome } from '../activities/webhooks.js';
import { webhookAttemptOffsetsMs, webhookAttemptTimeoutMs, webhookMaxAttempts } from '../domain/webhooks.js';

/** One delivery of one stored event: ids only, the activity loads the body and the secret. */
export interface WebhookDeliveryInput {
  eventId: string;
  accountId: string;
  deliveryId: string;
  /** The delivery's position in the event's deliveries (they are only ever appended). */
  deliveryIndex: number;
}

// One POST per attempt: the workflow owns the schedule. Temporal runs an attempt again only when a run
// failed before posting (the event or account could not be read: MongoDB failing over), for about 10
// minutes: such a failure uses up no attempt, and the receiver first sees the attempt under its own
// number. Past that (an event that can never be read: sealed under a lost master key) the attempt counts
// as failed, with no status code, so that the schedule still ends and the event is dead-lettered. A run posts only while the POST's 10 s still fit in its timeout (`webhookPostDeadlineMs`),
// so no run times out, to be run again, mid-POST.
// A local activity: the POST leaves in the workflow task that schedules it, with no wait for an activity
// task to be dispatched. A worker that dies during the POST sends it again when the workflow resumes, as
// the same attempt (receivers deduplicate by eventId: delivery is at least once either way).
const { deliverWebhook } = proxyLocalActivities<Activities>({
  startToCloseTimeout: webhookAttemptTimeoutMs,
  // A retry waits on a workflow timer, not in the worker holding the workflow task. 16 tries: 10 minutes.
  localRetryThreshold: '1 second',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    maximumAttempts: 16,
  },
});

// Bookkeeping in MongoDB: idempotent, retried until the database answers. Local activities, so recording
// an attempt happens in the workflow task that sees its outcome, without a round trip through a task queue.
// Past 10 s a retry waits on a workflow timer, 5 minutes apart at most: waiting in the worker, it would
// heartbeat the workflow task every 8 s (3 history events each) for as long as MongoDB is down.
const { recordWebhookAttempt, markEventStatus } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  localRetryThreshold: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});

/**
 * Runs one attempt. Only a failure that retrying did not cure gets here (the event or its account is gone,
 * or 10 minutes of retries): it is a failed attempt with no status code, and recording it fails the
 * workflow when the event is gone.
 */
async function attempt(input: WebhookDeliveryInput, n: number): Promise<AttemptOutcome> {
  const started = Date.now();
  try {
    return await deliverWebhook({ eventId: input.eventId, deliveryId: input.deliveryId, attempt: n });
  } catch (error) {
    const cause =
      error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
    return {
      ok: false,
      statusCode: null,
      error: `attempt did not complete: ${cause}`,
      at: new Date(started).toISOString(),
      latencyMs: Date.now() - started,
    };
  }
}

/**
 * Delivers an event on the schedule of the spec: attempts at 0 s, 2 s, 8 s, 1 m, 5 m, 30 m, 2 h and 24 h
 * from the first, never overlapping (an attempt due while the previous one still runs, or still waits for
 * the database, follows it at once). Only a 200 acknowledges; after the last failure the event is marked
 * failed (the audit log's dead letter) for a manual resend.
 */
export async function webhookDeliveryWorkflow(
  input: WebhookDeliveryInput,
): Promise<{ delivered: boolean; attempts: number }> {
  const firstAt = Date.now(); // workflow time: deterministic, and virtual on the time-skipping server
  for (let n = 1; n <= webhookMaxAttempts; n++) {
    const due = firstAt + (webhookAttemptOffsetsMs[n - 1] ?? 0);
    if (due > Date.now()) await sleep(due - Date.now());
    const outcome = await attempt(input, n);
    // An acknowledged attempt also marks the event delivered, in the same write.
    await recordWebhookAttempt({
      eventId: input.eventId,
      deliveryId: input.deliveryId,
      deliveryIndex: input.deliveryIndex,
      attempt: n,
      ...outcome,
    });
    if (outcome.ok) return { delivered: true, attempts: n };
  }
  await markEventStatus({ eventId: input.eventId, status: 'failed' });
  return { delivered: false, attempts: webhookMaxAttempts };
}
