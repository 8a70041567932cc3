import type { HostedCardForm } from '../../activities/gateways/types.js';
import { pagesOrigin } from '../../services/links.js';
import type { AppContext } from '../context.js';
import { html } from './html.js';
import { sendPage } from './layout.js';
import type { LoadedLink, PageDeps } from './load-link.js';
import { cardLabel, cardUpdatePath, saveCard } from './save-card.js';

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
  const session = ctx.query.session;
  if (typeof session === 'string' && session) {
    const card = await form.finish(session, link._id);
    if (!card) return notSaved(ctx, loaded, token, messages.card.hostedFormIncomplete);
    return saveCard(deps, ctx, loaded, {
      token: card.token,
      label: cardLabel(messages, card.brand, card.last4),
    });
  }
  const recovery = link.data.transactionId
    ? await deps.stores.recoveries.find(account.id, link.data.transactionId)
    : null;
  const pageUrl = `${pagesOrigin(account, deps.publicBaseUrl)}${cardUpdatePath(token)}`;
  const { url } = await form.start({
    token: link.data.paymentMethodToken,
    currency: recovery?.currency ?? 'USD',
    reference: link._id,
    returnUrl: pageUrl,
    cancelUrl: `${pageUrl}?cancelled=1`,
  });
  ctx.redirect(url);
  ctx.status = 303;
}
