import { mkdirSync, readFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sha256 } from '../runtime/crypto.js';
import { eventsOf } from './support/events.js';
import { launchChromium, mintLink, openWindow as openOn, postForm } from './support/pages.js';
import { poll } from './support/poll.js';
import { call, startStack, type Stack } from './support/stack.js';

// Customers' view of the hosted pages: Debian's Chromium driven by playwright-core, on a phone-sized and a
// desktop-sized window. Every request outside this test server is answered inside the browser (logo,
// merchant's return page) or aborted, so nothing leaves 127.0.0.1.

const screenshots = join('test-results', 'screenshots');
const viewports = [
  { name: 'phone', viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true },
  { name: 'desktop', viewport: { width: 1280, height: 800 }, isMobile: false, hasTouch: false },
] as const;
type Viewport = (typeof viewports)[number];

const branding = {
  brandName: 'Acme Streaming',
  logoUrl: 'https://cdn.acme.test/logo.svg',
  primaryColor: '#0f766e',
};
const logo =
  '<svg xmlns="http://www.w3.org/2000/svg" width="160" height="40"><rect width="40" height="40" rx="8" fill="#0f766e"/><text x="50" y="27" font-family="sans-serif" font-size="18" fill="#0f172a">Acme</text></svg>';
const offers = [
  { type: 'pause', months: 2 },
  { type: 'discount', percentOff: 50, durationMonths: 3 },
  { type: 'downgrade', planId: 'basic', label: 'Basic', amount: 499, currency: 'USD' },
] as const;

let browser: Browser;
let stack: Stack;
let n = 0;
const amount = () => 3000 + (n += 1);

beforeAll(async () => {
  mkdirSync(screenshots, { recursive: true });
  browser = await launchChromium();
  stack = await startStack();
});
afterAll(async () => {
  await browser?.close();
  await stack?.close();
});

/** A fresh browser window of this size (and language), answering for Acme's logo and its return page. */
const openWindow = ({ name: _name, ...size }: Viewport, locale = 'en-US') =>
  openOn(browser, stack.baseUrl, {
    ...size,
    locale,
    answers: {
      'https://cdn.acme.test/**': { contentType: 'image/svg+xml', body: logo },
      'https://shop.acme.test/**': {
        contentType: 'text/html',
        body: '<!doctype html><title>Acme</title><h1>Back at Acme</h1>',
      },
    },
  });

const shoot = (page: Page, name: string, size: Viewport) =>
  page.screenshot({ path: join(screenshots, `${name}-${size.name}.png`), fullPage: true });

/** What every hosted page must be: English, no sideways scrolling, visible focus. */
async function expectAccessibleLayout(page: Page, size: Viewport) {
  expect(await page.locator('html').getAttribute('lang')).toBe('en');
  const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
  expect(overflow, `no horizontal scrolling at ${size.viewport.width}px`).toBeLessThanOrEqual(0);
}

const generate = (
  path: '/api/recovery/update-card/generate' | '/api/cancel-flow/generate',
  key: string,
  body: Record<string, unknown>,
) => mintLink(stack.baseUrl, path, key, body);

async function waitForStatus(key: string, transactionId: string, status: string) {
  const res = await poll(
    () => call(stack.baseUrl, 'GET', `/api/recovery/status/${transactionId}`, { key }),
    (r) => r.body.status === status,
    { timeoutMs: 20_000, everyMs: 200 },
  );
  return res.body;
}

