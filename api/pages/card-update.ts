import { gatewayFor } from '../../activities/gateways/resolve.js';
import { checkCardForm, type CardFormErrors } from '../../domain/card-input.js';
import { tokenFitsKind } from '../../domain/gateway-kinds.js';
import type { Account } from '../../store/accounts.js';
import type { AppContext } from '../context.js';
import { cardForm, cardSaved, refusalMessage } from './card-update-views.js';
import { trustedForm } from './form-body.js';
import { issueFormToken } from './form-token.js';
import { sendPage } from './layout.js';
import { loadLink, type LoadedLink, type PageDeps } from './load-link.js';
import { goneLinkPage, staleFormPage, unavailablePage } from './notices.js';

const path = (token: string) => `/update-card/${token}`;

/** GET and POST /update-card/:token: the hosted card-update page. */
export function cardUpdatePage(deps: PageDeps) {
  const { clock, outcomes, stores } = deps;

  function showForm(
    ctx: AppContext,
    status: number,
    loaded: LoadedLink<'card_update'>,
    token: string,
    problems: { errors?: CardFormErrors; refusal?: string; expiry?: string } = {},
  ): void {
    sendPage(ctx, status, {
      title: 'Update your payment details',
      brand: loaded.brand,
      body: cardForm({
        action: path(token),
        formToken: issueFormToken(loaded.link.formSecret, clock()),
        brandName: loaded.brand.name,
        ...problems,
      }),
    });
  }

  /**
   * The primary gateway's tokenizer, when this page may collect its cards. Real gateways collect card data
   * in their own client-side form (e.g. Stripe Elements) so it never touches Recoup; until this page embeds
   * one, their accounts get a 501 page.
   */
  async function collector(account: Account) {
    const gateway = account.gateways[0];
    if (!gateway) return null;
    const adapter = await gatewayFor(stores, account.id, gateway.name);
    return adapter.tokenize ? adapter.tokenize.bind(adapter) : null;
  }

  return {
    async show(ctx: AppContext, token: string): Promise<void> {
      const loaded = await loadLink(deps, ctx, token, 'card_update');
      if (!loaded) return;
      if (!(await collector(loaded.account))) return unavailablePage(ctx, loaded.brand);
      showForm(ctx, 200, loaded, token);
    },

    /** Invalid or refused input re-renders the form and leaves the link usable; only a saved card consumes it. */
    async submit(ctx: AppContext, token: string): Promise<void> {
      const loaded = await loadLink(deps, ctx, token, 'card_update');
      if (!loaded) return;
      const { account, brand, link } = loaded;
      const tokenize = await collector(account);
      if (!tokenize) return unavailablePage(ctx, brand);
      const fields = trustedForm(ctx, link.formSecret, clock());
      if (!fields) return staleFormPage(ctx, brand, path(token));

      const typed = {
        number: fields.get('number') ?? '',
        expiry: fields.get('expiry') ?? '',
        cvc: fields.get('cvc') ?? '',
      };
      const checked = checkCardForm(typed, clock());
      if ('errors' in checked)
        return showForm(ctx, 422, loaded, token, { errors: checked.errors, expiry: typed.expiry });
      const tokenized = await tokenize(checked.card);
      if ('error' in tokenized)
        return showForm(ctx, 422, loaded, token, {
          refusal: refusalMessage(tokenized.error),
          expiry: typed.expiry,
        });

      const eligibleGateways = account.gateways
        .filter((g) => tokenFitsKind(g.kind, tokenized.token))
        .map((g) => g.name);
      const used = await outcomes.consumeLink(link, {
        kind: 'card_updated',
        newPaymentMethodToken: tokenized.token,
        eligibleGateways,
      });
      if (!used) return goneLinkPage(ctx, brand, 'used');
      const brandLabel = tokenized.brand.charAt(0).toUpperCase() + tokenized.brand.slice(1);
      sendPage(ctx, 200, {
        title: 'Card updated',
        brand,
        body: cardSaved({
          brandName: brand.name,
          cardLabel: `${brandLabel} card ending in ${checked.card.number.slice(-4)}`,
          returnUrl: link.data.returnUrl,
        }),
      });
    },
  };
}
