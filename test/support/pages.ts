import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { inject } from 'vitest';
import { call } from './stack.js';

/** A hosted page as a test sees it over HTTP. */
export interface PageResponse {
  status: number;
  headers: Headers;
  html: string;
}

/** The same page on this test server: a link's URL names the public host, the path is what matters. */
export function onServer(baseUrl: string, linkUrl: string): string {
  return baseUrl + new URL(linkUrl).pathname;
}

/** GETs a hosted page (with the browser's headers, e.g. its Accept-Language). */
export async function getPage(url: string, headers: Record<string, string> = {}): Promise<PageResponse> {
  const res = await fetch(url, { redirect: 'manual', headers });
  return { status: res.status, headers: res.headers, html: await res.text() };
}

/** The CSRF token of the form a page rendered. */
export function formTokenOf(html: string): string {
  const token = /name="_form" value="([^"]+)"/.exec(html)?.[1];
  if (!token) throw new Error('The page has no form token');
  return token;
}

/** POSTs a hosted form URL-encoded, as a browser does; redirects are returned, not followed. */
export async function postForm(
  url: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<PageResponse> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
    redirect: 'manual',
  });
  return { status: res.status, headers: res.headers, html: await res.text() };
}

/** Loads the page, then submits its form with these fields. */
export async function submitPage(url: string, fields: Record<string, string>): Promise<PageResponse> {
  const page = await getPage(url);
  return postForm(url, { _form: formTokenOf(page.html), ...fields });
}

/** Debian's Chromium driven by playwright-core: tests never download a browser. */
export async function launchChromium(): Promise<Browser> {
  const executablePath = inject('chromiumPath');
  if (!executablePath)
    throw new Error(
      "Browser tests need Debian's Chromium: run `apt-get install chromium`, then `npm run toolchain` so " +
        '.tools/toolchain.json records it. No browser is ever downloaded by the tests.',
    );
  return chromium.launch({ executablePath });
}

/** A browser window's size, input kind and language, and what it answers for hosts off the test server. */
export interface WindowOptions {
  viewport: { width: number; height: number };
  isMobile?: boolean;
  hasTouch?: boolean;
  locale?: string;
  /** Answered inside the browser (a logo, the merchant's return page): keyed by URL glob. */
  answers?: Record<string, { contentType: string; body: string }>;
}

/** A fresh browser window on the test server; CSP violations the page reports are collected. */
export async function openWindow(
  browser: Browser,
  baseUrl: string,
  { answers = {}, locale = 'en-US', ...options }: WindowOptions,
): Promise<{ context: BrowserContext; page: Page; cspErrors: string[] }> {
  const context = await browser.newContext({ ...options, locale });
  // Later routes win: everything off the test server is aborted, except the hosts answered here.
  await context.route(
    (url) => !url.href.startsWith(baseUrl),
    (route) => route.abort(),
  );
  for (const [url, answer] of Object.entries(answers))
    await context.route(url, (route) => route.fulfill(answer));
  const page = await context.newPage();
  const cspErrors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy/i.test(message.text()))
      cspErrors.push(message.text());
  });
  return { context, page, cspErrors };
}

/** Mints a hosted link with the account's key; `local` is its page on the test server. */
export async function mintLink(
  baseUrl: string,
  path: '/api/recovery/update-card/generate' | '/api/cancel-flow/generate',
  key: string,
  body: Record<string, unknown>,
): Promise<{ url: string; token: string; local: string }> {
  const res = await call<{ url: string; token: string }>(baseUrl, 'POST', path, { key, body });
  if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${JSON.stringify(res.body)}`);
  return { ...res.body, local: onServer(baseUrl, res.body.url) };
}
