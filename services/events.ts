import { randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { z } from 'zod';
import { EventPayloadSchema, type EventPayload, type StoredEvent } from '../domain/events.js';
import { searchAttributeKeys } from '../domain/search-attributes.js';
import { deliveryBlock, deliveryIdOf, webhookWorkflowId, type DeliveryStatus } from '../domain/webhooks.js';
import type { EventRecord } from '../store/events.js';
import type { Stores } from '../store/index.js';
import type { TaskQueues } from '../worker/task-queues.js';
import { webhookDeliveryWorkflow } from '../workflows/webhook-delivery.js';

/** No event has this id. */
export class EventNotFoundError extends Error {
  override name = 'EventNotFoundError';
}

/** A resend the account's settings forbid (dunning off for recovery.failed, or no https webhook URL). */
export class ResendRefusedError extends Error {
  override name = 'ResendRefusedError';
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
      if (record.deliveryStatus === 'pending' && record.deliveries.length > 0) await startDelivery(record, 0);
      return { eventId: record._id, deliveryStatus: record.deliveryStatus };
    },

    async resend(eventId) {
      let record = await stores.events.get(eventId);
      if (!record) throw new EventNotFoundError(`No event ${eventId}`);
      const block = deliveryBlock(record.type, await settingsOf(record.accountId));
      if (block === 'suppressed')
        throw new ResendRefusedError('recovery.failed events are not sent while dunningEnabled is false');
      if (block === 'undeliverable')
        throw new ResendRefusedError('the account has no https:// webhook URL; nothing can be sent');
      for (;;) {
        const resend = record.deliveries.filter((d) => d.deliveryId !== deliveryIdOf()).length + 1;
        const delivery = { deliveryId: deliveryIdOf(resend), startedAt: clock(), attempts: [] };
        if (await stores.events.addDelivery(eventId, record.deliveries.length, delivery)) {
          await stores.events.setStatus(eventId, 'pending', ['failed', 'undeliverable', 'suppressed']);
          await startDelivery(record, record.deliveries.length, resend);
          return { eventId, deliveryId: delivery.deliveryId, workflowId: webhookWorkflowId(eventId, resend) };
        }
        // Another resend appended first: take the next number.
        record = await stores.events.get(eventId);
        if (!record) throw new EventNotFoundError(`No event ${eventId}`);
      }
    },
  };
}
