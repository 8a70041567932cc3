import type { Client } from '@temporalio/client';
import { gatewaysCharging } from '../activities/gateways/routing.js';
import { daysUntilExpiry } from '../domain/card-health.js';
import type {
  ConnectorAction,
  ConnectorPlatform,
  ExpiringCard,
  ReportedFailure,
} from '../domain/connectors.js';
import { CustomerEmail, recoveryRequestFor } from '../domain/recovery-request.js';
import { stableEventId } from '../runtime/crypto.js';
import type { Logger } from '../runtime/logger.js';
import type { EventPublisher } from '../services/events.js';
import { retryWithNewCard } from '../services/card-retry.js';
import type { Account } from '../store/accounts.js';
import type { Stores } from '../store/index.js';
import type { TaskQueues } from '../worker/task-queues.js';
import { admitRecovery, mayStillBeStarting } from './admit-recovery.js';
import { createPaymentNotices, notStartedYet } from './connector-payments.js';
import { HttpError } from './http-error.js';
import { launchRecovery, workflowExists } from './launch-recovery.js';
import { formatIssues } from './validate.js';

/** What the connector intake needs. */
export interface ConnectorIntakeDeps {
  stores: Stores;
  /** Recoup's public URL, which gateway adapters are made with. */
  publicBaseUrl: string;
  temporal: Client;
  queues: TaskQueues;
  clock: () => Date;
  log: Logger;
  events: EventPublisher;
  /** How long a recovery waits before charging a card the platform reported (`platformCardSettleMs`). */
  platformCardSettleMs?: number;
}

/**
 * How long a recovery waits before it charges a new card the billing platform reported: the platform may be
 * collecting the past-due invoice with that card at that moment (a card saved while the customer pays on
 * the platform's own page is told before the payment; a platform may also collect on a card update), and
 * the invoice read before the charge would still find it owed. Two minutes lets that payment land and its
 * notice stop the recovery, or the read find the invoice paid.
 */
export const platformCardSettleMs = 120_000;

/** Request fields a platform adds to the payment itself: helpful to the engine, never worth refusing it for. */
const enrichment = new Set(['customerEmail', 'cardOrigin', 'binPrefix', 'originalDeclineCode', 'locale']);

/** What Recoup did with one platform event: the intake's answer to the platform. */
export type ConnectorReceipt =
  | { action: 'recovery_started' | 'already_received'; transactionId: string }
  | { action: 'card_updated'; recoveriesRetried: number }
  | { action: 'paid_elsewhere' | 'control_paid' | 'paid_after_end'; transactionId: string | null }
  | { action: 'amount_lowered'; transactionId: string; amountDue: number }
  | { action: 'card_expiring'; eventId: string }
  | { action: 'ignored'; reason: string; details?: Record<string, string[]> };

/**
 * Carries out what a platform event asks: a failed payment becomes a recovery (through the same intake
 * checks as execute, keyed by the platform's invoice id), a new card retries the customer's queued
 * recoveries, a payment made elsewhere stops the invoice's recovery, an expiry notice is forwarded.
 */
