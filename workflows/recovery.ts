import {
  condition,
  proxyActivities,
  proxyLocalActivities,
  patched,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { Screen } from '../activities/recovery-screen.js';
import type { PaymentMethodType } from '../domain/gateway-kinds.js';
import { offsetAt } from '../domain/local-time.js';
import type { PlanOption } from '../domain/plan.js';
import {
  currentPrediction,
  nextStep,
  observe,
  refreshed,
  reopenWithNewCard,
  resumeAfterWait,
  startLoop,
  type LoopOutcome,
  type LoopState,
  type LoopStep,
} from '../domain/recovery-loop.js';
import { attemptKeyOf, type RecoveryInput, type StopReason } from '../domain/recovery.js';
import { classifyInWorkflow } from './declines.js';
import { cardUpdatedSignal } from './recovery-definitions.js';
import { RecoveryContext } from './recovery-context.js';
import {
  block,
  expire,
  fail,
  failBlocked,
  holdOut,
  skipHighRisk,
  stop,
  stopNotOwed,
  succeed,
} from './recovery-outcomes.js';

// Short steps run as local activities in the worker that runs the workflow: the whole first phase is one
// workflow task instead of a server round trip per step, which is what the synchronous answer waits on.
// A retry past 10 s waits on a workflow timer: waiting in the worker, it would hold the workflow task and
// heartbeat it every 8 s, 3 history events each, for as long as MongoDB or a gateway is down (see the
// store writes in recovery-context.ts).
const { screenRecovery, loadStats, routeNewCard, abandonAttempt } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  localRetryThreshold: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});
/**
 * Charges retry freely: every retry reuses the attempt's gateway idempotency key, so none charges twice —
 * also when the worker dies mid-charge and another worker replays the workflow task, or a retry waits on a
 * timer past 10 s.
 */
const { attemptCharge, refreshCard } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '45 seconds',
  localRetryThreshold: '10 seconds',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});
/**
 * Workflow version: the state is recorded `processing` when a planned retry's time comes and when a
 * reconciled charge turns out never made, not only after a decline.
 */
const processingStatePatch = 'processing-state-on-retry';

/** Workflow version: a retry blocked after the merchant's 202 ends failed (recovery.failed), not blocked. */
const blockedAfterAnswerPatch = 'blocked-after-answer-fails';

/** Workflow version: a charge that finds the payment no longer owed stops the recovery (not blocked, failed). */
const notOwedStopsPatch = 'not-owed-stops';

/**
 * Workflow version: an attempt is recorded as decided (its workflow task ends) before it is sent, and a stop
 * that came meanwhile is honoured then.
 */
const chargeDecidedPatch = 'charge-decided-before-sent';

/** Workflow version: a new card that came while the last attempt was under way is tried before the end. */
const lateCardUpdatePatch = 'late-card-update';

/** Workflow version: a trial conversion's retries after its first attempts are planned, not all at once. */
const criticalRetriesPlannedPatch = 'critical-retries-planned';

/** Workflow version: Mastercard's advice 03 or 21 ends the card's attempts when it comes. */
const stopAdviceEndsPatch = 'stop-advice-ends';

/** Workflow version: a billing day past a month's end (29–31) falls on the month's last day. */
const lastDayBillsPatch = 'last-day-bills';

/** Workflow version: a new card the billing platform reported settles (`settleMs`) before it is charged. */
const platformCardSettlePatch = 'platform-card-settle';

/**
 * Workflow version: an ending that asks for a new card first lets the workflow task end, so that a card
 * update that came during the last charge is taken before the ending is decided.
 */
const endingTakesLateSignalsPatch = 'ending-takes-late-signals';

/**
 * Workflow version: the events of an ending that asks for a new card are published in a workflow task that
 * does not end the workflow; it ends in the next one.
 */
const endingPublishedBeforeClosePatch = 'ending-published-before-close';

/** A regular activity: the task that decided the attempt ends, and the decision is in the history. */
const { attemptDecided } = proxyActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

