import { choiceOfOutcome, churnOutcomeOf, type CancelChoice } from '../../domain/links.js';
import type { CancelOffer } from '../../domain/settings.js';
import { sha256 } from '../../runtime/crypto.js';
import type { ConsumptionDoc } from '../../store/links.js';
import type { AppContext } from '../context.js';
import { cancelFlowDone, cancelFlowForm, confirmation } from './cancel-flow-views.js';
import { trustedForm } from './form-body.js';
import { issueFormToken } from './form-token.js';
import { sendPage } from './layout.js';
import { loadLink, type LoadedLink, type PageDeps } from './load-link.js';
import { goneLinkPage, staleFormPage } from './notices.js';
import { submissionDigest, useBySameSubmission } from './resubmission.js';

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

  /**
   * The choice is taken: its confirmation, which goes straight on to the merchant's returnUrl when there is
   * one (a page of our own, not a 303: see `refreshTo`).
   */
  function showDone(ctx: AppContext, loaded: LoadedLink<'cancel_flow'>, choice: CancelChoice): void {
    const { link, brand, messages } = loaded;
    const done = confirmation(choice, brand.name, messages);
    const { returnUrl } = link.data;
    sendPage(ctx, 200, {
      title: done.title,
      brand,
      messages,
      wide: true,
      ...(returnUrl ? { refreshTo: returnUrl } : {}),
      body: cancelFlowDone(done, messages, returnUrl ? { url: returnUrl, brandName: brand.name } : null),
    });
  }

  /** Shows the choice again when this same submission made the link's use; false for any other use. */
  function answerResubmission(
    ctx: AppContext,
    loaded: LoadedLink<'cancel_flow'>,
    consumption: ConsumptionDoc | null,
    digest: string,
  ): boolean {
    const same = useBySameSubmission(consumption, digest, clock());
    if (same?.outcome.kind !== 'churn') return false;
    showDone(ctx, loaded, choiceOfOutcome(same.outcome.outcome, same.outcome.offer));
    return true;
  }

  /** The submission's digest: the rendered form and the button pressed. */
  const digestOf = (fields: URLSearchParams) =>
    submissionDigest('cancel-flow', fields.get('_form') ?? '', fields.get('choice') ?? '');

  return {
    async show(ctx: AppContext, token: string): Promise<void> {
      const loaded = await loadLink(deps, ctx, token, 'cancel_flow');
      if (loaded) showForm(ctx, 200, loaded, token);
    },

    /**
     * The customer's choice: consumes the link, emits churn.flow.<outcome>, then confirms it (and returns to
     * the merchant). The same choice sent again (a second click while the first was saving) is confirmed
     * again, without a second event; any other use of a used link gets the "already used" page.
     */
    async submit(ctx: AppContext, token: string): Promise<void> {
      const loaded = await loadLink(deps, ctx, token, 'cancel_flow', (used, consumption) => {
        const sent = trustedForm(ctx, used.link.formSecret, clock());
        return sent !== null && answerResubmission(ctx, used, consumption, digestOf(sent));
      });
      if (!loaded) return;
      const { link, account, messages } = loaded;
      const fields = trustedForm(ctx, link.formSecret, clock());
      if (!fields) return staleFormPage(ctx, loaded, path(token));
      const choice = choiceOf(fields.get('choice'), account.settings.cancelFlow.offers);
      if (!choice) return showForm(ctx, 422, loaded, token, messages.cancel.chooseOne);
      // Never the offer now at that place in its stead: the customer chooses again from the current ones.
      if (choice === 'changed') return showForm(ctx, 409, loaded, token, messages.cancel.offersChanged);

      const digest = digestOf(fields);
      const used = await outcomes.consumeLink(
        link,
        {
          kind: 'churn',
          outcome: churnOutcomeOf(choice),
          offer: choice.kind === 'offer' ? choice.offer : null,
        },
        // The choice is recorded: should its event fail now, the follow-up workflow sends it.
        { formDigest: digest, deferEffects: true },
      );
      if (used) return showDone(ctx, loaded, choice);
      const winner = (await deps.stores.links.find(link._id))?.consumption ?? null;
      if (!answerResubmission(ctx, loaded, winner, digest)) goneLinkPage(ctx, loaded, 'used');
    },
  };
}