export function createConnectorIntake(deps: ConnectorIntakeDeps) {
  const { stores, temporal, clock, log, events } = deps;
  const { paid, partlyPaid } = createPaymentNotices(deps);

  async function failure(
    account: Account,
    platform: ConnectorPlatform,
    f: ReportedFailure,
    requestId: string,
  ): Promise<ConnectorReceipt> {
    const { invoiceId, customerId, subscriptionId, ...fields } = f;
    const schema = recoveryRequestFor(account.gateways[0]?.kind ?? 'test');
    const request: Record<string, unknown> = { ...fields, idempotencyKey: invoiceId };
    // With the input on each issue, formatIssues tells a missing field from a wrong one (details of a 422).
    let parsed = schema.safeParse(request, { reportInput: true });
    const refused = parsed.success ? [] : parsed.error.issues.map((i) => String(i.path[0]));
    if (refused.length > 0 && refused.every((field) => enrichment.has(field))) {
      // A platform's odd email or country must not cost the merchant the recovery: go on without it.
      for (const field of refused) delete request[field];
      parsed = schema.safeParse(request, { reportInput: true });
    }
    // A failure the account cannot charge (a token none of its gateways takes, an amount under the minimum)
    // is answered 200 and ignored, as decisions.md has every event not handled: an error would only bring the
    // same event back, and platforms turn a webhook off after enough failures (Recharge: 19 in 48 hours),
    // losing every later failure. The reason and details show in the platform's webhook log and Recoup's.
    if (!parsed.success)
      return {
        action: 'ignored',
        reason: 'The failed payment cannot be recovered through this account',
        details: formatIssues(parsed.error),
      };
    const now = clock();
    const admission = await admitRecovery(stores, account, parsed.data, now, {
      platform,
      invoiceId,
      customerId,
      ...(subscriptionId ? { subscriptionId } : {}),
    });
    if (admission.kind === 'duplicate') {
      const { existing } = admission;
      if (admission.by !== 'idempotencyKey' || !existing) throw admission.error;
      // Stored under a minute ago and not started yet: its intake may have died before starting it. Marking
      // the event done would leave that recovery unstarted for good; the platform's next retry takes it over.
      // (Temporal unreachable: not known to have started either.)
      if (mayStillBeStarting(existing, now) && !(await workflowExists(temporal, existing.workflowId)))
        throw notStartedYet(existing, now, requestId);
      // The platform reported this invoice's failure again (its own retry failed too): one recovery per invoice.
      return { action: 'already_received', transactionId: existing.publicId };
    }
    try {
      await launchRecovery(deps, admission.doc, requestId, false);
    } catch (error) {
      // A recovery that looked never started runs after all (workers far behind): the invoice is in hand.
      if (error instanceof HttpError && error.status === 409)
        return { action: 'already_received', transactionId: admission.doc.publicId };
      throw error;
    }
    return { action: 'recovery_started', transactionId: admission.doc._id };
  }

  async function cardUpdated(
    account: Account,
    platform: ConnectorPlatform,
    customerId: string,
    newToken: string,
  ): Promise<ConnectorReceipt> {
    const card = { token: newToken, paymentMethodType: 'card' as const };
    if ((await gatewaysCharging(stores, account.id, card, deps)).length === 0)
      return {
        action: 'ignored',
        reason: "The new payment method is not one the account's gateways can charge",
      };
    // A recovery already on this card (the customer saved it through Recoup's own page) is not retried twice.
    const underWay = (
      await stores.recoveries.underWayForPlatformCustomer(account.id, platform, customerId)
    ).filter((r) => r.paymentMethodToken !== newToken);
    return {
      action: 'card_updated',
      recoveriesRetried: await retryWithNewCard(temporal, log, underWay, {
        newToken,
        paymentMethodType: card.paymentMethodType,
        settleMs: deps.platformCardSettleMs ?? platformCardSettleMs,
      }),
    };
  }

  /**
   * The platform's notice of a card about to expire, as card.expiring_soon with the platform's expMonth and
   * expYear. Published under an id derived from the platform's event id: a retry of the notice after a
   * crash finds it sent.
   */
  async function expiring(
    account: Account,
    platform: ConnectorPlatform,
    platformEventId: string,
    card: ExpiringCard,
  ): Promise<ConnectorReceipt> {
    const now = clock();
    const days = daysUntilExpiry(card, now.getTime(), account.settings.timezone);
    const expiry = `${String(card.expMonth).padStart(2, '0')}/${card.expYear}`;
    // In lower case, as every email Recoup stores, so an erasure by the address finds the notice; one
    // Recoup would refuse is left out, as from a recovery.
    const customerEmail = CustomerEmail.safeParse(card.customerEmail).data;
    const { eventId } = await events.publish(
      account.id,
      {
        event: 'card.expiring_soon',
        clientId: account.id,
        paymentMethodToken: card.token,
        expMonth: card.expMonth,
        expYear: card.expYear,
        ...(days >= 0 ? { daysUntilExpiry: days } : {}),
        ...(customerEmail ? { customerEmail } : {}),
        message: `${platform} reports that the ${card.brand} card ending ${card.last4} expires at the end of ${expiry}; ask the customer to update it before their next renewal.`,
        timestamp: now.toISOString(),
      },
      { eventId: stableEventId('connector', account.id, platform, platformEventId) },
    );
    return { action: 'card_expiring', eventId };
  }

  return {
    apply(
      account: Account,
      platform: ConnectorPlatform,
      platformEventId: string,
      action: ConnectorAction,
      requestId: string,
    ): Promise<ConnectorReceipt> {
      switch (action.kind) {
        case 'failure':
          return failure(account, platform, action.failure, requestId);
        case 'card_updated':
          return cardUpdated(account, platform, action.customerId, action.newToken);
        case 'paid':
          return paid(account, platform, action.invoiceId);
        case 'partly_paid':
          return partlyPaid(account, platform, action, requestId);
        case 'card_expiring':
          return expiring(account, platform, platformEventId, action.card);
        case 'ignored':
          return Promise.resolve({ action: 'ignored', reason: action.reason });
      }
    },
  };
}
