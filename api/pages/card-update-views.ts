import type { CardFormErrors } from '../../domain/card-input.js';
import { html, type SafeHtml } from './html.js';
import type { PageMessages } from './i18n/index.js';

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

// The expiry asks for the ordinary keyboard: a digits-only keypad (iOS's, for inputmode="numeric") has no "/".
const fields = [
  { name: 'number', id: 'card-number', autocomplete: 'cc-number', maxlength: 23, inputmode: 'numeric' },
  { name: 'expiry', id: 'card-expiry', autocomplete: 'cc-exp', maxlength: 7, inputmode: null },
  { name: 'cvc', id: 'card-cvc', autocomplete: 'cc-csc', maxlength: 4, inputmode: 'numeric' },
] as const;

/** The refusal of the whole card, which describes the card number field it sends the customer back to. */
const refusalId = 'card-refusal';

type Field = (typeof fields)[number];

/** A field's label and its hint, in the page's language. */
function labelOf(field: Field, m: PageMessages): { label: string; hint: string | null } {
  if (field.name === 'number') return { label: m.card.number, hint: null };
  if (field.name === 'expiry') return { label: m.card.expiry, hint: m.card.expiryHint };
  return { label: m.card.cvc, hint: m.card.cvcHint };
}

/** The message of a field's error, if it has one. */
const errorOf = (field: Field, view: CardFormView, m: PageMessages): string | null => {
  const code = view.errors?.[field.name];
  return code ? m.card.errors[code] : null;
};

function input(field: Field, view: CardFormView, m: PageMessages, focus: boolean): SafeHtml {
  const error = errorOf(field, view, m);
  const { label, hint } = labelOf(field, m);
  const errorId = `${field.id}-error`;
  const refused = view.refusal && field.name === 'number' ? refusalId : null;
  const describedBy = [error ? errorId : null, refused].filter((id) => id !== null).join(' ');
  // The card number and security code are never echoed back into the page.
  const value = field.name === 'expiry' ? (view.expiry ?? '') : '';
  return html`<div class="field">
    <label for="${field.id}">${label}${hint ? html` <span class="hint">${hint}</span>` : ''}</label>
    <input
      id="${field.id}"
      name="${field.name}"
      type="text"
      ${field.inputmode ? html`inputmode="${field.inputmode}"` : ''}
      autocomplete="${field.autocomplete}"
      maxlength="${field.maxlength}"
      required
      spellcheck="false"
      value="${value}"
      ${error ? html`aria-invalid="true"` : ''}
      ${describedBy ? html`aria-describedby="${describedBy}"` : ''}
      ${focus ? html`autofocus` : ''}
    />
    ${error ? html`<span class="field-error" id="${errorId}">${error}</span>` : ''}
  </div>`;
}

function problems(view: CardFormView, m: PageMessages): SafeHtml | string {
  const listed = fields.filter((f) => view.errors?.[f.name]);
  if (!view.refusal && listed.length === 0) return '';
  return html`<div class="alert" role="alert">
    <h2>${view.refusal ? m.card.notAccepted : m.card.checkDetails}</h2>
    ${view.refusal ? html`<p id="${refusalId}">${view.refusal}</p>` : ''}
    ${
      listed.length > 0
        ? html`<ul>
            ${listed.map((f) => html`<li><a href="#${f.id}">${errorOf(f, view, m)}</a></li>`)}
          </ul>`
        : ''
    }
  </div>`;
}

/** The card form: number, expiry and security code, all labelled, with errors tied to their fields. */
export function cardForm(view: CardFormView, m: PageMessages): SafeHtml {
  const firstInvalid = fields.find((f) => view.errors?.[f.name])?.name ?? (view.refusal ? 'number' : null);
  const [number, expiry, cvc] = fields.map((f) => input(f, view, m, f.name === firstInvalid));
  return html`<h1>${m.card.title}</h1>
    <p class="lead">${m.card.lead(view.brandName)}</p>
    ${problems(view, m)}
    <form method="post" action="${view.action}" autocomplete="on">
      <input type="hidden" name="_form" value="${view.formToken}" />
      ${number}
      <div class="row">${expiry}${cvc}</div>
      <button class="button" type="submit">${m.card.save}</button>
    </form>
    <p class="secure">${m.card.secure}</p>`;
}

/** After a successful update. */
export function cardSaved(
  view: { brandName: string; cardLabel: string; returnUrl: string | null },
  m: PageMessages,
): SafeHtml {
  return html`<h1>${m.card.savedTitle}</h1>
    <p class="lead" role="status">${m.card.savedLead(view.brandName, view.cardLabel)}</p>
    <p>${m.card.savedRetry}</p>
    ${
      view.returnUrl
        ? html`<p><a class="button" href="${view.returnUrl}">${m.card.backTo(view.brandName)}</a></p>`
        : ''
    }`;
}

/** The message for a gateway's refusal code. */
export function refusalMessage(code: string, m: PageMessages): string {
  if (code === 'card_declined') return m.card.refusals.declined;
  if (code === 'test_card_required') return m.card.refusals.testCardRequired;
  return m.card.refusals.other(code);
}
