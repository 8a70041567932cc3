import { ResendRefusedError, type EventPublisher } from '../../services/events.js';
import { resendBatch } from '../../services/event-resend.js';
import { sendTestEvent } from '../../services/webhook-test.js';
import type { EventRecord } from '../../store/events.js';
import type { Stores } from '../../store/index.js';
import { pageOf } from '../../store/paging.js';
import { accountOf } from '../context.js';
import { badRequest, conflict, notFound } from '../http-error.js';
import { reply, route } from '../route.js';
import { ErrorBody } from '../schemas/errors.js';
import {
  BulkResendBody,
  BulkResendRequest,
  EventBody,
  EventList,
  EventParams,
  EventsQuery,
  NoFields,
  ResendBody,
  ResendRefusedBody,
} from '../schemas/events.js';

interface Deps {
  stores: Stores;
  events: EventPublisher;
  clock: () => Date;
}

/** An event as the merchant sees it: what was sent, and every attempt of every delivery. */
function eventBody(record: EventRecord) {
  return {
    eventId: record._id,
    event: record.type,
    createdAt: record.createdAt.toISOString(),
    deliveryStatus: record.deliveryStatus,
    payload: record.payload,
    attempts: record.deliveries.flatMap((d) =>
      d.attempts.map((a) => ({
        deliveryId: d.deliveryId,
        attempt: a.attempt,
        at: a.at.toISOString(),
        statusCode: a.statusCode,
        error: a.error,
        latencyMs: a.latencyMs,
      })),
    ),
  };
}

/** A refused resend as the API answers it (409). */
function refusal(error: ResendRefusedError) {
  const titles = { not_sent: 'Event not sent', under_way: 'Delivery under way' };
  return conflict({ error: titles[error.reason], message: error.message });
}

/**
 * The merchant's own view of its webhook events: to catch up after its endpoint was down (events whose
 * whole schedule failed wait as `failed`) and to send one again without asking an operator.
 */
export function eventRoutes({ stores, events, clock }: Deps) {
  /** The account's event, or 404 (another account's included). */
  async function ownEvent(accountId: string, eventId: string): Promise<EventRecord> {
    const record = await stores.events.find(eventId);
    if (!record || record.accountId !== accountId) throw notFound('Event not found');
    return record;
  }

  /** The account's event a page carries on from (`field` names it in a 400), or null without one. */
  async function placeOf(accountId: string, field: string, eventId: string | undefined) {
    if (!eventId) return null;
    const record = await stores.events.find(eventId);
    if (record?.accountId !== accountId)
      throw badRequest({ [field]: ['must be an eventId of this account'] });
    return record;
  }

  return [
    route({
      method: 'get',
      path: '/api/events',
      tag: 'Events',
      summary: 'The account’s webhook events, newest first, with their delivery attempts',
      auth: 'secret',
      query: EventsQuery,
      responses: { 200: { description: 'A page of events', schema: EventList } },
      async handle(ctx, { query }) {
        const accountId = accountOf(ctx).id;
        const before = await placeOf(accountId, 'before', query.before);
        const page = await pageOf(query.limit, (limit) =>
          stores.events.list({
            accountId,
            ...(query.type ? { types: [query.type] } : {}),
            ...(query.status ? { status: query.status } : {}),
            ...(before ? { after: before } : {}),
            limit,
          }),
        );
        return reply(200, { data: page.docs.map(eventBody), hasMore: page.hasMore });
      },
    }),
    route({
      method: 'post',
      path: '/api/events/test',
      tag: 'Events',
      summary: 'Send a signed webhook.test event to the account’s webhook URL and wait for the first attempt',
      description:
        'Delivered like every event (same signature, headers and retry schedule). 200 once the first attempt has an outcome (see deliveryStatus and attempts: delivered, or the status code or error the endpoint answered); 202 when no worker made it within 15 s. At most 10 a minute per key.',
      auth: 'secret',
      rateLimit: 'webhookTest',
      body: NoFields,
      responses: {
        200: { description: 'The test event with its first attempt', schema: EventBody },
        202: {
          description: 'Not attempted yet; follow it with GET /api/events/{eventId}',
          schema: EventBody,
        },
      },
      async handle(ctx) {
        const { record, attempted } = await sendTestEvent({ stores, events, clock }, accountOf(ctx).id);
        return reply(attempted ? 200 : 202, eventBody(record));
      },
    }),
    route({
      method: 'post',
      path: '/api/events/resend',
      tag: 'Events',
      summary: 'Send the account’s failed (or other) events again, oldest first, a batch at a time',
      description:
        'For catching up after your endpoint was down longer than the retry schedule lasts: each selected event gets a new delivery of the same eventId and body on the full schedule, as a single resend does. Events whose delivery is under way are skipped; kinds your settings keep from being sent are left out (409 when asked for by type, or when the account has no https URL). Carry on with after = last while hasMore. At most 10 batches a minute per key.',
      auth: 'secret',
      rateLimit: 'eventResend',
      body: BulkResendRequest,
      responses: {
        202: { description: 'The batch has been handed to delivery', schema: BulkResendBody },
        409: {
          description: 'Nothing selected can be sent under the account’s settings',
          schema: ResendRefusedBody,
        },
      },
      async handle(ctx, { body }) {
        const accountId = accountOf(ctx).id;
        const after = await placeOf(accountId, 'after', body.after);
        try {
          const batch = await resendBatch({ stores, events }, accountId, {
            ...body,
            after: after ?? undefined,
          });
          return reply(202, batch);
        } catch (error) {
          throw error instanceof ResendRefusedError ? refusal(error) : error;
        }
      },
    }),
    route({
      method: 'get',
      path: '/api/events/:eventId',
      tag: 'Events',
      summary: 'One webhook event with its delivery attempts',
      auth: 'secret',
      params: EventParams,
      responses: {
        200: { description: 'The event', schema: EventBody },
        404: { description: 'No event of this account has this id', schema: ErrorBody },
      },
      handle: async (ctx, { params }) =>
        reply(200, eventBody(await ownEvent(accountOf(ctx).id, params.eventId))),
    }),
    route({
      method: 'post',
      path: '/api/events/:eventId/resend',
      tag: 'Events',
      summary: 'Send an event again: the same eventId and body, signed at send time, on the full schedule',
      description:
        'Refused (409) while a delivery of the event is still under way, and for events that are not sent at all (recovery.failed with dunning off; an account without an https webhook URL).',
      auth: 'secret',
      params: EventParams,
      body: NoFields,
      responses: {
        202: { description: 'A new delivery has started', schema: ResendBody },
        404: { description: 'No event of this account has this id', schema: ErrorBody },
        409: {
          description: 'Not sent: a delivery is under way, or this event is never sent',
          schema: ResendRefusedBody,
        },
      },
      async handle(ctx, { params }) {
        const record = await ownEvent(accountOf(ctx).id, params.eventId);
        try {
          const { eventId, deliveryId } = await events.resend(record._id);
          return reply(202, { eventId, deliveryId });
        } catch (error) {
          throw error instanceof ResendRefusedError ? refusal(error) : error;
        }
      },
    }),
  ];
}
