import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pageLocales } from '../domain/links.js';
import { messagesIn } from '../api/pages/i18n/index.js';
import { expectAccessible, expectBrandedButtons } from './support/page-audit.js';
import { launchChromium, mintLink, openWindow } from './support/pages.js';
import { startStack, type Stack } from './support/stack.js';

// WCAG 2.1 AA on the rendered pages, in Debian's Chromium at 320 CSS px (the width 1.4.10 Reflow names):
// every page state is audited from the DOM and computed styles, and the forms are completed by keyboard
// alone. What a browser cannot tell (how a screen reader speaks the page) is not claimed here.

const offers = [
  { type: 'pause', months: 2 },
  { type: 'discount', percentOff: 50, durationMonths: 3 },
  { type: 'downgrade', planId: 'basic', label: 'Basic', amount: 499, currency: 'USD' },
] as const;
const hour = 3_600_000;

let browser: Browser;
let stack: Stack;
/** The stack's clock: real time plus an offset that ages links and forms. */
let offsetMs = 0;

beforeAll(async () => {
  browser = await launchChromium();
  stack = await startStack({ clock: () => new Date(Date.now() + offsetMs) });
});
afterAll(async () => {
  await browser?.close();
  await stack?.close();
});

const window320 = (locale = 'en-US') =>
  openWindow(browser, stack.baseUrl, { viewport: { width: 320, height: 640 }, locale });

const cardLink = (key: string, body: Record<string, unknown> = {}) =>
  mintLink(stack.baseUrl, '/api/recovery/update-card/generate', key, {
    paymentMethodToken: 'tok_visa',
    ...body,
  });
const cancelLink = (key: string, body: Record<string, unknown> = {}) =>
  mintLink(stack.baseUrl, '/api/cancel-flow/generate', key, {
    customerId: 'cus_a11y',
    amount: 1999,
    ...body,
  });
/** Presses a key that submits the page's form; the status of the page it leads to, once that has loaded. */
async function submitBy(page: Page, key: 'Enter' | 'Space'): Promise<number> {
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.request().isNavigationRequest()),
    page.waitForEvent('load'),
    page.keyboard.press(key),
  ]);
  return response.status();
}
const activeId = (page: Page) => page.evaluate<string>('document.activeElement.id');
const heading = async (page: Page) => (await page.getByRole('heading', { level: 1 }).textContent())?.trim();

describe('the card-update form', () => {
  it('is completed by keyboard alone: Tab through number, expiry and code, Enter saves; every state passes the audit', async () => {
    const { apiKey } = await stack.createAccount({ branding: { brandName: 'Acme' } });
    const link = await cardLink(apiKey);
    const { context, page, cspErrors } = await window320();
    await page.goto(link.local);
    expect(await page.title()).toBe('Update your payment details · Acme');
    await expectAccessible(page, 'en');
    for (const [name, token] of [
      ['Card number', 'cc-number'],
      ['Expiry date', 'cc-exp'],
      ['Security code', 'cc-csc'],
    ] as const)
      expect(await page.getByRole('textbox', { name }).getAttribute('autocomplete')).toBe(token);
    // Without script nothing types the "/" of MM/YY, and a digits-only keypad has none.
    expect(await page.getByRole('textbox', { name: 'Expiry date' }).getAttribute('inputmode')).toBeNull();

    await page.goto(link.local);
    await page.keyboard.press('Tab');
    expect(await activeId(page)).toBe('card-number');
    await page.keyboard.type('4242 4242 4242 4242');
    await page.keyboard.press('Tab');
    expect(await activeId(page)).toBe('card-expiry');
    await page.keyboard.type('12/34');
    await page.keyboard.press('Tab');
    await page.keyboard.type('123');
    await page.keyboard.press('Tab');
    expect(await page.evaluate<string>('document.activeElement.textContent')).toContain('Save card');
    expect(await submitBy(page, 'Enter')).toBe(200);
    expect(await heading(page)).toBe('Your card has been updated');
    await expectAccessible(page, 'en');

    expect((await page.goto(link.local))?.status()).toBe(410);
    await expectAccessible(page, 'en');
    expect(cspErrors).toEqual([]);
    await context.close();
  });

  it('ties each mistake to its field, names the errors in the title and focuses the first; a declined card describes the number field', async () => {
    const { apiKey } = await stack.createAccount({ branding: { brandName: 'Acme' } });
    const link = await cardLink(apiKey);
    const { context, page } = await window320();
    await page.goto(link.local);
    await page.getByRole('textbox', { name: 'Card number' }).fill('4242 4242 4242 4241');
    await page.getByRole('textbox', { name: 'Expiry date' }).fill('01/20');
    await page.getByRole('textbox', { name: 'Security code' }).fill('123');
    expect(await submitBy(page, 'Enter')).toBe(422);
    expect(await page.title()).toBe('Error: Update your payment details · Acme');
    // The browser applies autofocus once the page has loaded: waited for, never skipped.
    await expect.poll(() => activeId(page)).toBe('card-number');
    for (const [id, message] of [
      ['card-number', 'This card number is not valid. Check it and try again.'],
      ['card-expiry', 'This card has expired. Use a card that is still valid.'],
    ] as const) {
      const field = page.locator(`#${id}`);
      expect(await field.getAttribute('aria-invalid')).toBe('true');
      const described = await field.getAttribute('aria-describedby');
      expect(await page.locator(`#${described}`).textContent()).toBe(message);
      expect(await page.getByRole('alert').getByRole('link', { name: message }).getAttribute('href')).toBe(
        `#${id}`,
      );
    }
    expect(await page.locator('#card-cvc').getAttribute('aria-invalid')).toBeNull();
    await expectAccessible(page, 'en');

    await page.getByRole('textbox', { name: 'Card number' }).fill('4000 0000 0000 0002');
    await page.getByRole('textbox', { name: 'Expiry date' }).fill('12/34');
    await page.getByRole('textbox', { name: 'Security code' }).fill('123');
    expect(await submitBy(page, 'Enter')).toBe(422);
    expect(await page.title()).toBe('Error: Update your payment details · Acme');
    // The browser applies autofocus once the page has loaded: waited for, never skipped.
    await expect.poll(() => activeId(page)).toBe('card-number');
    const described = await page.locator('#card-number').getAttribute('aria-describedby');
    expect(described, 'the focused field carries the refusal').not.toBeNull();
    expect(await page.locator(`#${described}`).textContent()).toContain('Your bank declined this card');
    await expectAccessible(page, 'en');
    await context.close();
  });
});