for (const size of viewports) {
  describe(`on a ${size.name} (${size.viewport.width}×${size.viewport.height})`, () => {
    it('card update: a bad and a declined card keep the link; a good card saves, retries the queued recovery at once, and the link is then 410', async () => {
      const { apiKey, account } = await stack.createAccount({ branding });
      const queued = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
        key: apiKey,
        body: {
          paymentMethodToken: 'tok_decline_insufficient_funds',
          originalDeclineCode: 'insufficient_funds',
          amount: amount(),
          customerEmail: 'ada@example.com',
        },
      });
      expect(queued.status).toBe(202);
      expect(queued.body).toMatchObject({ status: 'queued' });
      const transactionId = String(queued.body.transactionId);
      const link = await generate('/api/recovery/update-card/generate', apiKey, {
        paymentMethodToken: 'tok_decline_insufficient_funds',
        returnUrl: 'https://shop.acme.test/account',
      });
      const { context, page, cspErrors } = await openWindow(size);

      const opened = await page.goto(link.local);
      expect(opened?.status()).toBe(200);
      await expect
        .poll(() => page.getByRole('heading', { level: 1 }).textContent())
        .toBe('Update your payment details');
      expect(await page.getByRole('img', { name: 'Acme Streaming' }).isVisible()).toBe(true);
      const number = page.getByLabel('Card number');
      const expiry = page.getByLabel(/Expiry date/);
      const cvc = page.getByLabel(/Security code/);
      await number.focus();
      expect(await page.evaluate<string>('getComputedStyle(document.activeElement).outlineStyle')).toBe(
        'solid',
      );
      await expectAccessibleLayout(page, size);
      await shoot(page, 'card-update-form', size);

      // A mistyped number and a past expiry: both named, the link untouched.
      await number.fill('4242 4242 4242 4241');
      await expiry.fill('01/20');
      await cvc.fill('123');
      const invalid = await Promise.all([
        page.waitForResponse(link.local),
        page.getByRole('button', { name: 'Save card' }).click(),
      ]);
      expect(invalid[0].status()).toBe(422);
      const alert = page.getByRole('alert');
      expect(await alert.textContent()).toContain('This card number is not valid');
      expect(await alert.textContent()).toContain('This card has expired');
      expect(await number.getAttribute('aria-invalid')).toBe('true');
      expect(await number.inputValue()).toBe(''); // the number is never echoed back
      await shoot(page, 'card-update-invalid', size);

      // The gateway declines the card: a clear message, the link still usable.
      await number.fill('4000 0000 0000 0002');
      await expiry.fill('12/34');
      await cvc.fill('123');
      const declined = await Promise.all([
        page.waitForResponse(link.local),
        page.getByRole('button', { name: 'Save card' }).click(),
      ]);
      expect(declined[0].status()).toBe(422);
      expect(await page.getByRole('alert').textContent()).toContain('Your bank declined this card');
      await shoot(page, 'card-update-declined', size);
      expect((await stack.stores.links.find(sha256(link.token)))?.consumption).toBeNull();

      // A good card, by keyboard alone.
      await expect.poll(() => page.evaluate<string>('document.activeElement.id')).toBe('card-number');
      await page.keyboard.type('4242 4242 4242 4242');
      await page.keyboard.press('Tab');
      await page.keyboard.press('ControlOrMeta+A');
      await page.keyboard.type('12/34');
      await page.keyboard.press('Tab');
      await page.keyboard.type('123');
      const saved = await Promise.all([page.waitForResponse(link.local), page.keyboard.press('Enter')]);
      expect(saved[0].status()).toBe(200);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Your card has been updated');
      expect(await page.getByRole('status').textContent()).toContain('Visa card ending in 4242');
      await shoot(page, 'card-update-success', size);

      const events = await eventsOf(stack, account.id, ['card.updated']);
      const updated = events.filter((e) => e.type === 'card.updated');
      expect(updated).toHaveLength(1);
      const payload = updated[0]!.payload as Record<string, unknown>;
      expect(payload).toEqual({
        event: 'card.updated',
        oldPaymentMethodToken: 'tok_decline_insufficient_funds',
        newPaymentMethodToken: expect.stringMatching(/^tok_visa_[0-9a-f]{24}$/),
        paymentMethodType: 'card',
        eligibleGateways: ['test'],
        clientId: account.id,
        timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        eventId: expect.any(String),
        createdAt: expect.any(String),
      });

      // The queued recovery was retried at once with the new card, and succeeded.
      const status = await waitForStatus(apiKey, transactionId, 'succeeded');
      expect(status).toMatchObject({ status: 'succeeded', recovered: true });
      const newToken = String(payload.newPaymentMethodToken);
      expect(
        await stack.stores.db
          .collection('sandboxCharges')
          .countDocuments({ approved: true, token: newToken }),
      ).toBe(1);
      expect(
        await stack.stores.db
          .collection('sandboxCharges')
          .countDocuments({ approved: true, token: 'tok_decline_insufficient_funds' }),
      ).toBe(0);

      await page.getByRole('link', { name: 'Return to Acme Streaming' }).click();
      await page.waitForURL('https://shop.acme.test/account');

      const again = await page.goto(link.local);
      expect(again?.status()).toBe(410);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(
        'This link has already been used',
      );
      await shoot(page, 'card-update-used', size);
      expect(cspErrors).toEqual([]);
      await context.close();
    });

    it('cancel flow: each offer in turn across links, then keep and cancel anyway; the right churn events and redirects', async () => {
      const { apiKey, account } = await stack.createAccount({
        branding,
        cancelFlow: { enabled: true, offers },
      });
      const cases = [
        { button: 'Pause for 2 months', outcome: 'paused', offer: offers[0], returns: true },
        { button: 'Accept 50% off', outcome: 'retained', offer: offers[1], returns: true },
        { button: 'Switch to Basic', outcome: 'downgraded', offer: offers[2], returns: true },
        { button: 'Keep my subscription', outcome: 'retained', offer: undefined, returns: false },
        { button: 'Cancel anyway', outcome: 'cancelled', offer: undefined, returns: true },
      ];
      const { context, page, cspErrors } = await openWindow(size);
      for (const [i, c] of cases.entries()) {
        const returnUrl = `https://shop.acme.test/billing/done?case=${i}`;
        const link = await generate('/api/cancel-flow/generate', apiKey, {
          customerId: `cus_${i}`,
          customerEmail: 'ada@example.com',
          subscriptionId: `sub_${i}`,
          amount: 1999,
          currency: 'USD',
          ...(c.returns ? { returnUrl } : {}),
        });
        expect((await page.goto(link.local))?.status()).toBe(200);
        if (i === 0) {
          const text = await page.locator('main').textContent();
          expect(text).toContain('no payments for 2 months');
          expect(text).toContain('$10.00 instead of $19.99');
          expect(text).toContain('$4.99 instead of $19.99');
          await expectAccessibleLayout(page, size);
          await shoot(page, 'cancel-flow', size);
        }
        await page.getByRole('button', { name: c.button }).click();
        if (c.returns) {
          await page.waitForURL(returnUrl);
          expect(await page.getByRole('heading').textContent()).toBe('Back at Acme');
        } else {
          expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Glad you are staying');
          await shoot(page, 'cancel-flow-done', size);
        }
        const events = await eventsOf(stack, account.id, [`churn.flow.${c.outcome}` as 'churn.flow.paused']);
        const mine = events.filter((e) => (e.payload as { customerId?: string }).customerId === `cus_${i}`);
        expect(mine.map((e) => e.type)).toEqual([`churn.flow.${c.outcome}`]);
        expect(mine[0]!.payload).toEqual({
          event: `churn.flow.${c.outcome}`,
          outcome: c.outcome,
          customerId: `cus_${i}`,
          customerEmail: 'ada@example.com',
          subscriptionId: `sub_${i}`,
          timestamp: expect.any(String),
          ...(c.offer ? { offer: c.offer } : {}),
          eventId: expect.any(String),
          createdAt: expect.any(String),
        });
        expect((await page.goto(link.local))?.status()).toBe(410);
      }
      expect(cspErrors).toEqual([]);
      await context.close();
    });
  });
}

