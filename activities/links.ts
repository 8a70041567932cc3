import { proactiveRetention, recentFailureCount } from '../domain/retention.js';
import { createLinkOutcomes } from '../services/link-outcomes.js';
import { createLinkService } from '../services/links.js';
import type { ActivityDeps } from './deps.js';

/**
 * Activities that mint hosted links for the engine. Each mints and emits in one step, so the link's token
 * appears only in the event, never in workflow history; a stable eventId keeps a retry from sending twice.
 * A retry that finds its event stored mints nothing and publishes that event again: the stored payload
 * carries the first link, and a crash between storing and starting the delivery left it unsent.
 */
export function linkActivities(deps: ActivityDeps) {
  const { stores, events, clock } = deps;
  const links = createLinkService(deps);
  const outcomes = createLinkOutcomes(deps);

  async function load(accountId: string, transactionId: string) {
    const account = await stores.accounts.find(accountId);
    const recovery = await stores.recoveries.find(accountId, transactionId);
    if (!account || !recovery) throw new Error(`Recovery ${transactionId} of account ${accountId} not found`);
    return { account, recovery };
  }

  return {
    /**
     * After a failed recovery: when the customer's recoveries of the account's current mode failed
     * `minFailures` times within the window on an account with the cancel flow enabled, mints a cancel-flow
     * link and emits recovery.proactive_retention, at most once per window per customer and mode.
     */
    async offerProactiveRetention(input: { accountId: string; transactionId: string; eventId: string }) {
      // This very activity stored its offer before (and claimed the window): see it delivered, whatever
      // has changed since.
      if (await events.republish(input.eventId)) return;
      const { account, recovery } = await load(input.accountId, input.transactionId);
      const email = recovery.customerEmail;
      if (!account.settings.cancelFlow.enabled || !email) return;
      const now = clock();
      // A failure counts from when it ended (later writes move updatedAt), and not once the customer paid it.
      // Once the account is live, what its sandbox did while integrating counts no more (nor the other way).
      const mode = { simulated: account.testMode };
      const failures = (await stores.recoveries.forCustomer(account.id, email, mode)).filter(
        (r) => r.state === 'failed' && r.paidOnTheirOwnAt === undefined,
      );
      const count = recentFailureCount(
        failures.map((r) => r.endedAt ?? r.updatedAt),
        now,
      );
      if (count < proactiveRetention.minFailures) return;
      const claimed = await stores.retentionNotices.claim(
        account.id,
        email,
        input.eventId,
        now,
        proactiveRetention.windowMs,
        mode,
      );
      if (!claimed) return;
      // A recovery a billing platform reported names the platform's customer (and Braintree's the
      // subscription), which the merchant acts on; one from the API knows the customer by email alone.
      const link = await links.mintCancelFlowLink(account, {
        customerId: recovery.connector?.customerId ?? email,
        customerEmail: email,
        subscriptionId: recovery.connector?.subscriptionId ?? null,
        amount: recovery.amount,
        currency: recovery.currency,
        returnUrl: null,
        locale: recovery.request.locale ?? null,
      });
      await events.publish(
        account.id,
        {
          event: 'recovery.proactive_retention',
          customerEmail: email,
          recentFailureCount: count,
          cancelFlowUrl: link.url,
          cancelFlowToken: link.token,
          amount: recovery.amount,
          currency: recovery.currency,
          reason: `${count} recoveries for this customer failed within ${proactiveRetention.windowMs / 86_400_000} days; offer retention options before the subscription lapses.`,
          timestamp: now.toISOString(),
        },
        { eventId: input.eventId },
      );
    },

    /**
     * Finishes the effects of a link's use that its request left undone (linkUseWorkflow); nothing when
     * they are done, or the link was never used (or is gone).
     */
    async finishLinkUse(input: { hash: string }): Promise<void> {
      const found = await stores.links.find(input.hash);
      if (found) await outcomes.finishInterrupted(found.link, found.consumption, 0);
    },

    /** A retry skipped as too unlikely to succeed: mints a card-update link and emits recovery.skipped_high_risk. */
    async reportHighRiskSkip(input: {
      accountId: string;
      transactionId: string;
      /** The id the failure that follows carries (FAILED_API_… when answered at once). */
      skippedChargeId: string;
      eventId: string;
      successScore: number;
      confidence: number;
      reasoning: string;
    }) {
      if (await events.republish(input.eventId)) return;
      const { account, recovery } = await load(input.accountId, input.transactionId);
      const link = await links.mintCardUpdateLink(account, {
        paymentMethodToken: recovery.paymentMethodToken,
        customerEmail: recovery.customerEmail,
        returnUrl: null,
        transactionId: recovery._id,
        locale: recovery.request.locale ?? null,
      });
      await events.publish(
        account.id,
        {
          event: 'recovery.skipped_high_risk',
          paymentMethodToken: recovery.paymentMethodToken,
          amount: recovery.amount,
          currency: recovery.currency,
          riskScore: Math.round((100 - input.successScore) * 10) / 10,
          confidence: input.confidence,
          reasoning: input.reasoning,
          cardUpdateUrl: link.url,
          skippedChargeId: input.skippedChargeId,
          timestamp: clock().toISOString(),
        },
        { eventId: input.eventId },
      );
    },
  };
}
