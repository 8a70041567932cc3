import type { AppContext } from '../context.js';
import { html } from './html.js';
import type { PageMessages } from './i18n/index.js';
import { neutralBrand, sendPage, type PageBrand } from './layout.js';

/** What a notice page is shown in: the customer's language and the account's brand. */
export interface NoticeLook {
  messages: PageMessages;
  brand: PageBrand;
}

function notice(ctx: AppContext, status: number, look: NoticeLook, title: string, ...lines: string[]): void {
  sendPage(ctx, status, {
    title,
    ...look,
    body: html`<h1>${title}</h1>
      ${lines.map((line) => html`<p class="lead">${line}</p>`)}`,
  });
}

/** 404: no such link (mistyped or cut-off address). */
export function unknownLinkPage(ctx: AppContext, m: PageMessages): void {
  const { title, text } = m.links.unknown;
  notice(ctx, 404, { messages: m, brand: neutralBrand(m) }, title, text);
}

/** 410: the link was already used or has expired. */
export function goneLinkPage(ctx: AppContext, look: NoticeLook, state: 'used' | 'expired'): void {
  const { title, text, contact } = look.messages.links[state];
  notice(ctx, 410, look, title, text, contact(look.brand.name));
}

/** 501: the account's gateway collects cards with its own client-side form, which is not available yet. */
export function unavailablePage(ctx: AppContext, look: NoticeLook): void {
  const { title, text, contact } = look.messages.links.unavailable;
  notice(ctx, 501, look, title, text(look.brand.name), contact(look.brand.name));
}

/**
 * 403: the form was not one this server rendered for this link (CSRF), or it is too old; or another status
 * for a form that could not be read (413: a body over 64 KiB, which no rendered form comes near).
 */
export function staleFormPage(ctx: AppContext, look: NoticeLook, path: string, status = 403): void {
  const { title, text, reload } = look.messages.links.stale;
  sendPage(ctx, status, {
    title,
    ...look,
    body: html`<h1>${title}</h1>
      <p class="lead">${text}</p>
      <p><a class="button" href="${path}">${reload}</a></p>`,
  });
}

/** 500: something failed on our side; the customer may retry. */
export function errorPage(ctx: AppContext, m: PageMessages, requestId: string): void {
  const { title, text, contact } = m.links.error;
  const brand = neutralBrand(m);
  notice(ctx, 500, { messages: m, brand }, title, text, contact(requestId));
}
