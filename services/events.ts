import { randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { z } from 'zod';
import { dataRetentionWorkflowId } from '../domain/card-health.js';
import { EventPayloadSchema, type EventPayload, type StoredEvent } from '../domain/events.js';
import { searchAttributeKeys } from '../domain/search-attributes.js';
import {
  deliveryBlock,
  deliveryIdOf,
  deliveryWorkflowId,
  mayBeUnderWay,
  outboxWatchMs,
  outboxWatchRenewMs,
  webhookWorkflowId,
  type DeliveryStatus,
} from '../domain/webhooks.js';
import type { EventRecord } from '../store/events.js';
import type { Stores } from '../store/index.js';
import type { TaskQueues } from '../worker/task-queues.js';
import { eventsRecordedSignal } from '../workflows/data-retention.js';
import { webhookDeliveryWorkflow } from '../workflows/webhook-delivery.js';

/** How long a publisher waits to tell the outbox check before storing its event without having told it. */
const outboxTellMs = 2_000;

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

export interface EventPublisher {
  /**
   * Validates, stores and hands an event to its delivery workflow, having told the outbox check first (a
   * delivery this process never gets to start is started within minutes). Publishing the same `eventId`
   * again is a no-op that returns the stored outcome, so callers that may retry should pass a stable
   * `eventId`.
   */
  publish(
    accountId: string,
    payload: EventPayload,
    opts?: { eventId?: string },
  ): Promise<{ eventId: string; deliveryStatus: DeliveryStatus }>;
  /**
   * Publishes a stored event again, as `publish` with its own payload and eventId would: starts its latest
   * delivery if that was recorded but never started (a crash, or Temporal refusing the start, came in
   * between); the outbox check and the daily data retention run do so for every event stranded pending.
   * Null when no event has this id.
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

  /** Until when, in this process's clock, the outbox check follows the events this process records. */
  let toldUntil = 0;
  /** Until when, after telling it failed, this process does not try again (Temporal down: no wait each time). */
  let untoldUntil = 0;

  /**
   * Tells the outbox check (in the daily data retention workflow) that this process records events, before
   * it stores one: should the process die before starting the event's delivery, or Temporal refuse the
   * start, the check starts it within minutes. Tells it at most once per `outboxWatchMs -
   * outboxWatchRenewMs`, within `outboxTellMs`. False when it cannot be told (Temporal unreachable, or no
   * worker started the daily workflows yet; not tried again for `outboxWatchRenewMs` then, so that an
   * outage costs publishing no more than that wait now and then): the event is stored and published all
   * the same, and the daily run is its net.
   */
  async function tellOutboxCheck(): Promise<boolean> {
    const now = clock().getTime();
    if (now < toldUntil) return true;
    if (now < untoldUntil) return false;
    try {
      await temporal.withDeadline(Date.now() + outboxTellMs, () =>
        temporal.workflow.getHandle(dataRetentionWorkflowId(queues.recovery)).signal(eventsRecordedSignal),
      );
    } catch {
      // No check to tell, or no Temporal to tell it through (in time): the start that follows fails by
      // itself then, or the daily run finds the event.
      untoldUntil = now + outboxWatchRenewMs;
      return false;
    }
    toldUntil = now + outboxWatchMs - outboxWatchRenewMs;
    return true;
  }

  /**
   * Starts the delivery recorded as `deliveryId`, the `index`-th of the event's deliveries. `checkTold`: the
   * outbox check was told before the event was stored, so it starts the delivery if Temporal refuses.
   */
  async function startDelivery(
    record: EventRecord,
    index: number,
    deliveryId: string,
    checkTold = false,
  ): Promise<void> {
    try {
      await temporal.workflow.start(webhookDeliveryWorkflow, {
        workflowId: deliveryWorkflowId(record._id, deliveryId),
        taskQueue: queues.webhooks,
        args: [{ eventId: record._id, accountId: record.accountId, deliveryId, deliveryIndex: index }],
        // A finished delivery must never run again under the same id: that would repeat an acknowledged event.
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        // The operator finds deliveries in the Temporal UI by account and event type.
        typedSearchAttributes: [
          { key: searchAttributeKeys.accountId, value: record.accountId },
          { key: searchAttributeKeys.eventType, value: record.type },
        ],
      });
    } catch (error) {
      if (error instanceof WorkflowExecutionAlreadyStartedError) return;
      // Left pending, the outbox check told of it starts it within minutes. Untold, it would wait for the
      // daily run, and a caller that cannot publish it again under the same eventId (an API request the
      // merchant retries) never would: dead-lettered, it is listed as failed and a resend starts it (as does
      // a retried publish of that eventId).
      if (!checkTold) await stores.events.setStatus(record._id, 'failed', ['pending']);
      throw error;
    }
  }

  /**
   * Starts the event's latest delivery, recorded but never started; an event dead-lettered because that
   * start failed goes back to pending first. Returns the event's status.
   */
  async function startRecorded(
    record: EventRecord,
    index: number,
    deliveryId: string,
    checkTold = false,
  ): Promise<DeliveryStatus> {
    const revived =
      record.deliveryStatus === 'failed' &&
      (await stores.events.setStatus(record._id, 'pending', ['failed'], record.deliveries.length));
    await startDelivery(record, index, deliveryId, checkTold);
    return revived ? 'pending' : record.deliveryStatus;
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

  /**
   * The outcome publishing a stored event gives. Only its latest delivery can still be due, and only one
   * that made no attempt may never have started: it is started (a no-op while it runs). One with attempts
   * ran and is left alone: Temporal forgets an ended workflow after its retention, and starting its id
   * again would post a second delivery beside whatever runs now (a resend).
   */
  async function resume(
    record: EventRecord,
    checkTold = false,
  ): Promise<{ eventId: string; deliveryStatus: DeliveryStatus }> {
    const index = record.deliveries.length - 1;
    const latest = record.deliveries[index];
    if (!latest || latest.attempts.length > 0)
      return { eventId: record._id, deliveryStatus: record.deliveryStatus };
    const deliveryStatus = await startRecorded(record, index, latest.deliveryId, checkTold);
    return { eventId: record._id, deliveryStatus };
  }

  return {
    async publish(accountId, payload, opts = {}) {
      const parsed = EventPayloadSchema.safeParse(payload);
      if (!parsed.success)
        throw new Error(`Invalid ${String(payload.event)} event: ${z.prettifyError(parsed.error)}`);
      const block = deliveryBlock(parsed.data.event, await settingsOf(accountId));
      // Before the event is stored: from then on its delivery would be stranded were this process to die.
      const checkTold = block === null && (await tellOutboxCheck());
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
      return resume(record, checkTold);
    },

    async republish(eventId) {
      const record = await stores.events.get(eventId);
      return record ? resume(record) : null;
    },

    async resend(eventId) {
      for (;;) {
        const record = await stores.events.find(eventId);
        if (!record) throw new EventNotFoundError(`No event ${eventId}`);
        if (record.unreadable)
          throw new ResendRefusedError(
            'not_sent',
            'This event was sealed under a master key this deployment no longer has: it cannot be sent again.',
          );
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
          // Recorded but never started (a process died in between, or Temporal refused the start): start
          // that delivery now. One with attempts did run, and its history is gone (Temporal's retention): a
          // new delivery, below.
          if (state === 'missing' && lastDelivery.attempts.length === 0) {
            await startRecorded(record, last, lastDelivery.deliveryId);
            return { eventId, deliveryId: lastDelivery.deliveryId, workflowId };
          }
          // Ended without a word (terminated by hand): a new delivery too, as after any other end.
        }
        const resend = record.deliveries.filter((d) => d.deliveryId !== deliveryIdOf()).length + 1;
        // Before the delivery is recorded, as before an event is stored: were this process to die before
        // starting it, the outbox check starts it within minutes (a call again no longer selects it).
        const checkTold = await tellOutboxCheck();
        const delivery = { deliveryId: deliveryIdOf(resend), startedAt: clock(), attempts: [] };
        const seen = { deliveries: record.deliveries.length, status: record.deliveryStatus };
        if (await stores.events.addDelivery(eventId, seen, delivery)) {
          await startDelivery(record, record.deliveries.length, delivery.deliveryId, checkTold);
          return { eventId, deliveryId: delivery.deliveryId, workflowId: webhookWorkflowId(eventId, resend) };
        }
        // Another resend (or the delivery's end) changed the event first: look again.
      }
    },
  };
}