describe('racing submissions against one link', () => {
  // Two forms of one link, each sent many times at once (a double click, two tabs): exactly one use, and
  // one webhook. The sends of the form that won are each shown its result, as a second click during a slow
  // save would be; the other form is a different use of a used link, and gets 410.
  it('10 parallel submits of each of two card forms: the winning form gets the saved card each time, the other 410; one card.updated', async () => {
    const { apiKey, account } = await stack.createAccount();
    const link = await generate('/api/recovery/update-card/generate', apiKey, {
      paymentMethodToken: 'tok_visa',
    });
    const { context, page } = await openWindow(viewports[1]);
    const forms: string[] = [];
    for (const _ of [1, 2]) {
      await page.goto(link.local);
      forms.push(await page.locator('input[name="_form"]').inputValue());
    }
    await context.close();
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        postForm(link.local, {
          _form: forms[i % 2]!,
          number: '4242424242424242',
          expiry: '12/34',
          cvc: '123',
        }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([
      ...Array<number>(10).fill(200),
      ...Array<number>(10).fill(410),
    ]);
    const winner = answers.findIndex((a) => a.status === 200) % 2;
    answers.forEach((a, i) => expect(a.status).toBe(i % 2 === winner ? 200 : 410));
    expect(answers.filter((a) => a.html.includes('Visa card ending in 4242'))).toHaveLength(10);
    expect(answers.filter((a) => a.html.includes('This link has already been used'))).toHaveLength(10);
    const consumptions = await stack.stores.db
      .collection('linkConsumptions')
      .countDocuments({ _id: sha256(link.token) as never });
    expect(consumptions).toBe(1);
    const events = await stack.stores.events.list({ accountId: account.id });
    expect(events.filter((e) => e.type === 'card.updated')).toHaveLength(1);
  });

  it('10 parallel choices on one cancel flow, each of 5 choices twice: one wins, and only its two sends are confirmed; one churn event', async () => {
    const { apiKey, account } = await stack.createAccount({ cancelFlow: { enabled: true, offers } });
    const link = await generate('/api/cancel-flow/generate', apiKey, { customerId: 'cus_race' });
    const { context, page } = await openWindow(viewports[0]);
    await page.goto(link.local);
    const form = await page.locator('input[name="_form"]').inputValue();
    // The buttons' own values: an offer's names the offer shown (place and terms), not its place alone.
    const buttons = await page.locator('button[name="choice"]').all();
    const choices = await Promise.all(buttons.map(async (b) => (await b.getAttribute('value')) ?? ''));
    await context.close();
    expect(choices).toHaveLength(5);
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => postForm(link.local, { _form: form, choice: choices[i % 5]! })),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, ...Array<number>(8).fill(410)]);
    const won = answers.findIndex((a) => a.status === 200) % 5;
    answers.forEach((a, i) => expect(a.status).toBe(i % 5 === won ? 200 : 410));
    const events = await stack.stores.events.list({ accountId: account.id });
    expect(events.filter((e) => e.type.startsWith('churn.flow.'))).toHaveLength(1);
  });
});

