import { randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { z } from 'zod';
import { EventPayloadSchema, type EventPayload, type StoredEvent } from '../domain/events.js';
import { searchAttributeKeys } from '../domain/search-attributes.js';
import {
  deliveryBlock,
  deliveryIdOf,
  deliveryWorkflowId,
  resendNumberOf,
  webhookMaxAttempts,
  webhookWorkflowId,
  type DeliveryStatus,
} from '../domain/webhooks.js';
import type { Delivery, EventRecord } from '../store/events.js';
import type { Stores } from '../store/index.js';
import type { TaskQueues } from '../worker/task-queues.js';
import { webhookDeliveryWorkflow } from '../workflows/webhook-delivery.js';

/** No event has this id. */
export class EventNotFoundError extends Error {
  override name = 'EventNotFoundError';
}

/**
 * A resend refused: the account's settings keep the event from being sent (`not_sent`: dunning off for
 * recovery.failed, or no https webhook URL), or a delivery of it is still under way (`under_way`).
 */
export class ResendRefusedError extends Error {
  override name = 'ResendRefusedError';
  constructor(
    readonly reason: 'not_sent' | 'under_way',
    message: string,
  ) {
    super(message);
  }
}

/** Why an event the settings block is not sent, as a resend refusal says it. */
export const notSentReason = {
  suppressed: 'recovery.failed events are not sent while dunningEnabled is false',
  undeliverable: 'the account has no https:// webhook URL; nothing can be sent',
} as const;

/**
 * Whether the event's latest delivery may still be running: the event waits on it (pending), or was
 * acknowledged before and this later delivery has neither been acknowledged nor made all its attempts.
 */
function mayBeUnderWay(status: DeliveryStatus, latest: Delivery): boolean {
  if (status === 'pending') return true;
  if (status !== 'delivered') return false;
  const ended =
    latest.attempts.some((a) => a.statusCode === 200) || latest.attempts.length >= webhookMaxAttempts;
  return !ended;
}

export interface EventPublisher {
  /**
   * Validates, stores and hands an event to its delivery workflow. Publishing the same `eventId` again is
   * a no-op that returns the stored outcome, so callers that may retry should pass a stable `eventId`.
   */
  publish(
    accountId: string,
    payload: EventPayload,
    opts?: { eventId?: string },
  ): Promise<{ eventId: string; deliveryStatus: DeliveryStatus }>;
  /**
   * Publishes a stored event again, as `publish` with its own payload and eventId would: starts its first
   * delivery if a crash came between storing the event and starting that. Null when no event has this id.
   */
  republish(eventId: string): Promise<{ eventId: string; deliveryStatus: DeliveryStatus } | null>;
  /** Delivers a stored event again (same body and eventId, signed at send time) in a new delivery. */
  resend(eventId: string): Promise<{ eventId: string; deliveryId: string; workflowId: string }>;
}

/** The event outbox: MongoDB first (the audit log), then one Temporal workflow per delivery. */
export function createEventPublisher(deps: {
  stores: Stores;
  temporal: Client;
  queues: TaskQueues;
  clock: () => Date;
}): EventPublisher {
  const { stores, temporal, queues, clock } = deps;

  async function settingsOf(accountId: string) {
    const account = await stores.accounts.find(accountId);
    if (!account) throw new Error(`No account ${accountId} to publish events for`);
    return account.settings;
  }

  /** Starts the delivery numbered `resend` (none: the first), the `index`-th of the event's deliveries. */
  async function startDelivery(record: EventRecord, index: number, resend?: number): Promise<void> {
    try {
      await temporal.workflow.start(webhookDeliveryWorkflow, {
        workflowId: webhookWorkflowId(record._id, resend),
        taskQueue: queues.webhooks,
        args: [
          {
            eventId: record._id,
            accountId: record.accountId,
            deliveryId: deliveryIdOf(resend),
            deliveryIndex: index,
          },
        ],
        // A finished delivery must never run again under the same id: that would repeat an acknowledged event.
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        // The operator finds deliveries in the Temporal UI by account and event type.
        typedSearchAttributes: [
          { key: searchAttributeKeys.accountId, value: record.accountId },
          { key: searchAttributeKeys.eventType, value: record.type },
        ],
      });
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
  }

  /** Whether a delivery workflow runs, has ended, or was never started. */
  async function workflowState(workflowId: string): Promise<'running' | 'ended' | 'missing'> {
    try {
      const { status } = await temporal.workflow.getHandle(workflowId).describe();
      return status.name === 'RUNNING' ? 'running' : 'ended';
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return 'missing';
      throw error;
    }
  }

  /** The outcome publishing a stored event gives: its first delivery is started if it may never have been. */
  async function resume(record: EventRecord): Promise<{ eventId: string; deliveryStatus: DeliveryStatus }> {
    if (record.deliveryStatus === 'pending' && record.deliveries.length > 0) await startDelivery(record, 0);
    return { eventId: record._id, deliveryStatus: record.deliveryStatus };
  }

  return {
    async publish(accountId, payload, opts = {}) {
      const parsed = EventPayloadSchema.safeParse(payload);
      if (!parsed.success)
        throw new Error(`Invalid ${String(payload.event)} event: ${z.prettifyError(parsed.error)}`);
      const block = deliveryBlock(parsed.data.event, await settingsOf(accountId));
      const now = clock();
      const eventId = opts.eventId ?? randomUUID();
      const stored: StoredEvent = { ...parsed.data, eventId, createdAt: now.toISOString() };
      const { record } = await stores.events.insert({
        _id: eventId,
        accountId,
        type: stored.event,
        payload: stored,
        body: JSON.stringify(stored), // serialised once: these exact bytes are signed and posted
        createdAt: now,
        deliveryStatus: block ?? 'pending',
        deliveries: block ? [] : [{ deliveryId: deliveryIdOf(), startedAt: now, attempts: [] }],
      });
      // Also when the event already existed: its delivery may not have started before a crash.
      return resume(record);
    },

    async republish(eventId) {
      const record = await stores.events.get(eventId);
      return record ? resume(record) : null;
    },

    async resend(eventId) {
      for (;;) {
        const record = await stores.events.get(eventId);
        if (!record) throw new EventNotFoundError(`No event ${eventId}`);
        const block = deliveryBlock(record.type, await settingsOf(record.accountId));
        if (block) throw new ResendRefusedError('not_sent', notSentReason[block]);
        const last = record.deliveries.length - 1;
        const lastDelivery = record.deliveries[last];
        if (lastDelivery && mayBeUnderWay(record.deliveryStatus, lastDelivery)) {
          const workflowId = deliveryWorkflowId(eventId, lastDelivery.deliveryId);
          const state = await workflowState(workflowId);
          if (state === 'running')
            throw new ResendRefusedError(
              'under_way',
              'A delivery of this event is still under way; resend it once it has ended.',
            );
          // Recorded but never started (a process died in between): start that delivery now. One with
          // attempts did run, and its history is gone (Temporal's retention): a new delivery, below.
          if (state === 'missing' && lastDelivery.attempts.length === 0) {
            await startDelivery(record, last, resendNumberOf(lastDelivery.deliveryId));
            return { eventId, deliveryId: lastDelivery.deliveryId, workflowId };
          }
          // Ended without a word (terminated by hand): a new delivery too, as after any other end.
        }
        const resend = record.deliveries.filter((d) => d.deliveryId !== deliveryIdOf()).length + 1;
        const delivery = { deliveryId: deliveryIdOf(resend), startedAt: clock(), attempts: [] };
        const seen = { deliveries: record.deliveries.length, status: record.deliveryStatus };
        if (await stores.events.addDelivery(eventId, seen, delivery)) {
          await startDelivery(record, record.deliveries.length, resend);
          return { eventId, deliveryId: delivery.deliveryId, workflowId: webhookWorkflowId(eventId, resend) };
        }
        // Another resend (or the delivery's end) changed the event first: look again.
      }
    },
  };
}