describe('the cancel flow', () => {
  it('is completed by keyboard alone, offers by Enter and "keep" by Space; the confirmation is titled by what happened', async () => {
    const { apiKey } = await stack.createAccount({
      branding: { brandName: 'Acme' },
      cancelFlow: { enabled: true, offers },
    });
    const { context, page } = await window320();
    const first = await cancelLink(apiKey);
    await page.goto(first.local);
    expect(await page.title()).toBe('Before you cancel · Acme');
    expect(await page.getByRole('list').getByRole('heading', { level: 2 }).count()).toBe(3);
    await expectAccessible(page, 'en');

    await page.goto(first.local);
    await page.keyboard.press('Tab');
    expect(await page.evaluate<string>('document.activeElement.textContent')).toContain('Pause for 2 months');
    expect(await submitBy(page, 'Enter')).toBe(200);
    expect(await heading(page)).toBe('Your subscription will be paused');
    expect(await page.title()).toBe('Your subscription will be paused · Acme');
    await expectAccessible(page, 'en');

    const second = await cancelLink(apiKey);
    await page.goto(second.local);
    for (let i = 0; i < offers.length + 1; i += 1) await page.keyboard.press('Tab');
    expect(await page.evaluate<string>('document.activeElement.textContent')).toContain(
      'Keep my subscription',
    );
    expect(await submitBy(page, 'Space')).toBe(200);
    expect(await page.title()).toBe('Glad you are staying · Acme');
    await context.close();
  });

  it('offers changed meanwhile: the error is focused and announced, and the page still passes the audit', async () => {
    const { apiKey, account } = await stack.createAccount({ cancelFlow: { enabled: true, offers } });
    const { context, page } = await window320();
    const link = await cancelLink(apiKey);
    await page.goto(link.local);
    await stack.stores.accounts.updateSettings(account.id, {
      ...account.settings,
      cancelFlow: { enabled: true, offers: [offers[1]] },
    });
    await page.getByRole('button', { name: 'Pause for 2 months' }).focus();
    expect(await submitBy(page, 'Enter')).toBe(409);
    expect(await page.title()).toBe('Error: Before you cancel · Test merchant');
    const alert = page.getByRole('alert');
    expect(await alert.textContent()).toContain('The offers have changed');
    expect(await page.evaluate<string>('document.activeElement.getAttribute("role")')).toBe('alert');
    await expectAccessible(page, 'en');
    await context.close();
  });
});

