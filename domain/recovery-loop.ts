import { classifyDecline, type DeclineGroup, type DeclineInfo, type RecommendedAction } from './declines.js';
import { isStopAdvice } from './network-rules.js';
import {
  optionExposure,
  optionHistory,
  planNextAttempt,
  type AttemptFact,
  type PlanFacts,
  type PlanOption,
  type StopReason,
} from './plan.js';
import type { Prediction, Strategy } from './recovery.js';
import type { OffsetChange } from './local-time.js';
import type { OutcomeStats } from './success-model.js';

const day = 86_400_000;
/** A card the networks refused is not asked about again for at least this long. */
const refusalBackoffMs = 60_000;

/**
 * The decision loop of one recovery as a pure state machine: the recovery workflow and the benchmark both
 * drive it, so the strategy that is benchmarked is the strategy production runs. The driver performs each
 * step (charge, account updater, timer) and feeds back what happened; every decision is taken here.
 */
export interface LoopSetup {
  /** When the merchant's own charge failed: attempt 0 of the recovery. */
  failedAt: number;
  /** The merchant's decline, classified. */
  decline: { code: string; group: DeclineGroup };
  primaryToken: string;
  /** Routing in cascade order: the primary token on each gateway, then each fallback token. */
  options: PlanOption[];
  maxAttempts: number;
  maxDays: number;
  critical: boolean;
  /**
   * A critical recovery's retries after its first attempts are planned as any other's: only its first
   * attempts (the cascade the merchant's call waits on) go at once. Left unset by a workflow begun before
   * (`patched`): it tried every attempt at once, its whole budget within seconds.
   */
  criticalRetriesPlanned?: boolean;
  /**
   * Mastercard's advice 03 or 21 ends the card's attempts when it comes (the payment's card: the recovery,
   * as a card no longer chargeable). Left unset by a workflow begun before (`patched`): it planned the next
   * attempt, which the networks' rules then refused, and ended recommending a retry.
   */
  stopAdviceEnds?: boolean;
  offsetMinutes: number;
  /** The customer's offset changes within the window (daylight saving); absent in a recovery begun before. */
  offsetChanges?: readonly OffsetChange[];
  billingCycleDay: number | null;
  /**
   * A billing day past a month's end falls on its last day. Left unset by a workflow begun before
   * (`patched`): such a month had no billing day.
   */
  lastDayBills?: boolean;
  riskSkipThreshold: number;
  stats: OutcomeStats;
  /** Sandbox simulation: the first decline ends the recovery. */
  simulate: boolean;
}

type AttemptPlan = Extract<ReturnType<typeof planNextAttempt>, { kind: 'attempt' }>;

/** How a recovery ends; the driver turns it into the read model, the answer and the events. */
export type LoopOutcome =
  | {
      kind: 'succeeded';
      strategy: Strategy;
      gatewayTransactionId: string;
      gatewaysAttempted: number;
      ai: Prediction;
      trigger?: string;
    }
  | {
      kind: 'failed';
      /** The primary card's latest decline: the recommended action follows it. */
      declineCode: string;
      /** The latest decline of any card (a fallback token's, too): the status record's lastDeclineCode. */
      lastDeclineCode: string;
      gatewaysAttempted: number;
      gatewayTransactionId: string | null;
      ai: Prediction;
      reason?: string;
      /** Why the planner stopped, when it did; 'high_risk' asks the customer for another card. */
      stopReason?: StopReason;
      trigger?: string;
    }
  | {
      kind: 'blocked';
      declineCode: string;
      reason: string;
      action: RecommendedAction;
      /** The card the issuer blocked: the primary, or the customer's new card. */
      token: string;
      /** The issuer's own decline code, when the block names another (Mastercard's advice: no longer chargeable). */
      issuerCode?: string;
      /**
       * What the recovery ends as when the merchant already holds its 202 (a later retry was blocked): the
       * spec's final outcome of a queued recovery is recovery.success or recovery.failed. Absent for a
       * block before any attempt.
       */
      failure?: Extract<LoopOutcome, { kind: 'failed' }>;
    }
  | { kind: 'expired'; gatewaysAttempted: number; ai: Prediction; trigger?: string };

/** What the driver must do next. */
export type LoopStep =
  | { kind: 'refresh'; token: string; gateway: string }
  | { kind: 'wait'; until: number; plan: AttemptPlan }
  | {
      kind: 'attempt';
      option: PlanOption;
      attemptNo: number;
      /**
       * The card's latest decline (`fresh_token` for a card never charged) and its Mastercard advice code:
       * the card-network rules judge the card by them, and learning files the outcome under the code.
       */
      fromCode: string;
      advice: string | null;
      /** The primary card (or its replacement), as opposed to a fallback token. */
      onPrimary: boolean;
      /**
       * Earlier retries of this card, and the part of the prediction outside the rate and lifts (decay,
       * the same-day factor when the card was charged less than 24 h before): the outcome's weight.
       */
      depth: number;
      exposure: number;
      sameDay: number | null;
      plan: AttemptPlan;
    }
  | { kind: 'finish'; outcome: LoopOutcome };

