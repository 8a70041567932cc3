import { randomInt } from 'node:crypto';
import { classifyDecline, type DeclineInfo, type RecommendedAction } from '../domain/declines.js';
import { tokenFitsKind, type GatewayKind, type PaymentMethodType } from '../domain/gateway-kinds.js';
import { customerTimeZone, scaCountries, utcOffsetMinutes } from '../domain/local-time.js';
import { brandFromBin, type CardBrand } from '../domain/network-rules.js';
import type { PlanOption } from '../domain/plan.js';
import type { RecoveryInput } from '../domain/recovery.js';
import { blockMemoryMs } from '../domain/risk.js';
import type { GatewayConfig } from '../domain/settings.js';
import type { OutcomeStats } from '../domain/success-model.js';
import { cardKeyOf } from '../runtime/crypto.js';
import type { Account } from '../store/accounts.js';
import type { ActivityDeps } from './deps.js';
import { adaptersFor } from './gateways/resolve.js';
import type { GatewayCapabilities } from './gateways/types.js';

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
  offsetMinutes: number;
  billingCycleDay: number | null;
  riskSkipThreshold: number;
  maxAttempts: number;
  maxDays: number;
  scaCountry: boolean;
  stats: OutcomeStats;
}

/** The recovery to screen, and the workflow's clock at intake (epoch ms): the screen's time everywhere. */
export type ScreenInput = RecoveryInput & { now: number };

/** A gateway as routing sees it: its name, its kind (token shapes) and what it can charge. */
export interface RouteGateway extends GatewayCapabilities {
  name: string;
  kind: GatewayKind;
}

/**
 * Cascade order (spec): the primary token on each gateway that can charge it, then each fallback token. A
 * gateway that cannot charge the currency (a Braintree account without a merchant account in it) or the
 * token (a PayPal reference transaction without NVP credentials) is skipped.
 */
export function routeOptions(
  gateways: RouteGateway[],
  primary: string,
  paymentMethodType: PaymentMethodType,
  fallbacks: string[],
  currency: string,
): PlanOption[] {
  const options: PlanOption[] = [];
  const charges = (g: RouteGateway, token: string) =>
    (g.currencies === null || g.currencies.includes(currency)) &&
    tokenFitsKind(g.kind, token) &&
    (g.takesToken?.(token) ?? true);
  gateways.forEach((g, i) => {
    const walletOk = paymentMethodType === 'card' || g.wallets.includes(paymentMethodType);
    if (walletOk && charges(g, primary))
      options.push({ gateway: g.name, token: primary, role: i === 0 ? 'primary' : 'backup_gateway' });
  });
  for (const token of fallbacks) {
    for (const g of gateways)
      if (charges(g, token)) options.push({ gateway: g.name, token, role: 'fallback_token' });
  }
  return options;
}

export function screenActivities(deps: ActivityDeps) {
  /** The account's gateway adapters, and its gateways as routing sees them, in the account's order. */
  function routing(loaded: { account: Account; gateways: GatewayConfig[] }) {
    const byName = adaptersFor(deps.stores, loaded.account.id, loaded.gateways, deps);
    const adapters = loaded.account.gateways.map((g) => byName.get(g.name)!);
    const gateways = loaded.account.gateways.map((g, i) => ({ ...g, ...adapters[i]!.capabilities }));
    return { adapters, gateways };
  }

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
      const { adapters, gateways } = routing(loaded);
      const simulate = account.testMode ? (r.simulateOutcome ?? null) : null;

      let block: Screen['block'] = null;
      if (simulate === 'blocked') {
        block = {
          declineCode: 'fraudulent',
          reason: 'Simulated block (sandbox).',
          recommendedAction: 'manual_review',
        };
      } else if (decline.stopsImmediately) {
        block = {
          declineCode: decline.code,
          reason: decline.reason,
          recommendedAction: decline.recommendedAction,
        };
      } else {
        const earlier = await stores.recoveries.blockedCard(
          cardKeyOf(account.id, r.paymentMethodToken),
          new Date(now.getTime() - blockMemoryMs),
        );
        if (earlier && earlier.transactionId !== input.transactionId) {
          const code = earlier.declineCode;
          block = {
            declineCode: code,
            reason: `Risk screen: this card was blocked (${code}) on an earlier recovery, so it is not retried.`,
            recommendedAction: classifyDecline(code).recommendedAction,
          };
        }
      }

      // The card is remembered as blocked, for the risk screen of its later recoveries.
      if (block)
        await stores.recoveries.rememberBlockedCard(cardKeyOf(account.id, r.paymentMethodToken), {
          transactionId: input.transactionId,
          declineCode: block.declineCode,
          at: now,
        });

      // A recovery blocked here gets no attempt either way, so it is drawn into no Proof Mode group.
      const inProofMode = block === null && s.proofMode.enabled;
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
          r.fallbackPaymentMethodTokens ?? [],
          r.currency,
        ),
        accountUpdater: Object.fromEntries(
          gateways.map((g, i) => [g.name, adapters[i]!.refreshCard !== undefined]),
        ),
        brand: brandFromBin(r.binPrefix),
        offsetMinutes: utcOffsetMinutes(customerTimeZone(r.cardOrigin, s.timezone), now.getTime()),
        billingCycleDay: s.billingCycleDay,
        riskSkipThreshold: s.riskSkipThreshold,
        maxAttempts: s.retryPolicy.maxAttempts,
        maxDays: s.retryPolicy.maxDays,
        scaCountry: r.cardOrigin !== undefined && scaCountries.has(r.cardOrigin),
        stats: await stores.learning.stats(account.id),
      };
    },

    /**
     * The customer's new card (from a hosted link or the billing platform) on each of the account's gateways
     * that can charge it — its kind, currency and wallet — in the account's order, as the screen routes the
     * payment's own card.
     */
    async routeNewCard(input: {
      accountId: string;
      token: string;
      paymentMethodType: PaymentMethodType;
      currency: string;
    }): Promise<PlanOption[]> {
      const loaded = await deps.stores.accounts.withGateways(input.accountId);
      if (!loaded) throw new Error(`Account ${input.accountId} not found`);
      return routeOptions(routing(loaded).gateways, input.token, input.paymentMethodType, [], input.currency);
    },

    /** The account's outcome statistics, for planning a later attempt with what was learned since. */
    async loadStats(accountId: string): Promise<OutcomeStats> {
      return deps.stores.learning.stats(accountId);
    },
  };
}
