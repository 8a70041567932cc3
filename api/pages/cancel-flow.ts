import { churnOutcomeOf, type CancelChoice } from '../../domain/links.js';
import type { CancelOffer } from '../../domain/settings.js';
import type { AppContext } from '../context.js';
import { cancelFlowDone, cancelFlowForm } from './cancel-flow-views.js';
import { trustedForm } from './form-body.js';
import { issueFormToken } from './form-token.js';
import { sendPage } from './layout.js';
import { loadLink, type LoadedLink, type PageDeps } from './load-link.js';
import { goneLinkPage, staleFormPage } from './notices.js';

const path = (token: string) => `/cancel-flow/${token}`;

/** The button pressed: `keep`, `cancel` or `offer:<index>` of an offer configured on the account. */
function choiceOf(value: string | null, offers: CancelOffer[]): CancelChoice | null {
  if (value === 'keep' || value === 'cancel') return { kind: value };
  const index = /^offer:(\d)$/.exec(value ?? '')?.[1];
  const offer = index === undefined ? undefined : offers[Number(index)];
  return offer ? { kind: 'offer', offer } : null;
}

/** GET and POST /cancel-flow/:token: the hosted retention flow. */
export function cancelFlowPage(deps: PageDeps) {
  const { clock, outcomes } = deps;

  function showForm(
    ctx: AppContext,
    status: number,
    loaded: LoadedLink<'cancel_flow'>,
    token: string,
    error?: string,
  ): void {
    const { link, account, brand, messages } = loaded;
    sendPage(ctx, status, {
      title: messages.cancel.title,
      brand,
      messages,
      wide: true,
      formTargets: link.data.returnUrl ? [link.data.returnUrl] : [],
      body: cancelFlowForm(
        {
          action: path(token),
          formToken: issueFormToken(link.formSecret, clock()),
          brandName: brand.name,
          offers: account.settings.cancelFlow.offers,
          price: { amount: link.data.amount, currency: link.data.currency },
          ...(error ? { error } : {}),
        },
        messages,
      ),
    });
  }

  return {
    async show(ctx: AppContext, token: string): Promise<void> {
      const loaded = await loadLink(deps, ctx, token, 'cancel_flow');
      if (loaded) showForm(ctx, 200, loaded, token);
    },

    /** The customer's choice: consumes the link, emits churn.flow.<outcome>, then returns to the merchant. */
    async submit(ctx: AppContext, token: string): Promise<void> {
      const loaded = await loadLink(deps, ctx, token, 'cancel_flow');
      if (!loaded) return;
      const { link, account, brand, messages } = loaded;
      const fields = trustedForm(ctx, link.formSecret, clock());
      if (!fields) return staleFormPage(ctx, loaded, path(token));
      const choice = choiceOf(fields.get('choice'), account.settings.cancelFlow.offers);
      if (!choice) return showForm(ctx, 422, loaded, token, messages.cancel.chooseOne);

      const used = await outcomes.consumeLink(link, {
        kind: 'churn',
        outcome: churnOutcomeOf(choice),
        offer: choice.kind === 'offer' ? choice.offer : null,
      });
      if (!used) return goneLinkPage(ctx, loaded, 'used');
      if (link.data.returnUrl) {
        ctx.status = 303;
        ctx.set('Cache-Control', 'no-store');
        ctx.set('Referrer-Policy', 'no-referrer');
        ctx.redirect(link.data.returnUrl);
        return;
      }
      sendPage(ctx, 200, {
        title: messages.cancel.thanks,
        brand,
        messages,
        wide: true,
        body: cancelFlowDone({ brandName: brand.name, choice }, messages),
      });
    },
  };
}
