import { ApplicationFailure } from '@temporalio/common';
import { classifyDecline } from '../domain/declines.js';
import type { GatewayKind, PaymentMethodType } from '../domain/gateway-kinds.js';
import { localParts } from '../domain/local-time.js';
import { toGatewayUnits } from '../domain/money.js';
import { underCardNetworkRules, type CardBrand } from '../domain/network-rules.js';
import type { PlanOption } from '../domain/plan.js';
import { cardKeyOf } from '../runtime/crypto.js';
import type { Account } from '../store/accounts.js';
import { AttemptAbandonedError } from '../store/attempt-sends.js';
import type { ClaimDecision } from '../store/card-budgets.js';
import type { StopReason } from '../domain/recovery.js';
import type { AttemptRecord } from '../store/recoveries.js';
import type { ActivityDeps } from './deps.js';
import { GatewayGoneError, gatewayFor, gatewayOf } from './gateways/resolve.js';
import {
  PaymentPendingError,
  type ChargeOutcome,
  type ChargeRequest,
  type GatewayAdapter,
  type LookupOutcome,
} from './gateways/types.js';
import { heldByInvoice } from './invoice-check.js';

export interface AttemptInput {
  accountId: string;
  transactionId: string;
  /** `${workflowId}/${attemptNo}`: the gateway idempotency key and the network-budget claim id. */
  attemptKey: string;
  attemptNo: number;
  option: PlanOption;
  amount: number;
  currency: string;
  paymentMethodType: PaymentMethodType;
  simulate: 'success' | 'failed' | null;
  brand: CardBrand;
  /** The decline being recovered from, and its advice code: network rules and learning use them. */
  fromCode: string;
  advice: string | null;
  offsetMinutes: number;
  /**
   * Earlier retries of this card, the part of the prediction outside the rate and lifts, and the same-day
   * factor within it (charged less than 24 h after the card's last charge): how learning counts it.
   */
  depth?: number;
  exposure?: number;
  sameDay?: number;
  /** The workflow's clock when it decided to attempt (epoch ms): the attempt's time everywhere. */
  now: number;
  /** The platform subscription the charge goes through (a Braintree connector's recovery). */
  subscriptionId?: string;
}

export type AttemptResult = ChargeOutcome | { kind: 'not_allowed'; reason: string; retryAt: number | null };

export interface ResolveInput extends Omit<
  AttemptInput,
  'simulate' | 'brand' | 'advice' | 'paymentMethodType' | 'now'
> {
  /** When the ambiguous charge was sent. */
  sentAt: number;
  /** The gateway's id of the payment, when the ambiguous outcome named one. */
  gatewayTransactionId?: string;
}

