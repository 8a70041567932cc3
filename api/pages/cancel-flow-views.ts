import type { CancelChoice } from '../../domain/links.js';
import { formatMoney } from '../../domain/money.js';
import type { CancelOffer } from '../../domain/settings.js';
import { html, type SafeHtml } from './html.js';
import type { PageMessages } from './i18n/index.js';
import type { Notice } from './i18n/messages.js';

/** The subscription's recurring charge, when the merchant gave it. */
export interface Price {
  amount: number | null;
  currency: string;
}

/** What the customer pays for the smaller plan, and (when it is less) instead of what, in the link's currency. */
function downgradePrices(offer: Extract<CancelOffer, { type: 'downgrade' }>, price: Price) {
  // An offer's price in another currency (or in one not given) is not shown: no conversion, no guess.
  if (offer.currency?.toUpperCase() !== price.currency.toUpperCase()) return null;
  const cheaper = price.amount !== null && offer.amount < price.amount;
  return { price: offer.amount, current: cheaper ? price.amount : null };
}

/** Title, explanation and button label of one offer, prices rendered from the link's amount and currency. */
function describeOffer(
  offer: CancelOffer,
  price: Price,
  m: PageMessages,
): { title: string; text: string; action: string } {
  const money = (amount: number) => formatMoney({ amount, currency: price.currency }, m.lang);
  if (offer.type === 'pause') {
    const title = m.cancel.pause.title(m.months(offer.months));
    return { title, text: m.cancel.pause.text(m.months(offer.months)), action: title };
  }
  if (offer.type === 'discount') {
    const months = m.months(offer.durationMonths);
    // A free subscription (amount 0) has no price to take a percentage off.
    const full = price.amount ? price.amount : null;
    return {
      title: m.cancel.discount.title(offer.percentOff, months),
      text:
        full === null
          ? m.cancel.discount.text(offer.percentOff, months)
          : m.cancel.discount.textWithPrices(
              money(Math.round((full * (100 - offer.percentOff)) / 100)),
              money(full),
              months,
            ),
      action: m.cancel.discount.action(offer.percentOff),
    };
  }
  const title = m.cancel.downgrade.title(offer.label);
  const prices = downgradePrices(offer, price);
  const text = prices
    ? m.cancel.downgrade.text(money(prices.price), prices.current === null ? null : money(prices.current))
    : m.cancel.downgrade.textWithoutPrice;
  return { title, text, action: title };
}

/** The cancel flow: each configured offer with its own button, then "keep" and a plain "cancel anyway". */
export function cancelFlowForm(
  view: {
    action: string;
    formToken: string;
    brandName: string;
    /** Each offer with the value its button submits. */
    offers: Array<{ offer: CancelOffer; value: string }>;
    price: Price;
    error?: string;
  },
  m: PageMessages,
): SafeHtml {
  return html`<h1>${m.cancel.title}</h1>
    <p class="lead">
      ${
        view.offers.length > 0
          ? m.cancel.leadWithOffers(view.brandName)
          : m.cancel.leadWithoutOffers(view.brandName)
      }
    </p>
    ${
      // Focused on arrival, so the reason the page came back is read first.
      view.error
        ? html`<div class="alert" role="alert" tabindex="-1" autofocus><p>${view.error}</p></div>`
        : ''
    }
    <form method="post" action="${view.action}">
      <input type="hidden" name="_form" value="${view.formToken}" />
      ${
        view.offers.length > 0
          ? html`<ul class="offers">
              ${view.offers.map(({ offer, value }, i) => {
                const d = describeOffer(offer, view.price, m);
                return html`<li class="offer">
                  <div>
                    <h2 id="offer-${i}-title">${d.title}</h2>
                    <p id="offer-${i}-text">${d.text}</p>
                  </div>
                  <button
                    class="button"
                    type="submit"
                    name="choice"
                    value="${value}"
                    aria-describedby="offer-${i}-title offer-${i}-text"
                  >
                    ${d.action}
                  </button>
                </li>`;
              })}
            </ul>`
          : ''
      }
      <div class="choices">
        <button class="button secondary" type="submit" name="choice" value="keep">${m.cancel.keep}</button>
        <button class="button plain" type="submit" name="choice" value="cancel">
          ${m.cancel.cancelAnyway}
        </button>
      </div>
    </form>`;
}

/** What the customer's choice means: the confirmation's heading (and the page's title) and its sentence. */
export function confirmation(choice: CancelChoice, brand: string, m: PageMessages): Notice {
  const { done } = m.cancel;
  if (choice.kind === 'cancel') return done.cancelled(brand);
  if (choice.kind === 'keep') return done.kept(brand);
  const { offer } = choice;
  if (offer.type === 'pause') return done.paused(brand, m.months(offer.months));
  if (offer.type === 'discount')
    return done.discounted(brand, offer.percentOff, m.months(offer.durationMonths));
  return done.downgraded(brand, offer.label);
}

/**
 * The confirmation of the customer's choice. Recoup tells the merchant, who applies the choice. With a
 * returnUrl the page goes on there at once (see `refreshTo`); the link is for browsers that do not.
 */
export function cancelFlowDone(
  { title, text }: Notice,
  m: PageMessages,
  back: { url: string; brandName: string } | null,
): SafeHtml {
  return html`<h1>${title}</h1>
    <p class="lead" role="status">${text}</p>
    ${
      back
        ? html`<p><a class="button" href="${back.url}">${m.card.backTo(back.brandName)}</a></p>`
        : html`<p>${m.cancel.close}</p>`
    }`;
}