/** What one charge came back with; `reconciled` when the answer was lost and looked up at the gateway. */
export type ChargeResult =
  | { kind: 'not_allowed'; retryAt: number | null }
  | { kind: 'approved'; gatewayTransactionId: string }
  | { kind: 'declined'; code: string; advice: string | null; gatewayTransactionId?: string | null }
  | { kind: 'not_found' };

type Pending =
  /** The merchant's decline is still to act on: an expired card goes to the updater, an invalid one is dropped. */
  | { kind: 'intake'; group: DeclineGroup }
  /** `ai` is the plan of the attempt that found the card expired; null at intake. */
  | { kind: 'refresh'; token: string; gateway: string; onPrimary: boolean; ai: Prediction | null }
  | { kind: 'finish'; outcome: LoopOutcome }
  | { kind: 'expire_at_intake' };

interface InFlight {
  option: PlanOption;
  attemptNo: number;
  onPrimary: boolean;
}

export interface LoopState {
  readonly setup: Omit<LoopSetup, 'decline' | 'options' | 'stats'> & { primaryGateway: string };
  /** The primary card's latest decline, which the planner plans from. */
  readonly code: string;
  /** The latest decline of any card, the merchant's at first. */
  readonly lastDeclineCode: string;
  /** The latest Mastercard advice code of each token. */
  readonly advice: Readonly<Record<string, string | null>>;
  readonly options: readonly PlanOption[];
  readonly stats: OutcomeStats;
  readonly attempts: readonly AttemptFact[];
  readonly notBefore: Readonly<Record<string, number>>;
  readonly attemptNo: number;
  readonly waited: boolean;
  readonly gatewaysUsed: readonly string[];
  readonly lastGatewayTransaction: string | null;
  readonly trigger: string | undefined;
  /** The options of the current plan still to try, in cascade order. */
  readonly slot: { plan: AttemptPlan; options: readonly PlanOption[] } | null;
  readonly inFlight: InFlight | null;
  readonly pending: Pending | null;
}

/** A new loop, right after screening: the merchant's failure is attempt 0. */
export function startLoop(setup: LoopSetup): LoopState {
  const { decline, options, stats, ...rest } = setup;
  const primaryGateway = options[0]?.gateway ?? '';
  const state: LoopState = {
    setup: { ...rest, primaryGateway },
    code: decline.code,
    lastDeclineCode: decline.code,
    advice: {},
    options,
    stats,
    attempts: [
      { at: setup.failedAt, gateway: primaryGateway, token: setup.primaryToken, code: decline.code },
    ],
    notBefore: {},
    attemptNo: 0,
    waited: false,
    gatewaysUsed: [],
    lastGatewayTransaction: null,
    trigger: undefined,
    slot: null,
    inFlight: null,
    pending: { kind: 'intake', group: decline.group },
  };
  return state;
}

/** What the planner sees at `now`. */
function loopFacts(state: LoopState, now: number): PlanFacts {
  const s = state.setup;
  return {
    now,
    failedAt: s.failedAt,
    code: state.code,
    options: [...state.options],
    attempts: [...state.attempts],
    attemptsLeft: s.maxAttempts - state.attemptNo,
    horizonEnd: s.failedAt + s.maxDays * day,
    critical: s.critical,
    atOnce: s.critical && !(s.criticalRetriesPlanned === true && state.attemptNo > 0),
    offsetMinutes: s.offsetMinutes,
    ...(s.offsetChanges ? { offsetChanges: s.offsetChanges } : {}),
    billingCycleDay: s.billingCycleDay,
    lastDayBills: s.lastDayBills === true,
    riskSkipThreshold: s.riskSkipThreshold,
    notBefore: { ...state.notBefore },
    stats: state.stats,
  };
}

/** The engine's current explanation, for outcomes decided before any attempt (holdout). */
export function currentPrediction(state: LoopState, now: number): Prediction {
  return planNextAttempt(loopFacts(state, now)).prediction;
}