/** Lookups of an ambiguous charge back off while the gateway is unreachable; nothing else happens meanwhile. */
const { resolveCharge } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '30 seconds', backoffCoefficient: 2, maximumInterval: '1 hour' },
});

/** The customer's new card, from a hosted link or the billing platform (see cardUpdatedSignal). */
interface CardUpdate {
  newToken: string;
  paymentMethodType: PaymentMethodType;
  settleMs?: number;
}

/**
 * One recovery, from intake to outcome: screen → plan → attempt → (sleep until the planned time →
 * attempt)* → outcome. The first phase answers the execute update; the rest carries on durably. Every
 * decision is taken by the recovery loop (domain/recovery-loop.ts), which the benchmark drives too; this
 * workflow only carries out its steps. A stop (stopUpdate, or a billing platform's paidElsewhere signal)
 * ends it before its next attempt.
 */
export async function recoveryWorkflow(input: RecoveryInput): Promise<void> {
  const ctx = new RecoveryContext(input);
  await recover(ctx);
  await ctx.end();
}

/** The recovery's steps, up to the state it ends in. */
async function recover(ctx: RecoveryContext): Promise<void> {
  const { input } = ctx;
  // The failure is as old as the workflow: Temporal's clock, which is also the clock timers run on.
  const failedAt = Date.now();
  const r = input.request;
  const { workflowId } = workflowInfo();
  let cardUpdate: CardUpdate | undefined;
  setHandler(cardUpdatedSignal, (update) => void (cardUpdate = update));
  // Stopped before it started: nothing is screened or charged (no earlier run took this branch).
  if (input.stopBeforeStart) return stop(ctx, input.stopBeforeStart);

  const screen = await screenRecovery({ ...input, now: failedAt });
  if (screen.block)
    return block(ctx, { ...screen.block, action: screen.block.recommendedAction, fromAttempt: false });

  let loop = startLoop({
    failedAt,
    decline: screen.decline,
    primaryToken: r.paymentMethodToken,
    options: screen.options,
    maxAttempts: screen.maxAttempts,
    maxDays: screen.maxDays,
    critical: r.isTrialConversion,
    // (`patched`: a trial conversion an earlier worker began tried every attempt at once, and replays so.)
    ...(r.isTrialConversion && patched(criticalRetriesPlannedPatch) ? { criticalRetriesPlanned: true } : {}),
    // (`patched`: a recovery an earlier worker began planned past such advice, and replays so.)
    ...(patched(stopAdviceEndsPatch) ? { stopAdviceEnds: true } : {}),
    offsetMinutes: screen.offsetMinutes,
    ...(screen.offsetChanges ? { offsetChanges: screen.offsetChanges } : {}),
    billingCycleDay: screen.billingCycleDay,
    // (`patched`: a recovery an earlier worker began gave months without its billing day none, and replays so.)
    ...(patched(lastDayBillsPatch) ? { lastDayBills: true } : {}),
    riskSkipThreshold: screen.riskSkipThreshold,
    stats: screen.stats,
    simulate: screen.simulate !== null,
  });
  let paymentMethodType = r.paymentMethodType;
  if (screen.holdout) return holdOut(ctx, currentPrediction(loop, Date.now()));

  /** Charges one option, reconciling an ambiguous answer at the gateway before anything else. */
  async function charge(step: Extract<LoopStep, { kind: 'attempt' }>): Promise<LoopState> {
    const { option, attemptNo } = step;
    const base = {
      accountId: input.accountId,
      transactionId: input.transactionId,
      attemptKey: attemptKeyOf(workflowId, attemptNo),
      attemptNo,
      option,
      amount: ctx.amount,
      currency: r.currency,
      fromCode: step.fromCode,
      // The customer's offset when the charge is made (the risk screen's hour of it).
      offsetMinutes: offsetAt(Date.now(), screen.offsetMinutes, screen.offsetChanges),
      depth: step.depth,
      exposure: step.exposure,
      ...(step.sameDay !== null ? { sameDay: step.sameDay } : {}),
      ...(input.connector?.subscriptionId ? { subscriptionId: input.connector.subscriptionId } : {}),
    };
    const sentAt = Date.now();
    const sent = await attemptCharge({
      ...base,
      now: sentAt,
      paymentMethodType: step.onPrimary ? paymentMethodType : 'card',
      simulate: screen.simulate,
      brand: option.token === r.paymentMethodToken ? screen.brand : 'unknown',
      advice: step.advice,
    });
    if (sent.kind === 'not_allowed')
      return observe(loop, sent, {
        sentAt,
        now: Date.now(),
        reconciled: false,
        classify: classifyInWorkflow,
      });
    ctx.attemptCount = attemptNo;
    let result: Exclude<typeof sent, { kind: 'ambiguous' }> | Awaited<ReturnType<typeof resolveCharge>>;
    if (sent.kind !== 'ambiguous') result = sent;
    else {
      // Never charge again before the ambiguous attempt is resolved at the gateway.
      await ctx.conclude(
        'reconciling',
        {
          recommendedAction: 'monitor',
          recommendedActionReason:
            'The gateway did not answer clearly; Recoup is confirming the charge before anything else.',
        },
        { kind: 'unknown', reason: sent.reason },
      );
      await sleep('30 seconds');
      // A pending payment the gateway named is read by its id (PayPal forgets request ids after 6 hours).
      const named = sent.gatewayTransactionId ? { gatewayTransactionId: sent.gatewayTransactionId } : {};
      result = await resolveCharge({ ...base, sentAt, ...named });
    }
    const reconciled = sent.kind === 'ambiguous';
    const next = observe(loop, result, { sentAt, now: Date.now(), reconciled, classify: classifyInWorkflow });
    const code = result.kind === 'declined' ? classifyInWorkflow(result.code).code : null;
    // Resolved without a payment (declined, or never charged): no longer reconciling, at work again.
    // (`patched`: recoveries a worker of an earlier version took past this point replay as they ran.)
    const resolvedNow = code !== null || patched(processingStatePatch);
    if (ctx.state === 'reconciling' && result.kind !== 'approved' && resolvedNow)
      await ctx.record('processing', code ? { lastDeclineCode: code } : {});
    else if (code) ctx.tagDecline(code);
    return next;
  }

  /** The customer's new card, routed to each gateway that can charge it. */
  const routeCard = (update: CardUpdate) =>
    routeNewCard({
      accountId: input.accountId,
      token: update.newToken,
      paymentMethodType: update.paymentMethodType,
      currency: r.currency,
    });

  /**
   * Lets a card the billing platform reported settle before it is charged (`settleMs`: the platform may be
   * collecting the invoice with it now), the read model showing when it will be; a newer card told
   * meanwhile settles in its turn (one from Recoup's own link goes at once). Returns the stop that came
   * meanwhile (that payment's notice), if any, and the card to charge.
   * (`patched`: a worker of an earlier version took such a card on at once, and its histories replay so.)
   */
  async function settled(update: CardUpdate): Promise<{ stop: StopReason | null; update: CardUpdate }> {
    for (let current = update; ;) {
      const { settleMs } = current;
      if (!settleMs || !patched(platformCardSettlePatch)) return { stop: null, update: current };
      await ctx.record(ctx.state, { nextAttemptAt: new Date(Date.now() + settleMs).toISOString() });
      const settling = current;
      await condition(() => ctx.stopRequested !== null || cardUpdate !== settling, settleMs);
      if (ctx.stopRequested) return { stop: ctx.stopRequested, update: current };
      if (cardUpdate === current || cardUpdate === undefined) return { stop: null, update: current };
      current = cardUpdate;
    }
  }

  /** Takes the customer's new card on: the read model shows it, and later attempts send its type. */
  async function takeCard(update: CardUpdate): Promise<void> {
    paymentMethodType = update.paymentMethodType;
    cardUpdate = undefined;
    await ctx.record('processing', { paymentMethodToken: update.newToken, nextAttemptAt: null });
  }

  for (;;) {
    const next = nextStep(loop, Date.now());
    loop = next.state;
    const step = next.step;
    // Part of the payment made elsewhere meanwhile: what is still due is what the next step works with. Not
    // when a charge has just collected: it took the amount it was sent with, and that is what is recorded.
    if (step.kind !== 'finish' || step.outcome.kind !== 'succeeded') await ctx.takeAmountDue();
    if (step.kind === 'finish') {
      // The last charge ran inside this workflow task (a local activity), and a card update that came
      // meanwhile reaches the workflow only in the next one: the server refuses to end a workflow with a
      // signal it has not seen, and the task retaken with it would decide again, once this one's events
      // were published. An ending that asks for a new card waits that turn first (one task more).
      if (asksForNewCard(step.outcome) && patched(endingTakesLateSignalsPatch)) await sleep(1);
      // The customer's new card came while the last attempt was under way (or being looked up): it is tried
      // before the recovery ends on the old card, within the retry budget and window that are left.
      // (`patched`: recoveries a worker of an earlier version took past this point replay as they ran.)
      if (cardUpdate && asksForNewCard(step.outcome) && patched(lateCardUpdatePatch)) {
        const { stop: stoppedMeanwhile, update } = await settled(cardUpdate);
        if (stoppedMeanwhile) return stop(ctx, stoppedMeanwhile);
        const newCard = await routeCard(update);
        const reopened = reopenWithNewCard(loop, { stats: await loadStats(input.accountId), newCard });
        // Nothing the new card could do (the budget or the window is spent): it ends as it was to.
        if (nextStep(reopened, Date.now()).step.kind !== 'finish') {
          await takeCard(update);
          loop = reopened;
          continue;
        }
      }
      await finish(ctx, screen, step.outcome);
      // Its record and events were written in this task (local activities), which must then not end the
      // workflow: refused as above if a card update came meanwhile, it would be retaken on the new card once
      // this ending was published, the new ending's events reusing these events' ids. The workflow ends in
      // the next task; a card update then comes after the ending, as one a moment later would.
      if (asksForNewCard(step.outcome) && patched(endingPublishedBeforeClosePatch)) await sleep(1);
      return;
    }
    // Stopped by the merchant or the billing platform: nothing more is charged.
    const stopReason = ctx.stopRequested;
    if (stopReason) return stop(ctx, stopReason);
    if (step.kind === 'refresh') {
      // The account updater, once per token: a fresh token replaces the expired one.
      const fresh = screen.accountUpdater[step.gateway]
        ? await refreshCard({ accountId: input.accountId, gateway: step.gateway, token: step.token })
        : null;
      loop = refreshed(loop, fresh);
    } else if (step.kind === 'wait') {
      const { plan } = step;
      const nextAttemptAt = new Date(step.until).toISOString();
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
      await condition(() => cardUpdate !== undefined || ctx.stopRequested !== null, step.until - Date.now());
      // Paid elsewhere or no longer owed meanwhile: charging now would take money that is not owed.
      const stopped = ctx.stopRequested;
      if (stopped) return stop(ctx, stopped);
      let newCard: PlanOption[] | undefined;
      // The customer's new card replaces the old one and is tried at once (a platform's once settled), on
      // each gateway that takes it.
      if (cardUpdate) {
        const { stop: stoppedMeanwhile, update } = await settled(cardUpdate);
        if (stoppedMeanwhile) return stop(ctx, stoppedMeanwhile);
        await takeCard(update);
        newCard = await routeCard(update);
      } else if (patched(processingStatePatch)) await ctx.record('processing', { nextAttemptAt: null });

      const stats = await loadStats(input.accountId);
      loop = resumeAfterWait(loop, { stats, ...(newCard ? { newCard } : {}) });
    } else {
      // The attempt (gateway, card, amount, key) is decided: recorded before it is sent, by ending the
      // workflow task with a regular activity. A worker that dies mid-charge is then replaced by one that
      // sends this same attempt again under its key, not one that decides it anew from a later clock,
      // fresher statistics or a signal since — another gateway, card or amount under the same key (a second
      // charge, or a refused one).
      // (`patched`: recoveries a worker of an earlier version took past this point replay as they ran.)
      if (patched(chargeDecidedPatch)) {
        const recordedStop = await attemptDecided({
          accountId: input.accountId,
          transactionId: input.transactionId,
          attemptKey: attemptKeyOf(workflowId, step.attemptNo),
          gateway: step.option.gateway,
          role: step.option.role,
          amount: ctx.amount,
          currency: r.currency,
          ...(ctx.holdsAnswer ? { readStop: true } : {}),
        });
        // A stop recorded on the recovery whose update never came (histories before it answer nothing).
        if (recordedStop) ctx.heedStop(recordedStop);
        // A stop that came meanwhile (during the slot's previous charge, say) is honoured now: the attempt is
        // given up, so that no worker sends it — unless one sent it already (a worker that died, or lost its
        // task, mid-charge): that one is settled first, the stop right after.
        const stopped = ctx.stopRequested;
        const attempt = { accountId: input.accountId, attemptKey: attemptKeyOf(workflowId, step.attemptNo) };
        if (stopped && (await abandonAttempt({ ...attempt, now: Date.now() }))) return stop(ctx, stopped);
      }
      loop = await charge(step);
    }
  }
}