describe('back to the merchant', () => {
  /** A local server answering every request with `answer`; its origin. */
  async function serve(
    server: Server,
    answer: (res: ServerResponse) => void,
  ): Promise<{ origin: string; close: () => void }> {
    server.on('request', (_req, res: ServerResponse) => answer(res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const scheme = server instanceof HttpsServer ? 'https' : 'http';
    return { origin: `${scheme}://127.0.0.1:${port}`, close: () => server.close() };
  }

  it('a returnUrl that redirects again (to another origin) still takes the customer there after their choice, with no CSP error', async () => {
    // The merchant's pages, served for real (Chrome checks form-action on each hop of a real redirect
    // chain): the returnUrl answers 302 to a page on a second origin.
    const landing = await serve(createServer(), (res) => {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end('<!doctype html><title>Acme</title><h1>Back at Acme</h1>');
    });
    const tls = { cert: readFileSync(inject('tlsCertFile')), key: readFileSync(inject('tlsKeyFile')) };
    const hop = await serve(createHttpsServer(tls), (res) => {
      res.writeHead(302, { Location: `${landing.origin}/billing` });
      res.end();
    });
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    try {
      const { apiKey, account } = await stack.createAccount({
        branding,
        cancelFlow: { enabled: true, offers },
      });
      const link = await generate('/api/cancel-flow/generate', apiKey, {
        customerId: 'cus_hop',
        returnUrl: `${hop.origin}/billing`,
      });
      await context.route('https://cdn.acme.test/**', (route) =>
        route.fulfill({ contentType: 'image/svg+xml', body: logo }),
      );
      const page = await context.newPage();
      const cspErrors: string[] = [];
      page.on('console', (message) => {
        if (/Content Security Policy/i.test(message.text())) cspErrors.push(message.text());
      });
      expect((await page.goto(link.local))?.status()).toBe(200);
      await page.getByRole('button', { name: 'Cancel anyway' }).click();
      await page.waitForURL(`${landing.origin}/billing`, { timeout: 10_000 });
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Back at Acme');
      expect(cspErrors).toEqual([]);
      const events = await eventsOf(stack, account.id, ['churn.flow.cancelled']);
      expect(events.filter((e) => e.type.startsWith('churn.flow.'))).toHaveLength(1);
    } finally {
      await context.close();
      hop.close();
      landing.close();
    }
  });
});

describe('in the customer’s language', () => {
  it('a German browser gets the card form in German: labels, errors and the saved card', async () => {
    const { apiKey } = await stack.createAccount({ branding });
    const link = await generate('/api/recovery/update-card/generate', apiKey, {
      paymentMethodToken: 'tok_decline_insufficient_funds',
    });
    const { context, page: tab, cspErrors } = await openWindow(viewports[0], 'de-DE');
    expect((await tab.goto(link.local))?.status()).toBe(200);
    expect(await tab.locator('html').getAttribute('lang')).toBe('de');
    expect(await tab.getByRole('heading', { level: 1 }).textContent()).toBe('Zahlungsdaten aktualisieren');
    const number = tab.getByLabel('Kartennummer');
    await number.fill('4242 4242 4242 4241');
    await tab.getByLabel(/Ablaufdatum/).fill('01/20');
    await tab.getByLabel(/Sicherheitscode/).fill('123');
    await tab.getByRole('button', { name: 'Karte speichern' }).click();
    await expect
      .poll(() => tab.getByRole('alert').textContent())
      .toContain('Diese Kartennummer ist ungültig');
    expect(await tab.getByRole('alert').textContent()).toContain('Diese Karte ist abgelaufen');
    expect(await number.getAttribute('aria-invalid')).toBe('true');
    await shoot(tab, 'card-update-invalid-de', viewports[0]);
    await number.fill('4242 4242 4242 4242');
    await tab.getByLabel(/Ablaufdatum/).fill('12/34');
    await tab.getByLabel(/Sicherheitscode/).fill('123');
    await tab.getByRole('button', { name: 'Karte speichern' }).click();
    await expect
      .poll(() => tab.getByRole('status').textContent())
      .toContain('Acme Streaming belastet ab sofort Ihre Visa-Karte mit Endziffern 4242.');
    await context.close();
    expect(cspErrors).toEqual([]);
  });
});
