import { gatewaysCharging } from '../../activities/gateways/routing.js';
import type { ConsumptionDoc } from '../../store/links.js';
import type { AppContext } from '../context.js';
import type { PageMessages } from './i18n/index.js';
import { cardSaved } from './card-update-views.js';
import { sendPage } from './layout.js';
import type { LoadedLink, PageDeps } from './load-link.js';
import { goneLinkPage } from './notices.js';
import { useBySameSubmission } from './resubmission.js';

/** "Visa card ending in 4242" in the page's language, from the brand as a gateway names it (visa…). */
export const cardLabel = (m: PageMessages, brand: string, last4: string) =>
  m.card.label(`${brand.charAt(0).toUpperCase()}${brand.slice(1)}`, last4);

/** The hosted card-update page of a link token. */
export const cardUpdatePath = (token: string) => `/update-card/${token}`;

/** A card the customer entered, as its gateway saved it. */
export interface EnteredCard {
  token: string;
  brand: string;
  last4: string;
}

function showSaved(ctx: AppContext, loaded: LoadedLink<'card_update'>, card: Omit<EnteredCard, 'token'>) {
  const { brand, link, messages } = loaded;
  sendPage(ctx, 200, {
    title: messages.card.savedTitle,
    brand,
    messages,
    body: cardSaved(
      {
        brandName: brand.name,
        cardLabel: cardLabel(messages, card.brand, card.last4),
        returnUrl: link.data.returnUrl,
      },
      messages,
    ),
  });
}

/**
 * Shows the saved card again when this same submission (form or gateway session, by `digest`) made the
 * link's use: a second click while the first was saving, a reload. False for any other use.
 */
export function answerSavedAgain(
  deps: Pick<PageDeps, 'clock'>,
  ctx: AppContext,
  loaded: LoadedLink<'card_update'>,
  consumption: ConsumptionDoc | null,
  digest: string,
): boolean {
  const same = useBySameSubmission(consumption, digest, deps.clock());
  if (same?.outcome.kind !== 'card_updated' || !same.outcome.card) return false;
  showSaved(ctx, loaded, same.outcome.card);
  return true;
}

/**
 * The customer's new card replaces the old one: the link is consumed (once: a second save finds it used,
 * and is shown the card saved when it is the same submission sent again), card.updated goes out and queued
 * recoveries on the old card retry with the new one.
 */
export async function saveCard(
  deps: PageDeps,
  ctx: AppContext,
  loaded: LoadedLink<'card_update'>,
  card: EnteredCard,
  digest: string,
): Promise<void> {
  const { account, link } = loaded;
  const method = { token: card.token, paymentMethodType: 'card' as const };
  const used = await deps.outcomes.updateCard(
    link,
    {
      ...method,
      eligibleGateways: await gatewaysCharging(deps.stores, account.id, method, deps),
      label: { brand: card.brand, last4: card.last4 },
    },
    // The card is saved: should its event or retries fail now, the follow-up workflow does them.
    { formDigest: digest, deferEffects: true },
  );
  if (used) return showSaved(ctx, loaded, card);
  const winner = (await deps.stores.links.find(link._id))?.consumption ?? null;
  if (!answerSavedAgain(deps, ctx, loaded, winner, digest)) goneLinkPage(ctx, loaded, 'used');
}
