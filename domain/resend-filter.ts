import { z } from 'zod';
import { eventNames } from './events.js';

/** The delivery statuses a bulk resend selects by: every one but `pending` (a delivery under way). */
export const resendableStatuses = ['failed', 'delivered', 'suppressed', 'undeliverable'] as const;

/**
 * Which of an account's events a bulk resend sends again: the fields of POST /api/events/resend's body
 * (with its paging) and the flags of `recoup webhooks resend-all`. Build on it with `withOrderedRange`.
 */
export const ResendFilterFields = z
  .object({
    status: z
      .enum(resendableStatuses)
      .default('failed')
      .describe('Events whose delivery stands so; by default failed (every attempt of the schedule failed)'),
    type: z
      .enum(eventNames)
      .optional()
      .describe('Only events of this kind; without it every kind but webhook.test'),
    from: z.iso.datetime({ offset: true }).optional().describe('Only events created at or after this time'),
    to: z.iso.datetime({ offset: true }).optional().describe('Only events created before this time'),
  })
  .strict();

/** A schema built on ResendFilterFields, held to `to` after `from`. */
export function withOrderedRange<T extends z.ZodType<{ from?: string; to?: string }>>(schema: T) {
  return schema.refine((f) => !f.from || !f.to || Date.parse(f.from) < Date.parse(f.to), {
    path: ['to'],
    message: 'must be after from',
  });
}

export const ResendFilter = withOrderedRange(ResendFilterFields);
export type ResendFilter = z.infer<typeof ResendFilter>;
