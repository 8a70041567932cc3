import { randomBytes } from 'node:crypto';
import type { Account } from '../../store/accounts.js';
import type { AppContext } from '../context.js';
import { brandColors } from './colors.js';
import { html, type SafeHtml } from './html.js';
import type { PageMessages } from './i18n/index.js';
import { stylesheetPath, stylesheetVersion } from './styles.js';

/** How a page is branded: the account's brand name (else its name), logo and colour. */
export interface PageBrand {
  name: string;
  logoUrl: string | null;
  primaryColor: string;
}

/** Recoup's own look, for pages that belong to no account (an unknown link). */
export const neutralBrand = (m: PageMessages): PageBrand => ({
  name: m.neutralBrand,
  logoUrl: null,
  primaryColor: '#1a56db',
});

export function brandOf(account: Pick<Account, 'name' | 'settings'>): PageBrand {
  const { brandName, logoUrl, primaryColor } = account.settings.branding;
  return { name: brandName ?? account.name, logoUrl, primaryColor };
}

export interface Page {
  title: string;
  brand: PageBrand;
  /** The page's language: `<html lang>` and the footer. */
  messages: PageMessages;
  body: SafeHtml;
  wide?: boolean;
  /**
   * Where the page sends the browser at once (an instant meta refresh, with a link on the page for
   * browsers that do not follow it). Forms never redirect off this origin: Chrome checks form-action on
   * every hop of a redirect chain, and a merchant's returnUrl may itself redirect anywhere.
   */
  refreshTo?: string;
}

function originOf(url: string | null): string | null {
  if (!url) return null;
  const parsed = new URL(url);
  return parsed.protocol === 'https:' ? parsed.origin : null;
}

/**
 * Strict CSP: no script at all, styles from our stylesheet or the one nonce'd block, images only from the
 * logo's origin, forms only to this origin (which answers them itself, never by a redirect), never framed.
 */
function contentSecurityPolicy(nonce: string, page: Page): string {
  const logo = originOf(page.brand.logoUrl);
  return [
    "default-src 'none'",
    `style-src 'self' 'nonce-${nonce}'`,
    `img-src ${logo ?? "'none'"}`,
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

/** Renders a hosted page with its security headers. Pages carry capability tokens: never cached or referred. */
export function sendPage(ctx: AppContext, status: number, page: Page): void {
  const nonce = randomBytes(16).toString('base64');
  const colors = brandColors(page.brand.primaryColor);
  const masthead = page.brand.logoUrl
    ? html`<img src="${page.brand.logoUrl}" alt="${page.brand.name}" />`
    : html`<span class="brand-name">${page.brand.name}</span>`;
  const document = html`<!doctype html>
    <html lang="${page.messages.lang}">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex, nofollow" />
        <title>${page.title} · ${page.brand.name}</title>
        ${page.refreshTo ? html`<meta http-equiv="refresh" content="0; url=${page.refreshTo}" />` : ''}
        <link rel="stylesheet" href="${stylesheetPath}?v=${stylesheetVersion}" />
        <style nonce="${nonce}">
          :root {
            --brand: ${colors.brand};
            --on-brand: ${colors.onBrand};
            --accent: ${colors.accent};
          }
        </style>
      </head>
      <body>
        <div class="page${page.wide ? ' wide' : ''}">
          <header class="masthead">${masthead}</header>
          <main class="panel">${page.body}</main>
          <footer class="footer">${page.messages.footer(page.brand.name)}</footer>
        </div>
      </body>
    </html> `;
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set({
    'Content-Security-Policy': contentSecurityPolicy(nonce, page),
    'Cache-Control': 'no-store',
    'Referrer-Policy': 'no-referrer',
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'X-Robots-Tag': 'noindex, nofollow',
  });
  ctx.body = document.value;
}
