import type { AppContext } from '../context.js';
import { html } from './html.js';
import { neutralBrand, sendPage, type PageBrand } from './layout.js';

function notice(ctx: AppContext, status: number, brand: PageBrand, title: string, ...lines: string[]): void {
  sendPage(ctx, status, {
    title,
    brand,
    body: html`<h1>${title}</h1>
      ${lines.map((line) => html`<p class="lead">${line}</p>`)}`,
  });
}

/** 404: no such link (mistyped or cut-off address). */
export function unknownLinkPage(ctx: AppContext): void {
  notice(
    ctx,
    404,
    neutralBrand,
    'This link is not valid',
    'The address may be incomplete. Open the link from your message again, or ask the company that sent it for a new one.',
  );
}

/** 410: the link was already used or has expired. */
export function goneLinkPage(ctx: AppContext, brand: PageBrand, state: 'used' | 'expired'): void {
  if (state === 'used')
    notice(
      ctx,
      410,
      brand,
      'This link has already been used',
      'Each link works once, and this one has done its job. There is nothing more to do here.',
      `If you need to make another change, contact ${brand.name} for a new link.`,
    );
  else
    notice(
      ctx,
      410,
      brand,
      'This link has expired',
      'For your security, links stop working after a while.',
      `Contact ${brand.name} for a new link.`,
    );
}

/** 501: the account's gateway collects cards with its own client-side form, which is not available yet. */
export function unavailablePage(ctx: AppContext, brand: PageBrand): void {
  notice(
    ctx,
    501,
    brand,
    'Card updates are not available here yet',
    `${brand.name} uses a payment provider whose secure card form cannot be shown on this page yet.`,
    `Please contact ${brand.name} to update your payment details. This link has not been used.`,
  );
}

/** 403: the form was not one this server rendered for this link (CSRF), or it is too old. */
export function staleFormPage(ctx: AppContext, brand: PageBrand, path: string): void {
  sendPage(ctx, 403, {
    title: 'Please try again',
    brand,
    body: html`<h1>Please try again</h1>
      <p class="lead">This form has expired or could not be verified. Nothing was changed.</p>
      <p><a class="button" href="${path}">Reload the page</a></p>`,
  });
}

/** 500: something failed on our side; the customer may retry. */
export function errorPage(ctx: AppContext, brand: PageBrand, requestId: string): void {
  notice(
    ctx,
    500,
    brand,
    'Something went wrong',
    'We could not complete this request. Please try again in a few minutes.',
    `If it keeps happening, contact ${brand.name} and mention reference ${requestId}.`,
  );
}
