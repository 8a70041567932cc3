import { randomInt } from 'node:crypto';
import { classifyDecline, type DeclineInfo, type RecommendedAction } from '../domain/declines.js';
import type { PaymentMethodType } from '../domain/gateway-kinds.js';
import { customerClock, customerTimeZone, scaCountries, type OffsetChange } from '../domain/local-time.js';
import { brandFromBin, type CardBrand } from '../domain/network-rules.js';
import type { PlanOption } from '../domain/plan.js';
import type { RecoveryInput } from '../domain/recovery.js';
import type { CardRefusal } from '../domain/risk.js';
import type { OutcomeStats } from '../domain/success-model.js';
import { cardKeyOf } from '../runtime/crypto.js';
import { cardRefusalOf } from '../services/card-refusal.js';
import type { ActivityDeps } from './deps.js';
import { routeOptions, routing } from './gateways/routing.js';

/** What the workflow learns before planning: the decline, routing, the customer's clock and the risk screen. */
export interface Screen {
  decline: DeclineInfo;
  testMode: boolean;
  simulate: 'success' | 'failed' | null;
  block: { declineCode: string; reason: string; recommendedAction: RecommendedAction } | null;
  holdout: boolean;
  options: PlanOption[];
  accountUpdater: Record<string, boolean>;
  brand: CardBrand;
  /** The customer's UTC offset at intake, in minutes. */
  offsetMinutes: number;
  /**
   * How that offset changes (daylight saving) through the longest the recovery may run; absent from a screen
   * an earlier version recorded, whose recovery keeps the offset at intake.
   */
  offsetChanges?: OffsetChange[];
  billingCycleDay: number | null;
  riskSkipThreshold: number;
  maxAttempts: number;
  maxDays: number;
  scaCountry: boolean;
  stats: OutcomeStats;
}

/** The recovery to screen, and the workflow's clock at intake (epoch ms): the screen's time everywhere. */
export type ScreenInput = RecoveryInput & { now: number };

/** The screen's block of a card that is not charged at all. */
function blockOf(refusal: CardRefusal): NonNullable<Screen['block']> {
  if (refusal.kind === 'network_stop')
    return {
      declineCode: 'card_no_longer_chargeable',
      reason: `Risk screen: Mastercard advised (merchant advice code ${refusal.advice}) never to charge this card again.`,
      recommendedAction: 'request_card_update',
    };
  const code = refusal.declineCode;
  return {
    declineCode: code,
    reason: `Risk screen: this card was blocked (${code}) on an earlier recovery, so it is not retried.`,
    recommendedAction: classifyDecline(code).recommendedAction,
  };
}

