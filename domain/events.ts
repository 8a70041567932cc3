import { z } from 'zod';
import { recommendedActions } from './declines.js';
import { PaymentMethodType } from './gateway-kinds.js';
import { CancelOffer } from './settings.js';
import { EmailAddress } from './recovery-request.js';

// The webhook event catalogue: one strict schema per event of the spec's Events table, field names and
// types exactly as the spec writes them. Pure code: the delivery workflow may import it.

const amount = z.int().min(0);
const currency = z.string().regex(/^[A-Z]{3}$/, 'must be an upper-case ISO 4217 code');
const timestamp = z.iso.datetime({ offset: true });
const text = z.string().min(1);
const score = z.number().min(0).max(100);

/** recommendedAction values of the spec (recovery.failed, recovery.blocked, status bodies). */
export const RecommendedActionSchema = z.enum(recommendedActions);

/** strategyUsed values (decisions.md, "Execute"). */
export const StrategyUsedSchema = z.enum([
  'primary',
  'backup_gateway',
  'fallback_token',
  'smart_retry',
  'all_failed',
  'holdout',
]);

const recoveryOutcome = {
  serviceTransactionId: text,
  amount,
  currency,
  message: z.string(),
  strategyUsed: StrategyUsedSchema,
  trigger: text.optional(),
};

const churnBase = {
  customerId: text,
  customerEmail: EmailAddress.nullable(),
  subscriptionId: text.nullable(),
  timestamp,
  offer: CancelOffer.optional(),
};

/** Field shapes by event name; `event` itself is added below. */
const shapes = {
  'recovery.success': { ...recoveryOutcome, gatewayTransactionToken: text },
  'recovery.failed': {
    ...recoveryOutcome,
    // null when no gateway produced a transaction (for example every gateway was unreachable).
    gatewayTransactionToken: text.nullable(),
    recommendedAction: RecommendedActionSchema,
    recommendedActionReason: z.string(),
  },
  'recovery.blocked': {
    declineCode: text,
    reason: z.string(),
    recommendedAction: RecommendedActionSchema,
    recommendedActionReason: z.string(),
    paymentMethodToken: text,
    amount,
    currency,
    timestamp,
  },
  'card.updated': {
    oldPaymentMethodToken: text,
    newPaymentMethodToken: text,
    paymentMethodType: PaymentMethodType,
    eligibleGateways: z.array(text),
    clientId: text,
    timestamp,
  },
  'predict.risk.high': {
    paymentMethodToken: text,
    riskScore: score,
    reasoning: z.string(),
    amount,
    timestamp,
  },
  'recovery.skipped_high_risk': {
    paymentMethodToken: text,
    amount,
    currency,
    riskScore: score,
    confidence: score,
    reasoning: z.string(),
    cardUpdateUrl: z.url(),
    skippedChargeId: text,
    timestamp,
  },
  'recovery.holdout': {
    clientId: text,
    paymentMethodToken: text,
    amount,
    currency,
    // Proof Mode also covers requests without an email (assignment then sticks to the token).
    customerEmail: EmailAddress.nullable(),
    message: z.string(),
    timestamp,
  },
  'recovery.proactive_retention': {
    customerEmail: EmailAddress,
    recentFailureCount: z.int().min(1),
    cancelFlowUrl: z.url(),
    cancelFlowToken: text,
    amount,
    currency,
    reason: z.string(),
    timestamp,
  },
  'card.expiring_soon': {
    clientId: text,
    paymentMethodToken: text,
    expiryMonth: z.int().min(1).max(12).optional(),
    expiryYear: z.int().min(2000).max(9999).optional(),
    expMonth: z.int().min(1).max(12).optional(),
    expYear: z.int().min(2000).max(9999).optional(),
    message: z.string(),
    daysUntilExpiry: z.int().optional(),
    upcomingInvoiceAmount: amount.optional(),
    customerEmail: EmailAddress.optional(),
    cardUpdateUrl: z.url().optional(),
    preemptive: z.literal(true).optional(),
    timestamp: timestamp.optional(),
  },
  'recovery.3ds_recommended': {
    paymentMethodToken: text,
    amount,
    currency,
    declineCode: text,
    reason: z.string(),
  },
  'recovery.card_expired': {
    clientId: text,
    paymentMethodToken: text,
    amount,
    currency,
    message: z.string(),
  },
  'recovery.authentication_required': {
    paymentMethodToken: text,
    amount,
    currency,
    declineCode: text,
    customerAuthRequired: z.literal(true),
    reason: z.string(),
  },
  'churn.flow.retained': { ...churnBase, outcome: z.literal('retained') },
  'churn.flow.paused': { ...churnBase, outcome: z.literal('paused') },
  'churn.flow.downgraded': { ...churnBase, outcome: z.literal('downgraded') },
  'churn.flow.cancelled': { ...churnBase, outcome: z.literal('cancelled') },
  // Sent on request (POST /api/events/test, `recoup webhooks test`) to check an endpoint; not in the spec.
  'webhook.test': { clientId: text, message: z.string(), timestamp },
} as const;

