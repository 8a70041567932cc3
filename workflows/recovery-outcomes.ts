import { isCancellation, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { mayBeUnflaggedAuthentication, type RecommendedAction } from '../domain/declines.js';
import { classifyInWorkflow } from './declines.js';
import type { Prediction, StopReason, Strategy } from '../domain/recovery.js';
import type { RecoveryContext } from './recovery-context.js';

const nowIso = () => new Date().toISOString();

/** Link activities mint and emit in one step, so a link's token never enters workflow history. */
const { offerProactiveRetention, reportHighRiskSkip } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});
/** A billing platform that is down is retried for up to three days; the payment is recovered regardless. */
const { writeBackPayment } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  scheduleToCloseTimeout: '3 days',
  retry: { initialInterval: '30 seconds', backoffCoefficient: 2, maximumInterval: '1 hour' },
});

/** The planner skipped the retry as too unlikely to succeed: recovery.skipped_high_risk with a card-update link. */
export async function skipHighRisk(ctx: RecoveryContext, ai: Prediction): Promise<void> {
  await reportHighRiskSkip({
    accountId: ctx.input.accountId,
    transactionId: ctx.input.transactionId,
    // The failure that follows the skip names the recovery so; the merchant is given that id.
    skippedChargeId: await ctx.failureId(),
    eventId: ctx.eventId('recovery.skipped_high_risk'),
    successScore: ai.score,
    confidence: ai.confidence,
    reasoning: ai.reasoning,
  });
}

/** The payment was collected. */
export async function succeed(
  ctx: RecoveryContext,
  o: {
    strategy: Strategy;
    gatewayTransactionId: string;
    gatewaysAttempted: number;
    ai: Prediction;
    trigger?: string;
  },
): Promise<void> {
  const { request: r } = ctx.input;
  await ctx.conclude(
    'succeeded',
    {
      strategyUsed: o.strategy,
      recoveredAt: nowIso(),
      gatewayTransactionId: o.gatewayTransactionId,
      ai: o.ai,
      recommendedAction: null,
      recommendedActionReason: null,
      nextAttemptAt: null,
    },
    {
      kind: 'succeeded',
      strategy: o.strategy,
      gatewaysAttempted: o.gatewaysAttempted,
      gatewayTransactionId: o.gatewayTransactionId,
      ai: o.ai,
    },
  );
  await ctx.emit({
    event: 'recovery.success',
    serviceTransactionId: ctx.publicId,
    gatewayTransactionToken: o.gatewayTransactionId,
    amount: ctx.amount,
    currency: r.currency,
    message: 'Payment recovered',
    strategyUsed: o.strategy,
    ...(o.trigger ? { trigger: o.trigger } : {}),
  });
  if (ctx.input.connector) await writeBack(ctx, o.gatewayTransactionId);
}

/** Records the payment on the billing platform's invoice that reported the failure. */
async function writeBack(ctx: RecoveryContext, gatewayTransactionId: string): Promise<void> {
  const { accountId, transactionId, request: r, connector } = ctx.input;
  if (!connector) return;
  try {
    await writeBackPayment({
      accountId,
      transactionId,
      platform: connector.platform,
      invoiceId: connector.invoiceId,
      amount: ctx.amount,
      currency: r.currency,
      gatewayTransactionId,
      recoveredAt: Date.now(),
    });
  } catch (error) {
    if (isCancellation(error)) throw error;
    // Out of retries: the operator finds `writeBack: failed` on the recovery and the failure in its history.
    await ctx.record('succeeded', { writeBack: 'failed' });
  }
}

/**
 * Stopped before another attempt, because the payment was made outside Recoup (reported by a billing
 * platform or the merchant) or is no longer owed: no more attempts, no webhook (the merchant knows).
 */
