import { heartbeat } from '@temporalio/activity';
import { z } from 'zod';
import { daysUntilExpiry, expiresSoon } from '../domain/card-health.js';
import { CustomerEmail } from '../domain/recovery-request.js';
import { stableEventId } from '../runtime/crypto.js';
import { createLinkService } from '../services/links.js';
import type { Account } from '../store/accounts.js';
import type { ActivityDeps } from './deps.js';
import { adaptersFor } from './gateways/resolve.js';
import { resumedProgress } from './heartbeat-progress.js';
import type { CardOnFile } from './gateways/types.js';

/** What one account's sweep did. */
export interface CardSweepResult {
  /**
   * `disabled`: the account's sweep is off, or the account is being closed (a sweep under way stops at its
   * next page); `unsupported`: its primary gateway cannot list cards, or a
   * warning's link would lead to no card form (neither the page's nor the gateway's, and no `cardFormUrl`).
   */
  outcome: 'swept' | 'disabled' | 'unsupported';
  gateway: string | null;
  /** Cards on file looked at. */
  cards: number;
  /** Of those, cards still valid that expire within the account's `daysBeforeExpiry`. */
  expiringSoon: number;
  /** card.expiring_soon warnings this sweep sent (a card is warned about once per expiry). */
  warned: number;
}

/** Where a sweep had got to: saved with each heartbeat, so a retried sweep goes on from the next page. */
const Progress = z.object({
  after: z.string().nullable(),
  done: z.boolean(),
  cards: z.int(),
  expiringSoon: z.int(),
  warned: z.int(),
});
type Progress = z.infer<typeof Progress>;

/**
 * The eventId of the warning for one card and expiry: the same card and expiry always give the same id, so
 * a card is warned about once per expiry however many sweeps see it, and a card renewed in place with a
 * new expiry is warned about again when that one nears.
 */
export function expiryWarningEventId(
  accountId: string,
  card: Pick<CardOnFile, 'token' | 'expMonth' | 'expYear'>,
): string {
  return stableEventId('card.expiring_soon', accountId, card.token, `${card.expYear}-${card.expMonth}`);
}

/**
 * Until when a warning is remembered: the 2nd of the month after the card's expiry, 00:00 UTC, once its last
 * valid day has ended in every time zone (the sweep no longer warns about it from then on).
 */
const rememberedUntil = (card: Pick<CardOnFile, 'expMonth' | 'expYear'>) =>
  new Date(Date.UTC(card.expYear, card.expMonth, 2));

/** The card health sweep: reads an account's cards on file and warns about those about to expire. */
export function cardSweepActivities(deps: ActivityDeps) {
  const { stores, events, clock } = deps;
  const links = createLinkService(deps);

  /**
   * Mints a 14-day card-update link and sends the pre-emptive card.expiring_soon; false if sent before (then
   * only its delivery is seen to, which a crash after storing it may have kept from starting). Each warning
   * sent is remembered apart from its event (also one stored before a crash, or by an earlier version), so
   * one erased with its customer, or purged, is not sent again while the card stays on file.
   */
  async function warn(account: Account, card: CardOnFile, days: number): Promise<boolean> {
    const eventId = expiryWarningEventId(account.id, card);
    const remember = () => stores.expiryWarnings.remember(account.id, eventId, rememberedUntil(card));
    if (await events.republish(eventId)) {
      await remember();
      return false;
    }
    if (await stores.expiryWarnings.sent(account.id, eventId)) return false;
    // In lower case, as every email Recoup stores, so an erasure by the address finds the warning and its
    // link. A gateway may hold an address Recoup would refuse: the warning goes out without it.
    const customerEmail = CustomerEmail.safeParse(card.customerEmail).data ?? null;
    const link = await links.mintCardExpiryLink(account, {
      paymentMethodToken: card.token,
      customerEmail,
      returnUrl: null,
      transactionId: null,
    });
    const expiry = `${String(card.expMonth).padStart(2, '0')}/${card.expYear}`;
    await events.publish(
      account.id,
      {
        event: 'card.expiring_soon',
        clientId: account.id,
        paymentMethodToken: card.token,
        expiryMonth: card.expMonth,
        expiryYear: card.expYear,
        daysUntilExpiry: days,
        message: `The ${card.brand} card ending ${card.last4} expires at the end of ${expiry}; ask the customer to update it before their next renewal.`,
        ...(customerEmail ? { customerEmail } : {}),
        cardUpdateUrl: link.url,
        preemptive: true,
        timestamp: clock().toISOString(),
      },
      { eventId },
    );
    await remember();
    return true;
  }

  return {
    /**
     * The accounts whose card health sweep is enabled, all in one result: what the daily sweep asked before
     * it paged them, kept for a run of that code still under way (too large a result past ~50,000 accounts).
     */
    async cardSweepTargets(): Promise<string[]> {
      return stores.accounts.sweepEnabled();
    },

    /**
     * A page of the accounts whose card health sweep is enabled, in id order: at most `limit` (the daily
     * sweep's page size), those after `after` (null: from the first).
     */
    async cardSweepPage(input: { after: string | null; limit: number }): Promise<string[]> {
      return stores.accounts.sweepEnabledPage(input.after, input.limit);
    },

    /**
     * Sweeps one account's cards on file at its primary gateway as of `asOf` (epoch ms, the workflow's
     * clock): every card still valid that expires within `daysBeforeExpiry` days (in the account's time
     * zone) gets one card.expiring_soon with a 14-day card-update link, once per card and expiry.
     */
    async sweepAccountCards(input: { accountId: string; asOf: number }): Promise<CardSweepResult> {
      const loaded = await stores.accounts.withGateways(input.accountId);
      if (!loaded) throw new Error(`Account ${input.accountId} not found`);
      const { account } = loaded;
      const primary = loaded.gateways[0];
      const sweep = account.settings.cardHealthSweep;
      const base = { gateway: primary?.name ?? null, cards: 0, expiringSoon: 0, warned: 0 };
      if (!sweep.enabled || account.closing) return { outcome: 'disabled', ...base };
      const adapter = primary && adaptersFor(stores, account.id, [primary], deps).get(primary.name);
      if (!adapter?.listCards) return { outcome: 'unsupported', ...base };
      // A warning's link must lead to a card form: the page's own, the gateway's, or the merchant's.
      if (!adapter.tokenize && !adapter.hostedCardForm && !account.settings.cardFormUrl)
        return { outcome: 'unsupported', ...base };

      const progress = resumedProgress(Progress, () => ({
        after: null,
        done: false,
        cards: 0,
        expiringSoon: 0,
        warned: 0,
      }));
      while (!progress.done) {
        // An account closed meanwhile is warned about no more: its closure deletes what the sweep wrote.
        if ((await stores.accounts.find(account.id))?.closing !== false) break;
        const page = await adapter.listCards(progress.after);
        for (const card of page.cards) {
          progress.cards += 1;
          const days = daysUntilExpiry(card, input.asOf, account.settings.timezone);
          if (!expiresSoon(days, sweep.daysBeforeExpiry)) continue;
          progress.expiringSoon += 1;
          if (await warn(account, card, days)) progress.warned += 1;
        }
        progress.after = page.next;
        progress.done = page.next === null;
        heartbeat(progress);
      }
      const { done, cards, expiringSoon, warned } = progress;
      return { outcome: done ? 'swept' : 'disabled', gateway: base.gateway, cards, expiringSoon, warned };
    },
  };
}