/** The next thing to do at `now`, and the state to carry on with. */
export function nextStep(state: LoopState, now: number): { state: LoopState; step: LoopStep } {
  const pending = state.pending;
  if (pending?.kind === 'intake') {
    const rest: LoopState = { ...state, pending: null };
    if (pending.group === 'expired')
      return nextStep({ ...rest, pending: refreshOf(rest, rest.setup.primaryToken, true, null) }, now);
    return nextStep(pending.group === 'invalid_card' ? dropToken(rest, rest.setup.primaryToken) : rest, now);
  }
  if (pending?.kind === 'refresh')
    return { state, step: { kind: 'refresh', token: pending.token, gateway: pending.gateway } };
  if (pending?.kind === 'finish') return { state, step: { kind: 'finish', outcome: pending.outcome } };
  if (pending?.kind === 'expire_at_intake') {
    const ai = currentPrediction(state, now);
    return { state, step: { kind: 'finish', outcome: { kind: 'expired', gatewaysAttempted: 0, ai } } };
  }
  if (state.slot && state.slot.options.length > 0) {
    const [option, ...rest] = state.slot.options as [PlanOption, ...PlanOption[]];
    // The payment's own card on any gateway (or the customer's new card, or the updater's), not a second card.
    const onPrimary = option.role !== 'fallback_token';
    const attemptNo = state.attemptNo + 1;
    const facts = loopFacts(state, now);
    const history = optionHistory(facts, option);
    return {
      state: { ...state, slot: { ...state.slot, options: rest }, inFlight: { option, attemptNo, onPrimary } },
      step: {
        kind: 'attempt',
        option,
        attemptNo,
        fromCode: history.code,
        advice: state.advice[option.token] ?? null,
        onPrimary,
        depth: history.depth,
        ...optionExposure(facts, option, now),
        plan: state.slot.plan,
      },
    };
  }
  const plan = planNextAttempt(loopFacts(state, now));
  if (plan.kind === 'stop') {
    const outcome = failure(state, {
      ai: plan.prediction,
      stopReason: plan.reason,
      ...(plan.reason === 'high_risk' ? { reason: plan.prediction.reasoning } : {}),
    });
    return { state: { ...state, slot: null }, step: { kind: 'finish', outcome } };
  }
  if (plan.at > now) return { state: { ...state, slot: null }, step: { kind: 'wait', until: plan.at, plan } };
  return nextStep({ ...state, slot: { plan, options: plan.options } }, now);
}

/**
 * Carries on after a wait, with the account's statistics reloaded and the customer's new card, if any: its
 * options (each gateway that can charge it, routed as the payment's own card) replace the old card's.
 */
export function resumeAfterWait(
  state: LoopState,
  o: { stats: OutcomeStats; newCard?: readonly PlanOption[] },
): LoopState {
  const options = o.newCard
    ? [...o.newCard, ...state.options.filter((x) => x.role === 'fallback_token')]
    : state.options;
  return { ...state, waited: true, options, stats: o.stats };
}

/**
 * Takes up again a recovery about to end uncollected, with the customer's new card, which came while its
 * last attempt was under way: the new card's options replace every other (the old card, and the fallback
 * cards, which an ending of the old card leaves untried), and the planner plans them (a card never charged
 * is tried at once, within the budget and window left).
 */
export function reopenWithNewCard(
  state: LoopState,
  o: { stats: OutcomeStats; newCard: readonly PlanOption[] },
): LoopState {
  return { ...state, options: o.newCard, stats: o.stats, slot: null, pending: null };
}

/** The account updater's answer for the token of the pending refresh: a fresh token, or null. */
export function refreshed(state: LoopState, fresh: string | null): LoopState {
  const pending = state.pending;
  if (pending?.kind !== 'refresh') throw new Error('No account-updater refresh is pending');
  const options = state.options.flatMap((o) =>
    o.token !== pending.token ? [o] : fresh ? [{ ...o, token: fresh }] : [],
  );
  const next: LoopState = { ...state, options, pending: null };
  if (!pending.ai)
    return fresh
      ? dropToken(next, state.setup.primaryToken)
      : { ...next, pending: { kind: 'expire_at_intake' } };
  if (fresh) return { ...next, slot: null };
  if (!pending.onPrimary) return next;
  return finishWith(next, {
    kind: 'expired',
    gatewaysAttempted: state.gatewaysUsed.length,
    ai: pending.ai,
    ...(state.trigger ? { trigger: state.trigger } : {}),
  });
}

/**
 * Takes in the result of the attempt `nextStep` asked for. `sentAt` is when the charge was sent; `now` when
 * its answer is known (later for a reconciled one); `reconciled` when the answer was looked up.
 */
