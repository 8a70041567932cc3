import { gatewaysCharging } from '../../activities/gateways/routing.js';
import type { AppContext } from '../context.js';
import type { PageMessages } from './i18n/index.js';
import { cardSaved } from './card-update-views.js';
import { sendPage } from './layout.js';
import type { LoadedLink, PageDeps } from './load-link.js';
import { goneLinkPage } from './notices.js';

/** "Visa card ending in 4242" in the page's language, from the brand as a gateway names it (visa…). */
export const cardLabel = (m: PageMessages, brand: string, last4: string) =>
  m.card.label(`${brand.charAt(0).toUpperCase()}${brand.slice(1)}`, last4);

/** The hosted card-update page of a link token. */
export const cardUpdatePath = (token: string) => `/update-card/${token}`;

/**
 * The customer's new card replaces the old one: the link is consumed (once: a second save finds it used),
 * card.updated goes out and queued recoveries on the old card retry with the new one.
 */
export async function saveCard(
  deps: PageDeps,
  ctx: AppContext,
  loaded: LoadedLink<'card_update'>,
  card: { token: string; label: string },
): Promise<void> {
  const { account, brand, link, messages } = loaded;
  const method = { token: card.token, paymentMethodType: 'card' as const };
  const used = await deps.outcomes.updateCard(link, {
    ...method,
    eligibleGateways: await gatewaysCharging(deps.stores, account.id, method, deps),
  });
  if (!used) return goneLinkPage(ctx, loaded, 'used');
  sendPage(ctx, 200, {
    title: messages.card.savedTitle,
    brand,
    messages,
    body: cardSaved(
      { brandName: brand.name, cardLabel: card.label, returnUrl: link.data.returnUrl },
      messages,
    ),
  });
}