type Shapes = typeof shapes;
/** The name of every event kind, as it appears in the body's `event` field. */
export type EventName = keyof Shapes;
export const eventNames = Object.keys(shapes) as EventName[];

/** card.expiring_soon names its expiry either way; the pre-emptive variant carries its link and time. */
function checkExpiringSoon(value: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const hasPair = (m: string, y: string) => value[m] !== undefined && value[y] !== undefined;
  if (!hasPair('expiryMonth', 'expiryYear') && !hasPair('expMonth', 'expYear'))
    ctx.addIssue({
      code: 'custom',
      path: ['expiryMonth'],
      message: 'expiryMonth/expiryYear or expMonth/expYear',
    });
  if (value.preemptive === true)
    for (const field of ['cardUpdateUrl', 'timestamp'] as const)
      if (value[field] === undefined)
        ctx.addIssue({ code: 'custom', path: [field], message: 'Required on the pre-emptive variant' });
}

function payloadSchema<N extends EventName>(name: N) {
  const schema = z.object({ event: z.literal(name), ...shapes[name] }).strict();
  return name === 'card.expiring_soon' ? schema.superRefine(checkExpiringSoon) : schema;
}

/** What the publisher adds to every body: stable across retries and resends. */
const envelope = { eventId: text, createdAt: z.iso.datetime() };

function storedSchema<N extends EventName>(name: N) {
  const schema = z.object({ event: z.literal(name), ...shapes[name], ...envelope }).strict();
  return name === 'card.expiring_soon' ? schema.superRefine(checkExpiringSoon) : schema;
}

type PayloadSchemas = { [N in EventName]: ReturnType<typeof payloadSchema<N>> };
type StoredSchemas = { [N in EventName]: ReturnType<typeof storedSchema<N>> };

/** One schema per event name, as emitted by the engine (without eventId and createdAt). */
export const eventSchemas = Object.fromEntries(
  eventNames.map((n) => [n, payloadSchema(n)]),
) as PayloadSchemas;

/** One schema per event name, as a receiver gets it (with eventId and createdAt). */
const storedEventSchemas = Object.fromEntries(eventNames.map((n) => [n, storedSchema(n)])) as StoredSchemas;

/** Any event as the engine emits it: a union discriminated on `event`. */
export type EventPayload = { [N in EventName]: z.infer<PayloadSchemas[N]> }[EventName];

/** An event body as stored, signed and posted: the payload plus `eventId` and `createdAt` (ISO 8601). */
export type StoredEvent = EventPayload & { eventId: string; createdAt: string };

type AnyPayloadSchema = PayloadSchemas[EventName];
type AnyStoredSchema = StoredSchemas[EventName];

/** Any emitted payload, validated by the schema its `event` names. */
export const EventPayloadSchema = z.discriminatedUnion(
  'event',
  Object.values(eventSchemas) as [AnyPayloadSchema, ...AnyPayloadSchema[]],
);

/** Any received body (JSON-parsed), validated by the schema its `event` names. */
export const StoredEventSchema = z.discriminatedUnion(
  'event',
  Object.values(storedEventSchemas) as [AnyStoredSchema, ...AnyStoredSchema[]],
);
