import { churnOutcomeOf, type CancelChoice } from '../../domain/links.js';
import type { CancelOffer } from '../../domain/settings.js';
import { sha256 } from '../../runtime/crypto.js';
import type { AppContext } from '../context.js';
import { cancelFlowDone, cancelFlowForm, confirmation } from './cancel-flow-views.js';
import { trustedForm } from './form-body.js';
import { issueFormToken } from './form-token.js';
import { sendPage } from './layout.js';
import { loadLink, type LoadedLink, type PageDeps } from './load-link.js';
import { goneLinkPage, staleFormPage } from './notices.js';

const path = (token: string) => `/cancel-flow/${token}`;

/**
 * A short digest of an offer's terms. A form stays submittable for 12 hours and the operator may reorder or
 * edit the offers meanwhile: the button names the offer it showed by place and terms, not by place alone.
 */
function offerFingerprint(offer: CancelOffer): string {
  return sha256(JSON.stringify(offer, Object.keys(offer).sort())).slice(0, 12);
}

/** The value of an offer's button: `offer:<index>:<fingerprint>`. */
const offerChoice = (offer: CancelOffer, index: number) => `offer:${index}:${offerFingerprint(offer)}`;

/**
 * The button pressed: `keep`, `cancel` or an offer configured on the account; `changed` when the offer
 * at that place is no longer the one the page showed (or the form names none, as forms rendered before
 * offers carried a fingerprint do), null for anything else.
 */
function choiceOf(value: string | null, offers: CancelOffer[]): CancelChoice | 'changed' | null {
  if (value === 'keep' || value === 'cancel') return { kind: value };
  const match = /^offer:(\d)(?::([0-9a-f]{12}))?$/.exec(value ?? '');
  if (!match) return null;
  const offer = offers[Number(match[1])];
  return offer && match[2] === offerFingerprint(offer) ? { kind: 'offer', offer } : 'changed';
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
      title: error ? messages.errorTitle(messages.cancel.title) : messages.cancel.title,
      brand,
      messages,
      wide: true,
      formTargets: link.data.returnUrl ? [link.data.returnUrl] : [],
      body: cancelFlowForm(
        {
          action: path(token),
          formToken: issueFormToken(link.formSecret, clock()),
          brandName: brand.name,
          offers: account.settings.cancelFlow.offers.map((offer, i) => ({
            offer,
            value: offerChoice(offer, i),
          })),
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
      // Never the offer now at that place in its stead: the customer chooses again from the current ones.
      if (choice === 'changed') return showForm(ctx, 409, loaded, token, messages.cancel.offersChanged);

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
      const done = confirmation(choice, brand.name, messages);
      sendPage(ctx, 200, {
        title: done.title,
        brand,
        messages,
        wide: true,
        body: cancelFlowDone(done, messages),
      });
    },
  };
}
