import {
  condition,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { AttemptResult } from '../activities/recovery-attempt.js';
import { classifyDecline } from '../domain/declines.js';
import type { PaymentMethodType } from '../domain/gateway-kinds.js';
import { planNextAttempt, type AttemptFact, type PlanOption } from '../domain/plan.js';
import type { RecoveryInput, Strategy } from '../domain/recovery.js';
import { cardUpdatedSignal } from './recovery-definitions.js';
import { RecoveryContext } from './recovery-context.js';
import { block, expire, fail, holdOut, skipHighRisk, succeed } from './recovery-outcomes.js';

const day = 86_400_000;

// Short steps run as local activities in the worker that runs the workflow: the whole first phase is one
// workflow task instead of a server round trip per step, which is what the synchronous answer waits on.
const { screenRecovery, loadStats } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});
/**
 * Charges retry freely: every retry reuses the attempt's gateway idempotency key, so none charges twice —
 * also when the worker dies mid-charge and another worker replays the workflow task.
 */
const { attemptCharge, refreshCard } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '45 seconds',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});
/** Lookups of an ambiguous charge back off while the gateway is unreachable; nothing else happens meanwhile. */
const { resolveCharge } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '30 seconds', backoffCoefficient: 2, maximumInterval: '1 hour' },
});

/**
 * One recovery, from intake to outcome: screen → plan → attempt → (sleep until the planned time →
 * attempt)* → outcome. The first phase answers the execute update; the rest carries on durably.
 */
