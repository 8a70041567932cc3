import { randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { EventPayload } from '../domain/events.js';
import type { PaymentMethodType } from '../domain/gateway-kinds.js';
import { statusOf } from '../domain/recovery.js';
import { searchAttributeKeys } from '../domain/search-attributes.js';
import { interruptedUseAfterMs, linkUseWorkflowId, type ChurnOutcome } from '../domain/links.js';
import type { CancelOffer } from '../domain/settings.js';
import type { Logger } from '../runtime/logger.js';
import type { Stores } from '../store/index.js';
import type { ConsumptionDoc, LinkDoc, LinkOutcome } from '../store/links.js';
import type { TaskQueues } from '../worker/task-queues.js';
import { linkUseWorkflow } from '../workflows/link-use.js';
import { retryWithNewCard } from './card-retry.js';
import type { EventPublisher } from './events.js';

type CardUpdateLink = Extract<LinkDoc, { kind: 'card_update' }>;
type CancelFlowLink = Extract<LinkDoc, { kind: 'cancel_flow' }>;

function churnEvent(
  outcome: ChurnOutcome,
  base: {
    customerId: string;
    customerEmail: string | null;
    subscriptionId: string | null;
    timestamp: string;
    offer?: CancelOffer;
  },
): EventPayload {
  switch (outcome) {
    case 'retained':
      return { event: 'churn.flow.retained', outcome, ...base };
    case 'paused':
      return { event: 'churn.flow.paused', outcome, ...base };
    case 'downgraded':
      return { event: 'churn.flow.downgraded', outcome, ...base };
    case 'cancelled':
      return { event: 'churn.flow.cancelled', outcome, ...base };
  }
}

/** How a link is used: by which hosted submission, and whether its caller waits for the effects. */
export interface UseOptions {
  /** Digest of the hosted form submission (or card-form session) making the use: see ConsumptionDoc. */
  formDigest?: string;
  /** Log effects that fail after the use is recorded and leave them to the follow-up workflow. */
  deferEffects?: boolean;
}

/**
 * The earlier card update of a link made with this same new payment method, if the recorded use is one:
 * a retried completion (its answer lost) is answered as the first was, never a second update.
 */
export function sameCardUpdate(
  consumption: ConsumptionDoc | null,
  card: { token: string; paymentMethodType: PaymentMethodType },
): Extract<LinkOutcome, { kind: 'card_updated' }> | null {
  const o = consumption?.outcome;
  if (o?.kind !== 'card_updated' || o.newPaymentMethodToken !== card.token) return null;
  return (o.paymentMethodType ?? 'card') === card.paymentMethodType ? o : null;
}

export interface LinkOutcomeDeps {
  stores: Stores;
  temporal: Client;
  queues: TaskQueues;
  events: EventPublisher;
  clock: () => Date;
  log: Logger;
}

/** Consuming a link and what follows from it: the event, and for a new card the retry of queued recoveries. */
export function createLinkOutcomes(deps: LinkOutcomeDeps) {
  const { stores, temporal, queues, events, clock, log } = deps;

  /**
   * Recoveries of the account under way on the old token (and the one the link names) retry at once: a
   * queued one now, one whose attempt is under way (or being looked up at the gateway) as soon as that
   * attempt leaves it waiting. One that has taken the new card on already (told by an earlier try of this
   * use) is not told again: it would charge the card once more at once instead of at its planned time.
   */
  async function retryUnderWay(
    link: CardUpdateLink,
    card: { newToken: string; paymentMethodType: PaymentMethodType },
  ): Promise<void> {
    const { accountId, data } = link;
    const underWay = await stores.recoveries.underWayOnToken(accountId, data.paymentMethodToken);
    const named = data.transactionId ? await stores.recoveries.find(accountId, data.transactionId) : null;
    if (
      named &&
      statusOf(named.state) === 'unknown' &&
      named.paymentMethodToken !== card.newToken &&
      !underWay.some((r) => r._id === named._id)
    )
      underWay.push(named);
    await retryWithNewCard(temporal, log, underWay, card);
  }

  async function cardUpdated(
    link: CardUpdateLink,
    c: ConsumptionDoc,
    o: Extract<LinkOutcome, { kind: 'card_updated' }>,
  ) {
    const newToken = o.newPaymentMethodToken;
    await events.publish(
      link.accountId,
      {
        event: 'card.updated',
        oldPaymentMethodToken: link.data.paymentMethodToken,
        newPaymentMethodToken: newToken,
        paymentMethodType: o.paymentMethodType ?? 'card',
        eligibleGateways: o.eligibleGateways,
        clientId: link.accountId,
        timestamp: c.at.toISOString(),
      },
      { eventId: c.eventId },
    );
    await retryUnderWay(link, { newToken, paymentMethodType: o.paymentMethodType ?? 'card' });
  }

  async function churned(
    link: CancelFlowLink,
    c: ConsumptionDoc,
    outcome: ChurnOutcome,
    offer: CancelOffer | null,
  ) {
    const { customerId, customerEmail, subscriptionId } = link.data;
    const base = { customerId, customerEmail, subscriptionId, timestamp: c.at.toISOString() };
    await events.publish(link.accountId, churnEvent(outcome, offer ? { ...base, offer } : base), {
      eventId: c.eventId,
    });
  }

  /** Emits the use's event (same eventId every time, so at most one is sent) and applies it. */
  async function complete(link: LinkDoc, c: ConsumptionDoc): Promise<void> {
    const o = c.outcome;
    if (link.kind === 'card_update' && o.kind === 'card_updated') await cardUpdated(link, c, o);
    else if (link.kind === 'cancel_flow' && o.kind === 'churn') await churned(link, c, o.outcome, o.offer);
    else throw new Error(`Link ${link._id} (${link.kind}) cannot have a ${o.kind} outcome`);
    await stores.links.markEffectsDone(link._id, clock());
  }

  /**
   * Starts the use's follow-up workflow (once per link: a concurrent use finds it started), which finishes
   * the effects should this request die or fail after recording the use.
   */
  async function followUp(link: LinkDoc): Promise<void> {
    try {
      await temporal.workflow.start(linkUseWorkflow, {
        workflowId: linkUseWorkflowId(link._id),
        taskQueue: queues.recovery,
        args: [{ hash: link._id }],
        typedSearchAttributes: [{ key: searchAttributeKeys.accountId, value: link.accountId }],
      });
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
  }

  /**
   * Uses the link once: the consumption insert that wins decides, every concurrent use gets null.
   * The winner then completes the effects; the follow-up workflow, started first, completes them if the
   * winner cannot. With `deferEffects`, effects that fail once the use is recorded are logged and left to
   * that workflow instead of thrown: the use stands, and its caller shows it as done.
   */
  async function consumeLink(
    link: LinkDoc,
    outcome: LinkOutcome,
    how: UseOptions = {},
  ): Promise<ConsumptionDoc | null> {
    await followUp(link);
    const consumption: ConsumptionDoc = {
      _id: link._id,
      accountId: link.accountId,
      at: clock(),
      eventId: randomUUID(),
      outcome,
      effectsDoneAt: null,
      ...(how.formDigest ? { formDigest: how.formDigest } : {}),
    };
    if (!(await stores.links.consume(consumption))) return null;
    try {
      await complete(link, consumption);
    } catch (error) {
      if (!how.deferEffects) throw error;
      log.error(
        { err: error, link: link._id, workflowId: linkUseWorkflowId(link._id) },
        "a link's use is recorded but its effects failed; its follow-up workflow finishes them",
      );
    }
    return consumption;
  }

  return {
    consumeLink,

    /**
     * Uses a card-update link once for the customer's new card, with the account's gateways that can charge
     * it: card.updated, and queued recoveries retry with it. Null when another use won.
     */
    async updateCard(
      link: CardUpdateLink,
      card: {
        token: string;
        paymentMethodType: PaymentMethodType;
        eligibleGateways: string[];
        /** The card as the page names it, kept to show a resubmitted form the card saved. */
        label?: { brand: string; last4: string };
      },
      how: UseOptions = {},
    ): Promise<ConsumptionDoc | null> {
      return consumeLink(
        link,
        {
          kind: 'card_updated',
          newPaymentMethodToken: card.token,
          eligibleGateways: card.eligibleGateways,
          ...(card.paymentMethodType === 'card' ? {} : { paymentMethodType: card.paymentMethodType }),
          ...(card.label ? { card: card.label } : {}),
        },
        how,
      );
    },

    /**
     * Finishes the effects of a use that was interrupted after consuming the link (crash, lost database),
     * once it is `minAgeMs` old: a use younger than that may still be finishing them itself (the follow-up
     * workflow, which has waited that long already, passes 0).
     */
    async finishInterrupted(
      link: LinkDoc,
      consumption: ConsumptionDoc | null,
      minAgeMs = interruptedUseAfterMs,
    ): Promise<void> {
      if (!consumption || consumption.effectsDoneAt) return;
      if (clock().getTime() - consumption.at.getTime() < minAgeMs) return;
      await complete(link, consumption);
    },
  };
}

export type LinkOutcomes = ReturnType<typeof createLinkOutcomes>;
