import type { CancelChoice } from '../../domain/links.js';
import { formatMoney } from '../../domain/money.js';
import type { CancelOffer } from '../../domain/settings.js';
import { html, type SafeHtml } from './html.js';

/** The subscription's recurring charge, when the merchant gave it. */
export interface Price {
  amount: number | null;
  currency: string;
}

const months = (n: number) => (n === 1 ? '1 month' : `${n} months`);
const money = (amount: number, currency: string) => formatMoney({ amount, currency });

/** Title, explanation and button label of one offer, prices rendered from the link's amount and currency. */
export function describeOffer(
  offer: CancelOffer,
  price: Price,
): { title: string; text: string; action: string } {
  if (offer.type === 'pause')
    return {
      title: `Pause for ${months(offer.months)}`,
      text: `Take a break: no payments for ${months(offer.months)}, then your subscription picks up where it left off.`,
      action: `Pause for ${months(offer.months)}`,
    };
  if (offer.type === 'discount') {
    const discounted =
      price.amount === null ? null : Math.round((price.amount * (100 - offer.percentOff)) / 100);
    return {
      title: `${offer.percentOff}% off for ${months(offer.durationMonths)}`,
      text:
        price.amount === null || discounted === null
          ? `Stay and get ${offer.percentOff}% off your next ${months(offer.durationMonths)}.`
          : `Stay and pay ${money(discounted, price.currency)} instead of ${money(price.amount, price.currency)} for the next ${months(offer.durationMonths)}.`,
      action: `Accept ${offer.percentOff}% off`,
    };
  }
  const current = price.amount === null ? '' : ` instead of ${money(price.amount, price.currency)}`;
  return {
    title: `Switch to ${offer.label}`,
    text: `Keep the essentials for ${money(offer.amount, price.currency)}${current} per billing period.`,
    action: `Switch to ${offer.label}`,
  };
}

/** The cancel flow: each configured offer with its own button, then "keep" and a plain "cancel anyway". */
export function cancelFlowForm(view: {
  action: string;
  formToken: string;
  brandName: string;
  offers: CancelOffer[];
  price: Price;
  error?: string;
}): SafeHtml {
  return html`<h1>Before you cancel</h1>
    <p class="lead">
      ${
        view.offers.length > 0
          ? `${view.brandName} would like to keep you. Choose an option below, or cancel right away.`
          : `You can keep your ${view.brandName} subscription or cancel it here.`
      }
    </p>
    ${view.error ? html`<div class="alert" role="alert"><p>${view.error}</p></div>` : ''}
    <form method="post" action="${view.action}">
      <input type="hidden" name="_form" value="${view.formToken}" />
      ${
        view.offers.length > 0
          ? html`<ul class="offers">
              ${view.offers.map((offer, i) => {
                const d = describeOffer(offer, view.price);
                return html`<li class="offer">
                  <div>
                    <h2 id="offer-${i}-title">${d.title}</h2>
                    <p id="offer-${i}-text">${d.text}</p>
                  </div>
                  <button
                    class="button"
                    type="submit"
                    name="choice"
                    value="offer:${i}"
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
        <button class="button secondary" type="submit" name="choice" value="keep">
          Keep my subscription
        </button>
        <button class="button plain" type="submit" name="choice" value="cancel">Cancel anyway</button>
      </div>
    </form>`;
}

function confirmation(choice: CancelChoice, brandName: string): [string, string] {
  if (choice.kind === 'cancel')
    return [
      'Your cancellation has been sent',
      `${brandName} will confirm that your subscription is cancelled.`,
    ];
  if (choice.kind === 'keep')
    return ['Glad you are staying', `Your ${brandName} subscription continues as before.`];
  const { offer } = choice;
  if (offer.type === 'pause')
    return ['Your subscription will be paused', `${brandName} will pause it for ${months(offer.months)}.`];
  if (offer.type === 'discount')
    return [
      'Your discount is on its way',
      `${brandName} will take ${offer.percentOff}% off for the next ${months(offer.durationMonths)}.`,
    ];
  return [
    `You are switching to ${offer.label}`,
    `${brandName} will move your subscription to ${offer.label}.`,
  ];
}

/** Confirmation when the merchant gave no returnUrl. Recoup tells the merchant, who applies the choice. */
export function cancelFlowDone(view: { brandName: string; choice: CancelChoice }): SafeHtml {
  const [title, text] = confirmation(view.choice, view.brandName);
  return html`<h1>${title}</h1>
    <p class="lead" role="status">${text}</p>
    <p>You can close this page.</p>`;
}