export async function stop(ctx: RecoveryContext, reason: StopReason): Promise<void> {
  if (reason === 'paid_elsewhere')
    return ctx.record('paid_elsewhere', {
      nextAttemptAt: null,
      recommendedAction: null,
      recommendedActionReason: null,
    });
  await ctx.record('stopped', {
    nextAttemptAt: null,
    recommendedAction: 'monitor',
    recommendedActionReason: 'The merchant stopped the recovery: the payment is no longer owed.',
  });
}

/**
 * A charge found the payment no longer owed (a billing platform's subscription collected or cancelled
 * meanwhile, unbeknown to Recoup): stopped as if the platform had reported it. Nothing was charged, nothing
 * is owed, so no webhook, no card-update request and no retention offer; `lastDeclineCode` says why.
 */
export async function stopNotOwed(ctx: RecoveryContext, declineCode: string): Promise<void> {
  await ctx.record('stopped', {
    nextAttemptAt: null,
    lastDeclineCode: declineCode,
    recommendedAction: 'monitor',
    recommendedActionReason: classifyInWorkflow(declineCode).reason,
  });
}

/** What ending a recovery as failed needs. */
interface Failure {
  declineCode: string | null;
  lastDeclineCode: string;
  gatewaysAttempted: number;
  gatewayTransactionId: string | null;
  ai: Prediction;
  reason?: string;
  action?: RecommendedAction;
  trigger?: string;
  scaCountry: boolean;
}

/**
 * Every strategy is exhausted (or the rest is predicted to fail). The primary card's `declineCode` sets the
 * recommended action; `lastDeclineCode` is the latest decline of any card, for the status record.
 */
export async function fail(ctx: RecoveryContext, o: Failure): Promise<void> {
  const { request: r } = ctx.input;
  const info = classifyInWorkflow(o.declineCode);
  const action = o.action ?? info.recommendedAction;
  const reason = o.reason ?? info.reason;
  await ctx.conclude(
    'failed',
    {
      strategyUsed: 'all_failed',
      recommendedAction: action,
      recommendedActionReason: reason,
      ai: o.ai,
      nextAttemptAt: null,
      lastDeclineCode: o.lastDeclineCode,
    },
    {
      kind: 'failed',
      gatewaysAttempted: o.gatewaysAttempted,
      declineCode: o.declineCode,
      recommendedAction: action,
      reason,
      ai: o.ai,
    },
  );
  await ctx.emit({
    event: 'recovery.failed',
    serviceTransactionId: ctx.publicId,
    gatewayTransactionToken: o.gatewayTransactionId,
    amount: ctx.amount,
    currency: r.currency,
    message: 'Payment could not be recovered',
    strategyUsed: 'all_failed',
    recommendedAction: action,
    recommendedActionReason: reason,
    ...(o.trigger ? { trigger: o.trigger } : {}),
  });
  // An issuer's soft decline in a Strong Customer Authentication region is often an unflagged request to
  // authenticate.
  if (o.scaCountry && mayBeUnflaggedAuthentication(info.code)) {
    await ctx.emit({
      event: 'recovery.3ds_recommended',
      paymentMethodToken: r.paymentMethodToken,
      amount: ctx.amount,
      currency: r.currency,
      declineCode: info.code,
      reason:
        'The issuer is in a Strong Customer Authentication region; a customer-present 3-D Secure payment would likely clear this decline.',
    });
  }
  // Repeated failures for one customer: offer the cancel flow before the subscription lapses.
  if (r.customerEmail)
    await offerProactiveRetention({
      accountId: ctx.input.accountId,
      transactionId: ctx.input.transactionId,
      eventId: ctx.eventId('recovery.proactive_retention'),
    });
}

/**
 * Stopped without (further) retries: blocked group, risk block, authentication required, card dead. The
 * events name the card that was blocked (`token`: the customer's new card, say), else the request's.
 */