/**
 * Whether an ending asks the customer for another card (the card expired, needs replacing or
 * re-authenticating, or is too unlikely to be charged): a new card that came during its last attempt
 * answers it. Not an ending about the payment (a possible duplicate, nothing owed) or a fraud signal.
 */
function asksForNewCard(outcome: LoopOutcome): boolean {
  switch (outcome.kind) {
    case 'succeeded':
      return false;
    case 'expired':
      return true;
    case 'blocked':
      return outcome.action === 'request_card_update';
    case 'failed':
      return (
        outcome.stopReason === 'high_risk' ||
        classifyInWorkflow(outcome.declineCode).recommendedAction === 'request_card_update'
      );
  }
}

/** Turns the loop's outcome into the read model, the synchronous answer and the events. */
async function finish(ctx: RecoveryContext, screen: Screen, outcome: LoopOutcome): Promise<void> {
  const trigger = outcome.kind !== 'blocked' && outcome.trigger ? { trigger: outcome.trigger } : {};
  switch (outcome.kind) {
    case 'succeeded':
      return succeed(ctx, {
        strategy: outcome.strategy,
        gatewayTransactionId: outcome.gatewayTransactionId,
        gatewaysAttempted: outcome.gatewaysAttempted,
        ai: outcome.ai,
        ...trigger,
      });
    case 'blocked':
      // Nothing owed any more: stopped, once the merchant holds an answer (an execute call still waiting keeps
      // the blocked answer it is owed).
      if (
        !classifyInWorkflow(outcome.declineCode).aboutTheCard &&
        (ctx.answered || ctx.input.answeredAtStart) &&
        patched(notOwedStopsPatch)
      )
        return stopNotOwed(ctx, outcome.declineCode);
      // A retry after the 202 the merchant holds ends as the spec's final outcome of a queued recovery.
      if (ctx.answered && outcome.failure && patched(blockedAfterAnswerPatch))
        return failBlocked(ctx, {
          ...outcome.failure,
          action: outcome.action,
          token: outcome.token,
          scaCountry: screen.scaCountry,
        });
      return block(ctx, {
        declineCode: outcome.declineCode,
        reason: outcome.reason,
        action: outcome.action,
        token: outcome.token,
        fromAttempt: true,
        ...(outcome.issuerCode ? { issuerCode: outcome.issuerCode } : {}),
      });
    case 'expired':
      return expire(ctx, {
        gatewaysAttempted: outcome.gatewaysAttempted,
        ai: outcome.ai,
        scaCountry: screen.scaCountry,
        ...trigger,
      });
    case 'failed':
      if (outcome.stopReason === 'high_risk') await skipHighRisk(ctx, outcome.ai);
      return fail(ctx, {
        declineCode: outcome.declineCode,
        lastDeclineCode: outcome.lastDeclineCode,
        gatewaysAttempted: outcome.gatewaysAttempted,
        gatewayTransactionId: outcome.gatewayTransactionId,
        scaCountry: screen.scaCountry,
        ai: outcome.ai,
        ...(outcome.reason ? { reason: outcome.reason } : {}),
        ...trigger,
      });
  }
}
