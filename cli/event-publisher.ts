import { createEventPublisher, type EventPublisher } from '../services/events.js';
import type { CliContext } from './context.js';

/** The service's event publisher on the CLI's stores and Temporal: how the CLI sends a webhook event. */
export async function publisherOf(ctx: CliContext): Promise<EventPublisher> {
  return createEventPublisher({
    stores: ctx.stores,
    temporal: await ctx.temporal(),
    queues: ctx.queues,
    clock: ctx.clock,
  });
}
