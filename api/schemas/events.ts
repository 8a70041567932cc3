import { z } from 'zod';
import { eventNames } from '../../domain/events.js';
import { ResendFilterFields, withOrderedRange } from '../../domain/resend-filter.js';
import { deliveryStatuses } from '../../domain/webhooks.js';

/** An event id a merchant sends in a query or a body: held to the form ids have (400 otherwise). */
const EventId = z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, 'must be an event id');

/** Query of GET /api/events: newest first, a page at a time. */
export const EventsQuery = z
  .object({
    type: z.enum(eventNames).optional().describe('Only events of this kind'),
    status: z
      .enum(deliveryStatuses)
      .optional()
      .describe('Only events whose delivery stands so (failed: waiting for a resend)'),
    limit: z.coerce.number().int().min(1).max(100).default(20),
    before: EventId.optional().describe('The last eventId of the previous page: the page after it'),
  })
  .strict();

/**
 * Path of one event. The id is a path segment copied from an event, not input a merchant composes: any value
 * is looked up, so one that names no event of the account (of any length or form) is a 404, never a 400.
 */
export const EventParams = z.object({ eventId: z.string().describe('The eventId of a webhook') }).strict();

const Attempt = z.object({
  deliveryId: z.string().describe('initial, or resend-<n>'),
  attempt: z.int(),
  at: z.iso.datetime(),
  statusCode: z.int().nullable().describe('Your endpoint’s answer; null when none came'),
  error: z.string().nullable(),
  latencyMs: z.int(),
});

/** One event of the merchant's: the payload exactly as sent and every delivery attempt. */
export const EventBody = z.object({
  eventId: z.string(),
  event: z.enum(eventNames),
  createdAt: z.iso.datetime(),
  deliveryStatus: z.enum(deliveryStatuses),
  payload: z.record(z.string(), z.unknown()).describe('The webhook body as sent (also on a resend)'),
  attempts: z.array(Attempt),
});

export const EventList = z.object({
  data: z.array(EventBody),
  hasMore: z.boolean().describe('Another page follows: ask again with before = the last eventId'),
});

export const ResendBody = z.object({
  eventId: z.string(),
  deliveryId: z.string().describe('resend-<n>: its attempts appear on the event as they are made'),
});

/** The body of an action that takes no input: none, or `{}`; a field is refused like any unknown field. */
export const NoFields = z.object({}).strict().describe('No fields: send no body, or {}');

export const ResendRefusedBody = z.object({ error: z.string(), message: z.string() });

/** Body of POST /api/events/resend: which events to send again, a batch at a time, oldest first. */
export const BulkResendRequest = withOrderedRange(
  ResendFilterFields.extend({
    after: EventId.optional().describe('The previous batch’s last: carry on after that event'),
    limit: z.int().min(1).max(100).default(100).describe('Events in this batch'),
  }),
);

export const BulkResendBody = z.object({
  resent: z.array(ResendBody).describe('Events sent again, each in a new delivery'),
  skipped: z
    .array(z.object({ eventId: z.string(), reason: z.string() }))
    .describe('Selected but not sent: a delivery had started in the meantime, or the event was erased'),
  last: z.string().nullable().describe('The last event of this batch: pass it as after for the next'),
  hasMore: z.boolean().describe('More events match: ask again with after = last'),
});