export async function block(
  ctx: RecoveryContext,
  o: {
    declineCode: string;
    reason: string;
    action: RecommendedAction;
    fromAttempt: boolean;
    token?: string;
    /** The issuer's own code, when `declineCode` names another: the status record keeps it. */
    issuerCode?: string;
  },
): Promise<void> {
  const { request: r } = ctx.input;
  const paymentMethodToken = o.token ?? r.paymentMethodToken;
  // The answer and the event name the spec's code (card_no_longer_chargeable for a dead card); the status
  // record's lastDeclineCode and the reason keep the issuer's own.
  const declineCode = classifyInWorkflow(o.declineCode).blockedAs;
  const reason = declineCode === o.declineCode ? o.reason : `${o.reason} (decline code ${o.declineCode})`;
  await ctx.conclude(
    'blocked',
    {
      lastDeclineCode: o.issuerCode ?? o.declineCode,
      recommendedAction: o.action,
      recommendedActionReason: reason,
      nextAttemptAt: null,
    },
    { kind: 'blocked', declineCode, reason, recommendedAction: o.action },
  );
  await ctx.emit({
    event: 'recovery.blocked',
    declineCode,
    reason,
    recommendedAction: o.action,
    recommendedActionReason: reason,
    paymentMethodToken,
    amount: ctx.amount,
    currency: r.currency,
    timestamp: nowIso(),
  });
  if (o.fromAttempt) await authenticationRequired(ctx, paymentMethodToken, o.declineCode);
}

/** recovery.authentication_required, when an attempt's decline is the issuer demanding authentication. */
async function authenticationRequired(
  ctx: RecoveryContext,
  token: string,
  declineCode: string,
): Promise<void> {
  if (classifyInWorkflow(declineCode).group !== 'authentication_required') return;
  const { request: r } = ctx.input;
  await ctx.emit({
    event: 'recovery.authentication_required',
    paymentMethodToken: token,
    amount: ctx.amount,
    currency: r.currency,
    declineCode,
    customerAuthRequired: true,
    reason: 'The issuer requires the customer to authenticate; a merchant-initiated retry cannot clear it.',
  });
}

/**
 * A retry after the merchant's 202 met a blocking decline: the card is not charged again (the attempt
 * remembered it), and the recovery ends failed with the block's recommended action — recovery.blocked is
 * for a stop before any retry.
 */
export async function failBlocked(
  ctx: RecoveryContext,
  o: Failure & { declineCode: string; token: string },
): Promise<void> {
  await authenticationRequired(ctx, o.token, o.declineCode);
  await fail(ctx, o);
}

/** The card is expired and the account updater had nothing newer. */
export async function expire(
  ctx: RecoveryContext,
  o: { gatewaysAttempted: number; ai: Prediction; scaCountry: boolean; trigger?: string },
): Promise<void> {
  const { request: r } = ctx.input;
  await ctx.emit({
    event: 'recovery.card_expired',
    clientId: ctx.input.accountId,
    paymentMethodToken: r.paymentMethodToken,
    amount: ctx.amount,
    currency: r.currency,
    message: 'The stored card has expired and no updated card was found; ask the customer for a new card.',
  });
  await fail(ctx, {
    declineCode: 'expired_card',
    lastDeclineCode: 'expired_card',
    gatewaysAttempted: o.gatewaysAttempted,
    gatewayTransactionId: null,
    ai: o.ai,
    scaCountry: false,
    ...(o.trigger ? { trigger: o.trigger } : {}),
  });
}

/** Proof Mode control group: no attempt, so the lift can be measured. */
export async function holdOut(ctx: RecoveryContext, ai: Prediction): Promise<void> {
  const { request: r } = ctx.input;
  await ctx.conclude('holdout', { strategyUsed: 'holdout', ai }, { kind: 'holdout', ai });
  await ctx.emit({
    event: 'recovery.holdout',
    clientId: ctx.input.accountId,
    paymentMethodToken: r.paymentMethodToken,
    amount: ctx.amount,
    currency: r.currency,
    customerEmail: r.customerEmail ?? null,
    message: 'Proof Mode control group: no recovery attempt was made.',
    timestamp: nowIso(),
  });
}
