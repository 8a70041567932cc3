import type { CardFormErrors } from '../../domain/card-input.js';
import { html, type SafeHtml } from './html.js';

/** What the card form shows: its target, CSRF token, and after a failed submit the errors and the expiry typed. */
export interface CardFormView {
  action: string;
  formToken: string;
  brandName: string;
  errors?: CardFormErrors;
  /** A refusal of the whole card (declined by the gateway), shown above the fields. */
  refusal?: string;
  expiry?: string;
}

const fields = [
  {
    name: 'number',
    id: 'card-number',
    label: 'Card number',
    hint: null,
    autocomplete: 'cc-number',
    maxlength: 23,
  },
  {
    name: 'expiry',
    id: 'card-expiry',
    label: 'Expiry date',
    hint: 'MM/YY',
    autocomplete: 'cc-exp',
    maxlength: 7,
  },
  {
    name: 'cvc',
    id: 'card-cvc',
    label: 'Security code',
    hint: '3 or 4 digits',
    autocomplete: 'cc-csc',
    maxlength: 4,
  },
] as const;

type Field = (typeof fields)[number];

function input(field: Field, view: CardFormView, focus: boolean): SafeHtml {
  const error = view.errors?.[field.name];
  const errorId = `${field.id}-error`;
  // The card number and security code are never echoed back into the page.
  const value = field.name === 'expiry' ? (view.expiry ?? '') : '';
  return html`<div class="field">
    <label for="${field.id}"
      >${field.label}${field.hint ? html` <span class="hint">${field.hint}</span>` : ''}</label
    >
    <input
      id="${field.id}"
      name="${field.name}"
      type="text"
      inputmode="numeric"
      autocomplete="${field.autocomplete}"
      maxlength="${field.maxlength}"
      required
      spellcheck="false"
      value="${value}"
      ${error ? html`aria-invalid="true" aria-describedby="${errorId}"` : ''}
      ${focus ? html`autofocus` : ''}
    />
    ${error ? html`<span class="field-error" id="${errorId}">${error}</span>` : ''}
  </div>`;
}

function problems(view: CardFormView): SafeHtml | string {
  const listed = fields.filter((f) => view.errors?.[f.name]);
  if (!view.refusal && listed.length === 0) return '';
  return html`<div class="alert" role="alert">
    <h2>${view.refusal ? 'Your card was not accepted' : 'Please check your card details'}</h2>
    ${view.refusal ? html`<p>${view.refusal}</p>` : ''}
    ${
      listed.length > 0
        ? html`<ul>
            ${listed.map((f) => html`<li><a href="#${f.id}">${view.errors?.[f.name]}</a></li>`)}
          </ul>`
        : ''
    }
  </div>`;
}

/** The card form: number, expiry and security code, all labelled, with errors tied to their fields. */
export function cardForm(view: CardFormView): SafeHtml {
  const firstInvalid = fields.find((f) => view.errors?.[f.name])?.name ?? (view.refusal ? 'number' : null);
  const [number, expiry, cvc] = fields.map((f) => input(f, view, f.name === firstInvalid));
  return html`<h1>Update your payment details</h1>
    <p class="lead">Enter the card you would like ${view.brandName} to charge from now on.</p>
    ${problems(view)}
    <form method="post" action="${view.action}" autocomplete="on">
      <input type="hidden" name="_form" value="${view.formToken}" />
      ${number}
      <div class="row">${expiry}${cvc}</div>
      <button class="button" type="submit">Save card</button>
    </form>
    <p class="secure">Your card details go only to the payment provider and are never stored.</p>`;
}

/** After a successful update. */
export function cardSaved(view: {
  brandName: string;
  cardLabel: string;
  returnUrl: string | null;
}): SafeHtml {
  return html`<h1>Your card has been updated</h1>
    <p class="lead" role="status">
      Thank you. ${view.brandName} will charge your ${view.cardLabel} from now on.
    </p>
    <p>Any payment that is waiting will be retried with this card shortly. You can close this page.</p>
    ${
      view.returnUrl
        ? html`<p><a class="button" href="${view.returnUrl}">Return to ${view.brandName}</a></p>`
        : ''
    }`;
}

/** The message for a gateway's refusal code. */
export function refusalMessage(code: string): string {
  if (code === 'card_declined') return 'Your bank declined this card. Please use a different card.';
  if (code === 'test_card_required')
    return 'This is a test account: use a test card such as 4242 4242 4242 4242.';
  return `The card could not be saved (${code}). Please try a different card.`;
}
