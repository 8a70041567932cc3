import { checkoutLifeMs } from '../../activities/gateways/stripe.js';
import type { HostedCardForm } from '../../activities/gateways/types.js';
import { pagesOrigin } from '../../services/links.js';
import type { AppContext } from '../context.js';
import { html } from './html.js';
import { sendPage } from './layout.js';
import type { LoadedLink, PageDeps } from './load-link.js';
import { submissionDigest } from './resubmission.js';
import { cardUpdatePath, saveCard } from './save-card.js';

/** The gateway's session the customer came back from its form with, if any. */
export function returnedSession(ctx: AppContext): string | null {
  const { session } = ctx.query;
  return typeof session === 'string' && session !== '' ? session : null;
}

/** The digest a card saved in a gateway's session is used with: the same session back again is a reload. */
export const sessionDigest = (session: string) => submissionDigest('card-session', session);

/**
 * How long after its link expired a session opened for it can still come back with a card: Stripe keeps a
 * Checkout session open at least half an hour, so one opened in the link's last minutes outlives it.
 */
const sessionOutlivesLinkMs = checkoutLifeMs.min;

/** Back from the gateway's form without a saved card: nothing changed, and the link still works. */
function notSaved(ctx: AppContext, loaded: LoadedLink<'card_update'>, token: string, why: string): void {
  const { brand, messages } = loaded;
  sendPage(ctx, 200, {
    title: messages.card.notChanged,
    brand,
    messages,
    body: html`<h1>${messages.card.notChanged}</h1>
      <p class="lead">${why}</p>
      <p><a class="button" href="${cardUpdatePath(token)}">${messages.card.tryAgain}</a></p>`,
  });
}

/**
 * The currency the gateway's form is opened for (it offers the payment methods that work in it): that of
 * the recovery the link names, else of one under way on the old card, else of the account's latest
 * recovery (a card-expiry link names none); USD only for an account without any.
 */
async function currencyOf(deps: PageDeps, link: LoadedLink<'card_update'>['link']): Promise<string> {
  const { accountId, data } = link;
  const named = data.transactionId ? await deps.stores.recoveries.find(accountId, data.transactionId) : null;
  if (named) return named.currency;
  const [onCard] = await deps.stores.recoveries.underWayOnToken(accountId, data.paymentMethodToken);
  if (onCard) return onCard.currency;
  const [latest] = await deps.stores.recoveries.page(accountId, { limit: 1 });
  return latest?.currency ?? 'USD';
}

/**
 * The card-update page of a gateway that takes cards only in its own form: the customer is sent there
 * (303) and comes back to this page with the gateway's session, which saves the card if the session was
 * finished and was opened for this link.
 */
export async function hostedCardUpdate(
  deps: PageDeps,
  ctx: AppContext,
  loaded: LoadedLink<'card_update'>,
  token: string,
  form: HostedCardForm,
): Promise<void> {
  const { account, link, messages } = loaded;
  if (ctx.query.cancelled !== undefined) return notSaved(ctx, loaded, token, messages.card.leftHostedForm);
  const session = returnedSession(ctx);
  if (session) {
    const card = await form.finish(session, link._id);
    if (!card) return notSaved(ctx, loaded, token, messages.card.hostedFormIncomplete);
    return saveCard(deps, ctx, loaded, card, sessionDigest(session));
  }
  const pageUrl = `${pagesOrigin(account, deps.publicBaseUrl)}${cardUpdatePath(token)}`;
  const { url } = await form.start({
    token: link.data.paymentMethodToken,
    currency: await currencyOf(deps, link),
    reference: link._id,
    returnUrl: pageUrl,
    cancelUrl: `${pageUrl}?cancelled=1`,
    openForMs: link.expiresAt.getTime() - deps.clock().getTime(),
  });
  ctx.redirect(url);
  ctx.status = 303;
}

/**
 * Back from the gateway's form with `session` after the link expired: the card saved in a session opened
 * in time (for this link, finished) is saved as in time, while such a session may still be open. True when
 * the card was saved (or another use won and was answered); false leaves the link expired.
 */
export async function lateHostedReturn(
  deps: PageDeps,
  ctx: AppContext,
  expired: LoadedLink<'card_update'>,
  session: string,
  form: HostedCardForm,
): Promise<boolean> {
  const { link } = expired;
  if (deps.clock().getTime() - link.expiresAt.getTime() > sessionOutlivesLinkMs) return false;
  const card = await form.finish(session, link._id);
  if (!card) return false;
  await saveCard(deps, ctx, expired, card, sessionDigest(session));
  return true;
}