export async function recoveryWorkflow(input: RecoveryInput): Promise<void> {
  // The failure is as old as the workflow: Temporal's clock, which is also the clock timers run on.
  const failedAt = Date.now();
  const ctx = new RecoveryContext(input);
  const r = input.request;
  const { workflowId } = workflowInfo();
  let cardUpdate: { newToken: string; paymentMethodType: PaymentMethodType } | undefined;
  setHandler(cardUpdatedSignal, (update) => void (cardUpdate = update));

  const screen = await screenRecovery(input);
  if (screen.block)
    return block(ctx, { ...screen.block, action: screen.block.recommendedAction, fromAttempt: false });

  let code = screen.decline.code;
  let advice: string | null = null;
  let options: PlanOption[] = screen.options;
  let stats = screen.stats;
  let paymentMethodType = r.paymentMethodType;
  let trigger: string | undefined;
  let waited = false;
  let lastGatewayTransaction: string | null = null;
  const primaryGateway = options[0]?.gateway ?? '';
  const attempts: AttemptFact[] = [
    { at: failedAt, gateway: primaryGateway, token: r.paymentMethodToken, code },
  ];
  const notBefore: Record<string, number> = {};
  const gatewaysUsed = new Set<string>();
  let attemptNo = 0;
  const facts = () => ({
    now: Date.now(),
    failedAt,
    code,
    options,
    attempts,
    attemptsLeft: screen.maxAttempts - attemptNo,
    horizonEnd: failedAt + screen.maxDays * day,
    critical: r.isTrialConversion,
    offsetMinutes: screen.offsetMinutes,
    billingCycleDay: screen.billingCycleDay,
    riskSkipThreshold: screen.riskSkipThreshold,
    notBefore,
    stats,
  });
  const dropToken = (token: string) => void (options = options.filter((o) => o.token !== token));
  const failed = (o: { reason?: string; ai: ReturnType<typeof planNextAttempt>['prediction'] }) =>
    fail(ctx, {
      declineCode: code,
      gatewaysAttempted: gatewaysUsed.size,
      gatewayTransactionId: lastGatewayTransaction,
      scaCountry: screen.scaCountry,
      ...o,
      ...(trigger ? { trigger } : {}),
    });

  /** The account updater, once per token: a fresh token replaces the expired one. */
  async function refreshExpired(token: string): Promise<boolean> {
    const gateway = options.find((o) => o.token === token)?.gateway ?? primaryGateway;
    const fresh = screen.accountUpdater[gateway]
      ? await refreshCard({ accountId: input.accountId, gateway, token })
      : null;
    options = options.flatMap((o) => (o.token !== token ? [o] : fresh ? [{ ...o, token: fresh }] : []));
    return fresh !== null;
  }

  if (screen.holdout) return holdOut(ctx, planNextAttempt(facts()).prediction);
  if (screen.decline.group === 'expired' && !(await refreshExpired(r.paymentMethodToken))) {
    return expire(ctx, {
      gatewaysAttempted: 0,
      ai: planNextAttempt(facts()).prediction,
      scaCountry: screen.scaCountry,
    });
  }
  if (screen.decline.group === 'invalid_card' || screen.decline.group === 'expired')
    dropToken(r.paymentMethodToken);

  for (;;) {
    const plan = planNextAttempt(facts());
    if (plan.kind === 'stop') {
      if (plan.reason === 'high_risk') await skipHighRisk(ctx, plan.prediction);
      return failed({
        ai: plan.prediction,
        ...(plan.reason === 'high_risk' ? { reason: plan.prediction.reasoning } : {}),
      });
    }

    if (plan.at > Date.now()) {
      const nextAttemptAt = new Date(plan.at).toISOString();
      await ctx.conclude(
        'queued',
        {
          nextAttemptAt,
          recommendedAction: 'retry_later',
          recommendedActionReason: plan.prediction.reasoning,
          ai: plan.prediction,
        },
        { kind: 'queued', nextAttemptAt, reason: plan.prediction.reasoning, ai: plan.prediction },
      );
      await condition(() => cardUpdate !== undefined, plan.at - Date.now());
      waited = true;
      if (cardUpdate) {
        // The customer's new card replaces the old one and is tried at once.
        const { newToken } = cardUpdate;
        paymentMethodType = cardUpdate.paymentMethodType;
        options = [
          { gateway: primaryGateway, token: newToken, role: 'primary' },
          ...options.filter((o) => o.role === 'fallback_token'),
        ];
        cardUpdate = undefined;
        await ctx.record('processing', { paymentMethodToken: newToken, nextAttemptAt: null });
      }
      stats = await loadStats(input.accountId);
      continue;
    }

    for (const option of plan.options) {
      attemptNo += 1;
      const base = {
        accountId: input.accountId,
        transactionId: input.transactionId,
        attemptKey: `${workflowId}/${attemptNo}`,
        attemptNo,
        option,
        amount: r.amount,
        currency: r.currency,
        fromCode: code,
        offsetMinutes: screen.offsetMinutes,
      };
      const sentAt = Date.now();
      let result: AttemptResult | Awaited<ReturnType<typeof resolveCharge>> = await attemptCharge({
        ...base,
        now: sentAt,
        paymentMethodType:
          option.token === r.paymentMethodToken || option.role === 'primary' ? paymentMethodType : 'card',
        simulate: screen.simulate,
        brand: option.token === r.paymentMethodToken ? screen.brand : 'unknown',
        advice,
      });
      if (result.kind === 'not_allowed') {
        attemptNo -= 1; // refused before charging: nothing was spent
        notBefore[option.token] = Math.max(result.retryAt ?? Number.POSITIVE_INFINITY, Date.now() + 60_000);
        continue;
      }
      gatewaysUsed.add(option.gateway);
      ctx.attemptCount = attemptNo;
      if (result.kind === 'ambiguous') {
        // Never charge again before the ambiguous attempt is resolved at the gateway.
        await ctx.conclude(
          'reconciling',
          {
            recommendedAction: 'monitor',
            recommendedActionReason:
              'The gateway did not answer clearly; Recoup is confirming the charge before anything else.',
          },
          { kind: 'unknown', reason: result.reason },
        );
        await sleep('30 seconds');
        result = await resolveCharge({ ...base, sentAt });
        trigger = 'reconciliation';
      }
      attempts.push({
        at: sentAt,
        gateway: option.gateway,
        token: option.token,
        code: result.kind === 'declined' ? result.code : null,
      });
      if (result.kind === 'approved') {
        const strategy: Strategy = waited ? 'smart_retry' : option.role;
        return succeed(ctx, {
          strategy,
          gatewayTransactionId: result.gatewayTransactionId,
          gatewaysAttempted: gatewaysUsed.size,
          ai: plan.prediction,
          ...(trigger ? { trigger } : {}),
        });
      }
      if (result.kind === 'not_found') continue; // nothing was charged; plan again from the same decline
      lastGatewayTransaction = result.gatewayTransactionId ?? lastGatewayTransaction;
      const info = classifyDecline(result.code);
      const onPrimary = option.token === r.paymentMethodToken || option.role === 'primary';
      if (onPrimary) {
        code = info.code;
        advice = result.advice;
      }
      if (ctx.state === 'reconciling') await ctx.record('processing', { lastDeclineCode: info.code });
      else ctx.tagDecline(info.code);
      if (info.stopsImmediately)
        return block(ctx, {
          declineCode: info.code,
          reason: info.reason,
          action: info.recommendedAction,
          fromAttempt: true,
        });
      if (screen.simulate) return failed({ ai: plan.prediction });
      if (info.group === 'expired') {
        if (await refreshExpired(option.token)) break;
        if (onPrimary)
          return expire(ctx, {
            gatewaysAttempted: gatewaysUsed.size,
            ai: plan.prediction,
            scaCountry: screen.scaCountry,
            ...(trigger ? { trigger } : {}),
          });
        continue;
      }
      // Hard cardholder-state declines on the primary end the recovery: fallback tokens are not tried.
      if (!info.allowsFallback && onPrimary) return failed({ ai: plan.prediction });
      if (!info.retryable || !info.allowsFallback) dropToken(option.token);
    }
  }
}