export function observe(
  state: LoopState,
  result: ChargeResult,
  o: {
    sentAt: number;
    now: number;
    reconciled: boolean;
    /** How the decline is read: the workflow's own version of `classifyDecline` (see workflows/declines). */
    classify?: (code: string) => DeclineInfo;
  },
): LoopState {
  const inFlight = state.inFlight;
  if (!inFlight) throw new Error('No attempt is in flight');
  const { option, onPrimary } = inFlight;
  if (result.kind === 'not_allowed') {
    // Refused before charging: nothing was spent, and the card waits until the networks allow it.
    const until = Math.max(result.retryAt ?? Number.POSITIVE_INFINITY, o.now + refusalBackoffMs);
    return { ...state, inFlight: null, notBefore: { ...state.notBefore, [option.token]: until } };
  }
  const gatewaysUsed = state.gatewaysUsed.includes(option.gateway)
    ? state.gatewaysUsed
    : [...state.gatewaysUsed, option.gateway];
  let next: LoopState = {
    ...state,
    inFlight: null,
    attemptNo: inFlight.attemptNo,
    gatewaysUsed,
    trigger: o.reconciled ? 'reconciliation' : state.trigger,
    attempts: [
      ...state.attempts,
      {
        at: o.sentAt,
        gateway: option.gateway,
        token: option.token,
        code: result.kind === 'declined' ? result.code : null,
      },
    ],
  };
  const plan = state.slot?.plan;
  if (!plan) throw new Error('An attempt outside a plan');
  if (result.kind === 'approved') {
    return finishWith(next, {
      kind: 'succeeded',
      strategy: next.waited ? 'smart_retry' : option.role,
      gatewayTransactionId: result.gatewayTransactionId,
      gatewaysAttempted: gatewaysUsed.length,
      ai: plan.prediction,
      ...(next.trigger ? { trigger: next.trigger } : {}),
    });
  }
  if (result.kind === 'not_found') return next; // nothing was charged; plan again from the same decline
  next = { ...next, lastGatewayTransaction: result.gatewayTransactionId ?? next.lastGatewayTransaction };
  const info = (o.classify ?? classifyDecline)(result.code);
  next = {
    ...next,
    lastDeclineCode: info.code,
    advice: { ...next.advice, [option.token]: result.advice },
  };
  if (onPrimary) next = { ...next, code: info.code };
  // Mastercard's "never retry" (03, 21) is about the card, in every recovery: no attempt on it is allowed
  // again, so it ends now as a card no longer chargeable (what a later recovery of it is blocked as).
  if (isStopAdvice(result.advice) && next.setup.stopAdviceEnds) {
    if (!onPrimary) return dropToken(next, option.token);
    const reason = `Mastercard advised (merchant advice code ${result.advice}, decline code ${info.code}) never to charge this card again.`;
    return finishWith(next, {
      kind: 'blocked',
      declineCode: 'card_no_longer_chargeable',
      reason,
      action: 'request_card_update',
      token: option.token,
      issuerCode: info.code,
      failure: failure(next, { ai: plan.prediction, reason }),
    });
  }
  if (info.stopsImmediately && onPrimary)
    return finishWith(next, {
      kind: 'blocked',
      declineCode: info.code,
      reason: info.reason,
      action: info.recommendedAction,
      token: option.token,
      failure: failure(next, { ai: plan.prediction, reason: info.reason }),
    });
  // A fallback card the issuer blocks is never charged again; the payment's own card may still recover.
  if (info.stopsImmediately) return dropToken(next, option.token);
  if (next.setup.simulate) return finishWith(next, failure(next, { ai: plan.prediction }));
  if (info.group === 'expired')
    return { ...next, pending: refreshOf(next, option.token, onPrimary, plan.prediction) };
  // Hard cardholder-state declines on the primary end the recovery: fallback tokens are not tried.
  if (!info.allowsFallback && onPrimary) return finishWith(next, failure(next, { ai: plan.prediction }));
  if (!info.retryable || !info.allowsFallback) return dropToken(next, option.token);
  return next;
}

function refreshOf(state: LoopState, token: string, onPrimary: boolean, ai: Prediction | null): Pending {
  const gateway = state.options.find((o) => o.token === token)?.gateway ?? state.setup.primaryGateway;
  return { kind: 'refresh', token, gateway, onPrimary, ai };
}

function dropToken(state: LoopState, token: string): LoopState {
  return { ...state, options: state.options.filter((o) => o.token !== token) };
}

function finishWith(state: LoopState, outcome: LoopOutcome): LoopState {
  return { ...state, slot: null, pending: { kind: 'finish', outcome } };
}

function failure(
  state: LoopState,
  o: { ai: Prediction; reason?: string; stopReason?: StopReason },
): Extract<LoopOutcome, { kind: 'failed' }> {
  return {
    kind: 'failed',
    declineCode: state.code,
    lastDeclineCode: state.lastDeclineCode,
    gatewaysAttempted: state.gatewaysUsed.length,
    gatewayTransactionId: state.lastGatewayTransaction,
    ...o,
    ...(state.trigger ? { trigger: state.trigger } : {}),
  };
}