export function attemptActivities(deps: ActivityDeps) {
  const { stores, clock, metrics } = deps;
  const env = {
    publicBaseUrl: deps.publicBaseUrl,
    clock,
    ...(deps.testGatewayWorld ? { world: deps.testGatewayWorld } : {}),
  };

  /**
   * Appends the attempt to the read model and, for definite outcomes, to the learning log: a test gateway's
   * (`sandbox`) apart from live ones, so a live account never plans with what its sandbox taught.
   */
  async function remember(
    input: Omit<ResolveInput, 'sentAt'>,
    at: Date,
    outcome: LookupOutcome,
    sandbox: boolean,
  ): Promise<void> {
    const record: AttemptRecord = {
      no: input.attemptNo,
      at,
      gateway: input.option.gateway,
      role: input.option.role,
      outcome: outcome.kind === 'not_found' ? 'not_charged' : outcome.kind,
      declineCode: outcome.kind === 'declined' ? outcome.code : null,
      gatewayTransactionId: outcome.kind === 'not_found' ? null : outcome.gatewayTransactionId,
    };
    await stores.recoveries.addAttempt(input.transactionId, record, clock());
    // A card the issuer blocks (fraud, lost, stolen, authentication…) is remembered as itself, whichever
    // role it played: a fallback card's block never falls on the primary, nor a new card's on the old one.
    // Not a token the gateway refused before charging (unknown to it: deleted, or the key of another account):
    // no issuer said anything about the card, and remembering it would block the card for months after a fix.
    // Nor an answer that the payment is no longer owed (a Braintree subscription collected meanwhile).
    const cardKey = cardKeyOf(input.accountId, input.option.token);
    const decline =
      outcome.kind === 'declined' && !outcome.tokenRefused ? classifyDecline(outcome.code) : null;
    if (decline?.stopsImmediately && decline.aboutTheCard)
      await stores.recoveries.rememberBlockedCard(cardKey, {
        transactionId: input.transactionId,
        declineCode: decline.code,
        at,
      });
    // Mastercard's 03 or 21, or its wait, is for the card, not this payment: later claims on it in any
    // recovery are refused for good, or until the wait is over.
    if (outcome.kind === 'declined' && outcome.advice)
      await stores.cardBudgets.rememberAdvice(cardKey, { advice: outcome.advice, at });
    // An answer that the payment is no longer owed (nothing was charged) says nothing of when cards recover.
    const saysOfTheCard = outcome.kind !== 'declined' || classifyDecline(outcome.code).aboutTheCard;
    if ((outcome.kind === 'approved' || outcome.kind === 'declined') && saysOfTheCard) {
      await stores.learning.record({
        _id: input.attemptKey,
        accountId: input.accountId,
        simulated: sandbox,
        fromCode: input.fromCode,
        approved: outcome.kind === 'approved',
        gateway: input.option.gateway,
        local: localParts(at.getTime(), input.offsetMinutes),
        ...(input.depth !== undefined ? { depth: input.depth } : {}),
        ...(input.exposure !== undefined ? { exposure: input.exposure } : {}),
        ...(input.sameDay !== undefined ? { sameDay: input.sameDay } : {}),
        at,
      });
    }
  }

  /**
   * When an attempt being looked up was first sent, from the record every attempt makes before its first try
   * (a worker that replayed the workflow after one died mid-charge sent it again, with a later `sentAt`):
   * a gateway whose keys expire, or whose request changed since, answers by the first send.
   */
  async function firstSentOf(input: ResolveInput): Promise<number> {
    const sentAt = new Date(input.sentAt);
    const recorded = await stores.attemptSends
      .firstSent(input.accountId, input.attemptKey, sentAt)
      // Sent, so never given up; should its record say otherwise, the try's own time stands.
      .catch((error: unknown) => {
        if (error instanceof AttemptAbandonedError) return sentAt;
        throw error;
      });
    return Math.min(recorded.getTime(), input.sentAt);
  }

  /** Asks the card networks' rules, with the account's caps, for one more attempt on the card, and counts it. */
  function claimCardBudget(input: AttemptInput, account: Account, now: Date): Promise<ClaimDecision> {
    return stores.cardBudgets.claim({
      cardKey: cardKeyOf(input.accountId, input.option.token),
      brand: input.brand,
      declineCode: input.fromCode,
      advice: input.advice,
      attemptKey: input.attemptKey,
      now,
      rules: account.settings.networkRules,
    });
  }

  /** Sends one request to a gateway, timing it and counting its outcome; an error is rethrown (retried). */
  async function measured<T extends ChargeOutcome | LookupOutcome>(
    kind: string,
    operation: 'charge' | 'lookup',
    send: () => Promise<T>,
  ): Promise<T> {
    const started = performance.now();
    const seconds = () => (performance.now() - started) / 1000;
    try {
      const outcome = await send();
      metrics.gatewayRequest(kind, operation, outcome.kind, seconds());
      return outcome;
    } catch (error) {
      metrics.gatewayRequest(kind, operation, 'error', seconds());
      throw error;
    }
  }

  /**
   * Sends the charge once the card's network budget allows it (cards only: see `underCardNetworkRules`),
   * with the time its attempt was first sent, counted as a request of its gateway.
   */
  async function sendCharge(
    input: AttemptInput,
    { adapter, kind, account }: { adapter: GatewayAdapter; kind: GatewayKind; account: Account },
    request: ChargeRequest,
  ): Promise<AttemptResult> {
    const now = new Date(input.now);
    let claimedAt = now;
    if (underCardNetworkRules(kind, input.paymentMethodType)) {
      const decision = await claimCardBudget(input, account, now);
      if (!decision.allowed) {
        metrics.heldByNetworkRules(input.brand);
        return { kind: 'not_allowed', reason: decision.reason, retryAt: decision.retryAt };
      }
      claimedAt = decision.claimedAt;
    }
    // `input.now` is the time of the workflow task that runs this: a worker replaying the workflow after one
    // died mid-charge decides the attempt again, later. The record, made once per attempt, is when it was
    // first sent; a card attempt first sent by a worker of a version before that record has only its budget
    // claim, which says the same.
    const recorded = await stores.attemptSends
      .firstSent(input.accountId, input.attemptKey, now)
      .catch((error: unknown) => {
        // Given up by the workflow (a stop) while this worker held the attempt: never sent, never retried.
        if (error instanceof AttemptAbandonedError) throw ApplicationFailure.nonRetryable(error.message);
        throw error;
      });
    const firstSentAt = Math.min(recorded.getTime(), claimedAt.getTime());
    return measured(kind, 'charge', () => adapter.charge({ ...request, firstSentAt }));
  }

  return {
    /**
     * One charge: claims the card's network budget (cards only: see `underCardNetworkRules`) and records when
     * the attempt was first sent, then charges with the attempt's idempotency key, so a retried activity or a
     * restarted worker replays the same charge instead of making a second one. A recovery a billing platform
     * reported is charged only while its invoice is owed, never more than is due (see heldByInvoice).
     */
    async attemptCharge(input: AttemptInput): Promise<AttemptResult> {
      const now = new Date(input.now);
      const resolved = await gatewayOf(stores, input.accountId, input.option.gateway, env).catch(
        (error: unknown) => {
          // A recovery planned on a gateway the operator has removed since (the seconds `recoup accounts
          // set-gateways` takes): nothing is sent, and the recovery tries that card no more, as when the
          // card networks refuse it for good. It ends on what else it can try, never stuck retrying.
          if (!(error instanceof GatewayGoneError)) throw error;
          deps.log.warn({ accountId: input.accountId, gateway: input.option.gateway }, error.message);
          return { gone: error.message };
        },
      );
      // Sent there before the gateway went (a retried activity): it may have charged, so it is not let go.
      if ('gone' in resolved && (await stores.attemptSends.wasSent(input.attemptKey)))
        throw new Error(
          `${resolved.gone}: attempt ${input.attemptKey} was sent to it; add it back to settle it`,
        );
      if ('gone' in resolved) return { kind: 'not_allowed', reason: resolved.gone, retryAt: null };
      const held = await heldByInvoice(deps, input, (outcome) =>
        remember(input, now, outcome, resolved.test),
      );
      if (held) return held;
      const { adapter, kind, account } = resolved;
      const request: ChargeRequest = {
        token: input.option.token,
        amount: input.amount,
        currency: input.currency,
        paymentMethodType: input.paymentMethodType,
        idempotencyKey: input.attemptKey,
        sentAt: input.now,
        ...(input.simulate ? { simulate: input.simulate } : {}),
        ...(input.subscriptionId ? { subscriptionId: input.subscriptionId } : {}),
      };
      // An amount the gateway cannot express is declined by its adapter with nothing sent: no budget spent,
      // no gateway request counted.
      const outcome =
        toGatewayUnits(input.amount, input.currency, kind) === null
          ? await adapter.charge(request)
          : await sendCharge(input, { adapter, kind, account }, request);
      if (outcome.kind === 'not_allowed') return outcome;
      if (outcome.kind !== 'ambiguous') await remember(input, now, outcome, resolved.test);
      return outcome;
    },

    /**
     * Notes an attempt the recovery has decided, before it is sent. Run as a regular activity, not a local
     * one: the workflow task that decided the attempt ends with it, so the decision is in the workflow's
     * history (the Temporal UI shows each attempt's gateway, card, role and amount), and a worker that dies
     * while sending it is replaced by one that sends this attempt again rather than deciding anew.
     * With `readStop` (the merchant holds an answer), answers the stop recorded on the recovery, if any: one
     * whose update never reached the workflow (asked while no worker took its tasks, and lost by the server
     * since) still stops it before this attempt. Not read while execute waits on the first phase: no stop
     * ends that before its answer, and execute's path reads nothing more.
     */
    async attemptDecided(input: {
      accountId: string;
      transactionId: string;
      attemptKey: string;
      gateway: string;
      role: string;
      amount: number;
      currency: string;
      readStop?: boolean;
    }): Promise<StopReason | null> {
      const { readStop, ...decided } = input;
      deps.log.info(decided, 'attempt decided');
      return readStop ? stores.recoveries.stopAskedOf(input.transactionId) : null;
    },

    /**
     * Gives a decided attempt up before it is sent (a stop came): true when given up, and then no worker
     * sends it, not even one still holding it after losing its workflow task; false when it was sent (or is
     * being sent), and must be settled.
     */
    async abandonAttempt(input: { accountId: string; attemptKey: string; now: number }): Promise<boolean> {
      return stores.attemptSends.abandon(input.accountId, input.attemptKey, new Date(input.now));
    },

    /**
     * Looks an ambiguous charge up at its gateway: by the id of its payment when the charge's answer or an
     * earlier lookup named one, else by idempotency key; throws (and is retried) while unreachable or pending.
     * Once a stop was asked, only read (`readOnly`): a lookup that would send the request again could make the
     * payment now, after the customer paid elsewhere.
     */
    async resolveCharge(input: ResolveInput): Promise<LookupOutcome> {
      const { adapter, kind, test } = await gatewayOf(stores, input.accountId, input.option.gateway, env);
      const firstSentAt = await firstSentOf(input);
      // Kept on the attempt's record, not in the workflow: every later try (on any worker) reads it, even
      // after the gateway has forgotten the request's key and sending the request again would find nothing.
      const paymentId =
        input.gatewayTransactionId ??
        (await stores.attemptSends.paymentIdOf(input.accountId, input.attemptKey));
      // The stop the merchant or the billing platform asked while this lookup was backing off, as recorded on
      // the recovery (the workflow's own stop is not visible here); read on every try, so the first try after
      // it only reads.
      const stopAsked = (await stores.recoveries.stopAskedOf(input.transactionId)) !== null;
      const found = await measured(kind, 'lookup', () =>
        adapter.lookup({
          idempotencyKey: input.attemptKey,
          token: input.option.token,
          amount: input.amount,
          currency: input.currency,
          sentAt: input.sentAt,
          firstSentAt,
          ...(input.subscriptionId ? { subscriptionId: input.subscriptionId } : {}),
          ...(paymentId ? { gatewayTransactionId: paymentId } : {}),
          ...(stopAsked ? { readOnly: true } : {}),
        }),
      ).catch(async (error: unknown) => {
        if (error instanceof PaymentPendingError && !paymentId)
          await stores.attemptSends.notePaymentId(
            input.accountId,
            input.attemptKey,
            error.gatewayTransactionId,
          );
        throw error;
      });
      await remember(input, new Date(input.sentAt), found, test);
      return found;
    },

    /** Account updater: a fresh token for an expired card, or null. */
    async refreshCard(input: { accountId: string; gateway: string; token: string }): Promise<string | null> {
      const adapter = await gatewayFor(stores, input.accountId, input.gateway, env).catch(
        (error: unknown) => {
          // Its gateway removed since (see attemptCharge): no fresh token, nothing stuck retrying.
          if (error instanceof GatewayGoneError) return null;
          throw error;
        },
      );
      return adapter?.refreshCard ? adapter.refreshCard(input.token) : null;
    },
  };
}