export function screenActivities(deps: ActivityDeps) {
  return {
    /** Screens a new recovery: decline group, risk, Proof Mode, routing and the customer's local clock. */
    async screenRecovery(input: ScreenInput): Promise<Screen> {
      const { stores } = deps;
      const loaded = await stores.accounts.withGateways(input.accountId);
      if (!loaded) throw new Error(`Account ${input.accountId} not found`);
      const { account } = loaded;
      const r = input.request;
      const s = account.settings;
      const now = new Date(input.now);
      const decline = classifyDecline(r.originalDeclineCode);
      const { adapters, gateways } = routing(stores, loaded, deps);
      const simulate = account.testMode ? (r.simulateOutcome ?? null) : null;

      /** Why a card of the customer's is not charged at all: blocked before, or Mastercard's stop advice. */
      const refusalOf = async (token: string) =>
        cardRefusalOf(stores, cardKeyOf(account.id, token), now, input.transactionId);

      // What the request itself says: the sandbox's simulated block, or a decline code that stops at once.
      const requestBlock: Screen['block'] =
        simulate === 'blocked'
          ? {
              declineCode: 'fraudulent',
              reason: 'Simulated block (sandbox).',
              recommendedAction: 'manual_review',
            }
          : decline.stopsImmediately
            ? {
                declineCode: decline.code,
                reason: decline.reason,
                recommendedAction: decline.recommendedAction,
              }
            : null;

      // A failure the request blocks gets no attempt whichever group it would be in, so no group is drawn
      // for it. Any other is drawn before what Recoup learned of its card (intent to treat): a card is only
      // learned to be blocked from a declined charge, which controls never make, so leaving the failures of
      // such cards out would leave out treated payments alone.
      const inProofMode = requestBlock === null && s.proofMode.enabled;
      const holdout = inProofMode
        ? await stores.holdouts.assign(
            account.id,
            r.customerEmail ?? r.paymentMethodToken,
            () => randomInt(10_000) < s.proofMode.controlPercent * 100,
            now,
          )
        : false;
      // Marked before any outcome: the report compares only recoveries drawn while Proof Mode was on.
      if (inProofMode) await stores.recoveries.update(input.transactionId, { inProofMode }, now);

      // A control gets no attempt anyway; a treated payment on a refused card is blocked (and stays
      // uncollected in the comparison).
      const refusal = requestBlock || holdout ? null : await refusalOf(r.paymentMethodToken);
      const block = requestBlock ?? (refusal && blockOf(refusal));

      // The card is remembered as blocked, for the risk screen of its later recoveries (unless the block
      // says the payment is no longer owed, nothing about the card, or is the sandbox's simulation).
      if (block && simulate !== 'blocked' && classifyDecline(block.declineCode).aboutTheCard)
        await stores.recoveries.rememberBlockedCard(cardKeyOf(account.id, r.paymentMethodToken), {
          transactionId: input.transactionId,
          declineCode: block.declineCode,
          at: now,
        });
      // A fallback card blocked on an earlier recovery (or stopped by Mastercard) is not charged either.
      const fallbacks: string[] = [];
      for (const token of block ? [] : (r.fallbackPaymentMethodTokens ?? []))
        if (!(await refusalOf(token))) fallbacks.push(token);

      return {
        decline,
        testMode: account.testMode,
        simulate: simulate === 'blocked' ? null : simulate,
        block,
        holdout,
        options: routeOptions(
          gateways,
          r.paymentMethodToken,
          r.paymentMethodType,
          fallbacks,
          r.currency,
          r.cardOrigin,
        ),
        accountUpdater: Object.fromEntries(
          gateways.map((g, i) => [g.name, adapters[i]!.refreshCard !== undefined]),
        ),
        brand: brandFromBin(r.binPrefix),
        ...customerClock(customerTimeZone(r.cardOrigin, s.timezone), now.getTime(), s.retryPolicy.maxDays),
        billingCycleDay: s.billingCycleDay,
        riskSkipThreshold: s.riskSkipThreshold,
        maxAttempts: s.retryPolicy.maxAttempts,
        maxDays: s.retryPolicy.maxDays,
        scaCountry: r.cardOrigin !== undefined && scaCountries.has(r.cardOrigin),
        // Learned from the recoveries of the account's current mode alone: sandbox ones never plan live ones.
        stats: await stores.learning.stats(account.id, account.testMode),
      };
    },

    /**
     * The customer's new card (from a hosted link or the billing platform) on each of the account's gateways
     * that can charge it — its kind, currency and wallet — in the account's order, as the screen routes the
     * payment's own card (but for geographic routing: the new card's issuing country is not known).
     */
    async routeNewCard(input: {
      accountId: string;
      token: string;
      paymentMethodType: PaymentMethodType;
      currency: string;
    }): Promise<PlanOption[]> {
      const loaded = await deps.stores.accounts.withGateways(input.accountId);
      if (!loaded) throw new Error(`Account ${input.accountId} not found`);
      return routeOptions(
        routing(deps.stores, loaded, deps).gateways,
        input.token,
        input.paymentMethodType,
        [],
        input.currency,
      );
    },

    /**
     * The account's outcome statistics, for planning a later attempt with what was learned since: of its
     * current mode, as the screen reads them.
     */
    async loadStats(accountId: string): Promise<OutcomeStats> {
      const account = await deps.stores.accounts.find(accountId);
      return deps.stores.learning.stats(accountId, account?.testMode ?? false);
    },
  };
}