describe('the notices', () => {
  it('unknown, expired, unusable-here, stale-form and not-changed pages each pass the audit, with a brand name of one long word', async () => {
    // The brand in the header, the text and the footer wraps rather than pushing the page sideways.
    const branding = { brandName: 'Zahlungserinnerungsdienstleistungsgesellschaft' };
    const { apiKey } = await stack.createAccount({ branding });
    const { context, page } = await window320();
    const visit = async (url: string, status: number, title: string) => {
      expect((await page.goto(url))?.status()).toBe(status);
      expect(await heading(page)).toBe(title);
      await expectAccessible(page, 'en');
    };
    await visit(`${stack.baseUrl}/update-card/${'x'.repeat(43)}`, 404, 'This link is not valid');

    const stale = await cardLink(apiKey);
    await page.goto(stale.local);
    offsetMs = 13 * hour; // a form is valid 12 hours
    try {
      await page.getByRole('textbox', { name: 'Card number' }).fill('4242 4242 4242 4242');
      await page.getByRole('textbox', { name: 'Expiry date' }).fill('12/34');
      await page.getByRole('textbox', { name: 'Security code' }).fill('123');
      expect(await submitBy(page, 'Enter')).toBe(403);
      await expectAccessible(page, 'en');
      offsetMs = 73 * hour; // a card-update link lasts 72 hours
      await visit(stale.local, 410, 'This link has expired');
    } finally {
      offsetMs = 0;
    }

    const adyen = await stack.createAccount({ branding }, [
      { name: 'adyen', kind: 'adyen', test: false, credentials: { apiKey: 'AQEkey', environment: 'test' } },
    ]);
    const unusable = await cardLink(adyen.apiKey, { paymentMethodToken: 'AcmeECOM|stored1|shopper1' });
    await visit(unusable.local, 501, 'Card updates are not available here yet');

    const stripe = await stack.createAccount({ branding }, [
      {
        name: 'stripe',
        kind: 'stripe',
        test: false,
        credentials: { secretKey: 'sk_test_x', apiBase: 'http://127.0.0.1:9' },
      },
    ]);
    const left = await cardLink(stripe.apiKey, { paymentMethodToken: 'pm_old' });
    await visit(`${left.local}?cancelled=1`, 200, 'Your card was not changed');
    await context.close();
  });
});

describe('in every language', () => {
  it.each(pageLocales)(
    '%s: the card form, its errors and the cancel flow declare the language and fit 320 px',
    async (locale) => {
      const m = messagesIn(locale);
      const { apiKey } = await stack.createAccount({ cancelFlow: { enabled: true, offers } });
      const { context, page } = await window320();
      const card = await cardLink(apiKey, { locale });
      await page.goto(card.local);
      await expectAccessible(page, locale);
      await page.getByRole('textbox', { name: m.card.number }).fill('1234');
      await page.getByRole('textbox', { name: m.card.expiry }).fill('13/30');
      await page.getByRole('textbox', { name: m.card.cvc }).fill('1');
      expect(await submitBy(page, 'Enter')).toBe(422);
      expect(await page.getByRole('alert').getByRole('link').count()).toBe(3);
      await expectAccessible(page, locale);
      await page.goto((await cancelLink(apiKey, { locale, currency: 'EUR' })).local);
      await expectAccessible(page, locale);
      await context.close();
    },
  );
});

describe('with a merchant’s brand colour', () => {
  it.each(['the default blue', '#FFE600', '#888888', '#001F5B'])(
    '%s: text, buttons (hovered too), links and focus rings keep their contrast',
    async (primaryColor) => {
      const { apiKey } = await stack.createAccount({
        branding: { brandName: 'Acme', ...(primaryColor.startsWith('#') ? { primaryColor } : {}) },
        cancelFlow: { enabled: true, offers },
      });
      const { context, page } = await window320();
      await page.goto((await cancelLink(apiKey)).local);
      await expectAccessible(page, 'en');
      await expectBrandedButtons(page);
      const card = await cardLink(apiKey, { returnUrl: 'https://shop.acme.test/account' });
      await page.goto(card.local);
      await expectBrandedButtons(page);
      await page.getByRole('textbox', { name: 'Card number' }).fill('4242 4242 4242 4242');
      await page.getByRole('textbox', { name: 'Expiry date' }).fill('12/34');
      await page.getByRole('textbox', { name: 'Security code' }).fill('123');
      expect(await submitBy(page, 'Enter')).toBe(200);
      expect(await page.getByRole('link', { name: 'Return to Acme' }).count()).toBe(1);
      await expectAccessible(page, 'en');
      await expectBrandedButtons(page);
      await context.close();
    },
  );
});
