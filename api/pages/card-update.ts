import { gatewayFor } from '../../activities/gateways/resolve.js';
import { checkCardForm, type CardFormErrors } from '../../domain/card-input.js';
import type { Account } from '../../store/accounts.js';
import type { AppContext } from '../context.js';
import { hostedCardUpdate, lateHostedReturn, returnedSession, sessionDigest } from './card-update-hosted.js';
import { cardForm, refusalMessage } from './card-update-views.js';
import { trustedForm } from './form-body.js';
import { issueFormToken } from './form-token.js';
import { sendPage } from './layout.js';
import { loadLink, type LoadedLink, type PageDeps } from './load-link.js';
import { staleFormPage, unavailablePage } from './notices.js';
import { submissionDigest } from './resubmission.js';
import { answerSavedAgain, cardUpdatePath as path, saveCard } from './save-card.js';

/** GET and POST /update-card/:token: the hosted card-update page. */
export function cardUpdatePage(deps: PageDeps) {
  const { clock, stores } = deps;

  function showForm(
    ctx: AppContext,
    status: number,
    loaded: LoadedLink<'card_update'>,
    token: string,
    problems: { errors?: CardFormErrors; refusal?: string; expiry?: string } = {},
  ): void {
    const { brand, messages } = loaded;
    const failed = problems.errors !== undefined || problems.refusal !== undefined;
    sendPage(ctx, status, {
      title: failed ? messages.errorTitle(messages.card.title) : messages.card.title,
      brand,
      messages,
      body: cardForm(
        {
          action: path(token),
          formToken: issueFormToken(loaded.link.formSecret, clock()),
          brandName: brand.name,
          ...problems,
        },
        messages,
      ),
    });
  }

  /**
   * How the primary gateway takes a new card: on this page (`tokenize`), or in its own hosted form (card
   * data then never touches Recoup); for a gateway with neither, the merchant's own card form
   * (`cardFormUrl`) or, without one, a 501 page.
   */
  async function collection(account: Account) {
    const gateway = account.gateways[0];
    const adapter = gateway ? await gatewayFor(stores, account.id, gateway.name, deps) : null;
    return {
      tokenize: adapter?.tokenize ? adapter.tokenize.bind(adapter) : null,
      hosted: adapter?.hostedCardForm ?? null,
    };
  }

  /** A card form submission's digest: the rendered form it came from. */
  const digestOf = (fields: URLSearchParams) => submissionDigest('card-form', fields.get('_form') ?? '');

  return {
    async show(ctx: AppContext, token: string): Promise<void> {
      const session = returnedSession(ctx);
      const loaded = await loadLink(
        deps,
        ctx,
        token,
        'card_update',
        // Back from the gateway's form a second time (a reload) with the session that saved the card.
        (used, consumption) =>
          session !== null && answerSavedAgain(deps, ctx, used, consumption, sessionDigest(session)),
        // Back from the gateway's form just after the link expired, from a session opened in time.
        async (expired) => {
          if (session === null) return false;
          const { hosted } = await collection(expired.account);
          return hosted !== null && lateHostedReturn(deps, ctx, expired, session, hosted);
        },
      );
      if (!loaded) return;
      const how = await collection(loaded.account);
      if (how.tokenize) return showForm(ctx, 200, loaded, token);
      if (how.hosted) return hostedCardUpdate(deps, ctx, loaded, token, how.hosted);
      const external = loaded.account.settings.cardFormUrl;
      if (!external) return unavailablePage(ctx, loaded);
      // The merchant's own form saves the card in its gateway and completes the link through the API.
      const url = new URL(external);
      url.searchParams.set('recoup_link', token);
      ctx.redirect(url.toString());
      ctx.status = 303;
    },

    /**
     * Invalid or refused input re-renders the form and leaves the link usable; only a saved card consumes
     * it. The same form sent again once it saved a card (a second click during a slow save) shows that card.
     */
    async submit(ctx: AppContext, token: string): Promise<void> {
      const loaded = await loadLink(deps, ctx, token, 'card_update', (used, consumption) => {
        const sent = trustedForm(ctx, used.link.formSecret, clock());
        return sent !== null && answerSavedAgain(deps, ctx, used, consumption, digestOf(sent));
      });
      if (!loaded) return;
      const { account, link, messages } = loaded;
      const { tokenize } = await collection(account);
      if (!tokenize) return unavailablePage(ctx, loaded);
      const fields = trustedForm(ctx, link.formSecret, clock());
      if (!fields) return staleFormPage(ctx, loaded, path(token));

      const typed = {
        number: fields.get('number') ?? '',
        expiry: fields.get('expiry') ?? '',
        cvc: fields.get('cvc') ?? '',
      };
      const checked = checkCardForm(typed, clock(), account.settings.timezone);
      if ('errors' in checked)
        return showForm(ctx, 422, loaded, token, { errors: checked.errors, expiry: typed.expiry });
      const tokenized = await tokenize(checked.card, { email: link.data.customerEmail });
      if ('error' in tokenized)
        return showForm(ctx, 422, loaded, token, {
          refusal: refusalMessage(tokenized.error, messages),
          expiry: typed.expiry,
        });

      await saveCard(
        deps,
        ctx,
        loaded,
        { token: tokenized.token, brand: tokenized.brand, last4: checked.card.number.slice(-4) },
        digestOf(fields),
      );
    },
  };
}
