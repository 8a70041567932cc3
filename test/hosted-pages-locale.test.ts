import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pageLocaleOf, pageLocales, type PageLocale } from '../domain/links.js';
import { messagesIn } from '../api/pages/i18n/index.js';
import { eventsOf } from './support/events.js';
import { getPage, onServer, submitPage } from './support/pages.js';
import { call, startStack, type Stack } from './support/stack.js';

let stack: Stack;
let apiKey: string;
let n = 0;

beforeAll(async () => {
  stack = await startStack();
  ({ apiKey } = await stack.createAccount({
    branding: { brandName: 'Acme Fitness' },
    cancelFlow: {
      enabled: true,
      offers: [
        { type: 'pause', months: 2 },
        { type: 'discount', percentOff: 20, durationMonths: 3 },
      ],
    },
  }));
});
afterAll(() => stack.close());

/** A fresh card-update link (with `locale` when given); its page's URL on this server. */
async function cardLink(locale?: string): Promise<string> {
  const res = await call<{ url: string }>(stack.baseUrl, 'POST', '/api/recovery/update-card/generate', {
    key: apiKey,
    body: { paymentMethodToken: `tok_visa_${(n += 1)}`, ...(locale ? { locale } : {}) },
  });
  expect(res.status).toBe(200);
  return onServer(stack.baseUrl, res.body.url);
}

async function cancelLink(body: Record<string, unknown>): Promise<string> {
  const res = await call<{ url: string }>(stack.baseUrl, 'POST', '/api/cancel-flow/generate', {
    key: apiKey,
    body: { customerId: `cus_${(n += 1)}`, ...body },
  });
  expect(res.status).toBe(200);
  return onServer(stack.baseUrl, res.body.url);
}

const langOf = (html: string) => /<html lang="([^"]+)"/.exec(html)?.[1];

describe('which language a hosted page speaks', () => {
  it.each([
    ['de-DE,de;q=0.9,en;q=0.5', 'de', 'Zahlungsdaten aktualisieren'],
    ['fr-CA,fr;q=0.8', 'fr', 'Mettez à jour vos informations de paiement'],
    ['es-MX', 'es', 'Actualice sus datos de pago'],
    ['ja-JP,ja;q=0.9', 'en', 'Update your payment details'],
    ['pl-PL,es;q=0.7,de;q=0.5', 'es', 'Actualice sus datos de pago'],
    ['pt-BR,pt;q=0.9', 'pt', messagesIn('pt').card.title],
    ['it-IT', 'it', messagesIn('it').card.title],
    ['nl-BE,nl;q=0.9,fr;q=0.8', 'nl', messagesIn('nl').card.title],
  ])('Accept-Language %s → %s', async (accept, lang, title) => {
    const page = await getPage(await cardLink(), { 'Accept-Language': accept });
    expect(page.status).toBe(200);
    expect(langOf(page.html)).toBe(lang);
    expect(page.html).toContain(`<h1>${title}</h1>`);
  });

  it('English without an Accept-Language header', async () => {
    const page = await getPage(await cardLink());
    expect(langOf(page.html)).toBe('en');
    expect(page.html).toContain('Secure page provided for Acme Fitness by Recoup');
  });

  it("the link's own locale wins over the browser's", async () => {
    const page = await getPage(await cardLink('de'), { 'Accept-Language': 'fr' });
    expect(langOf(page.html)).toBe('de');
    expect(page.html).toContain('Geben Sie die Karte ein, die Acme Fitness künftig belasten soll.');
    expect(page.html).toContain('Sichere Seite für Acme Fitness, bereitgestellt von Recoup');
    expect(page.html).toContain('>Karte speichern<');
  });

  it('an unknown link answers in the browser’s language', async () => {
    const page = await getPage(`${stack.baseUrl}/update-card/${'x'.repeat(43)}`, { 'Accept-Language': 'de' });
    expect(page.status).toBe(404);
    expect(langOf(page.html)).toBe('de');
    expect(page.html).toContain('Dieser Link ist ungültig');
  });

  it('a locale the pages do not speak is refused with 400, and no link is made', async () => {
    const before = await stack.stores.db.collection('links').countDocuments();
    const res = await call(stack.baseUrl, 'POST', '/api/recovery/update-card/generate', {
      key: apiKey,
      body: { paymentMethodToken: 'tok_visa', locale: 'pl' },
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ details: { locale: [expect.any(String)] } });
    const cancel = await call(stack.baseUrl, 'POST', '/api/cancel-flow/generate', {
      key: apiKey,
      body: { customerId: 'cus_x', locale: 'DE' },
    });
    expect(cancel.status).toBe(400);
    expect(await stack.stores.db.collection('links').countDocuments()).toBe(before);
  });
});

describe('everything on the page is in that language', () => {
  it('card errors, and the saved card, in German', async () => {
    const url = await cardLink('de');
    const refused = await submitPage(url, { number: '4242 4242 4242 4241', expiry: '13/30', cvc: '1' });
    expect(refused.status).toBe(422);
    expect(refused.html).toContain('Bitte prüfen Sie Ihre Kartendaten');
    expect(refused.html).toContain('Diese Kartennummer ist ungültig.');
    expect(refused.html).toContain('Der Monat muss zwischen 01 und 12 liegen.');
    expect(refused.html).toContain('Der Sicherheitscode besteht aus den 3 oder 4 Ziffern auf Ihrer Karte.');
    const saved = await submitPage(url, { number: '4242 4242 4242 4242', expiry: '12/34', cvc: '123' });
    expect(saved.status).toBe(200);
    expect(saved.html).toContain('Ihre Karte wurde aktualisiert');
    expect(saved.html).toContain('Acme Fitness belastet ab sofort Ihre Visa-Karte mit Endziffern 4242.');
    const again = await getPage(url, { 'Accept-Language': 'en' });
    expect(again.status).toBe(410);
    expect(langOf(again.html)).toBe('de');
    expect(again.html).toContain('Dieser Link wurde bereits verwendet');
  });

  it('the cancel flow in French, prices formatted the French way', async () => {
    const url = await cancelLink({ amount: 4500, currency: 'EUR', locale: 'fr' });
    const page = await getPage(url);
    expect(langOf(page.html)).toBe('fr');
    expect(page.html).toContain('Avant de résilier');
    expect(page.html).toContain('Faire une pause de 2 mois');
    const price = (minor: number) =>
      new Intl.NumberFormat('fr', { style: 'currency', currency: 'EUR' }).format(minor / 100);
    expect(page.html).toContain(price(3600)); // 20 % off 45,00 €
    expect(page.html).toContain(price(4500));
    expect(price(3600)).toMatch(/^36,00\s€$/);
    const done = await submitPage(url, { choice: 'keep' });
    expect(done.status).toBe(200);
    expect(langOf(done.html)).toBe('fr');
    expect(done.html).toContain('Vous pouvez fermer cette page.');
  });

  it('the cancel flow in Spanish from the browser, with a discount in euros', async () => {
    const url = await cancelLink({ amount: 4500, currency: 'EUR' });
    const page = await getPage(url, { 'Accept-Language': 'es-ES,es;q=0.9' });
    expect(langOf(page.html)).toBe('es');
    expect(page.html).toContain('Mantener mi suscripción');
    expect(page.html).toContain(
      new Intl.NumberFormat('es', { style: 'currency', currency: 'EUR' }).format(36),
    );
  });
});

describe('links the engine mints', () => {
  it('open in the locale given to execute, whatever the browser asks for', async () => {
    const { apiKey: key, account } = await stack.createAccount({ riskSkipThreshold: 0 });
    const res = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key,
      body: {
        paymentMethodToken: 'tok_visa',
        originalDeclineCode: 'insufficient_funds',
        amount: 4321,
        currency: 'EUR',
        locale: 'es',
      },
    });
    expect(res.body).toMatchObject({ success: false });
    const events = await eventsOf(stack, account.id, ['recovery.skipped_high_risk']);
    const skipped = events.find((e) => e.type === 'recovery.skipped_high_risk');
    const { cardUpdateUrl } = skipped?.payload as { cardUpdateUrl: string };
    const page = await getPage(cardUpdateUrl, { 'Accept-Language': 'de' });
    expect(page.status).toBe(200);
    expect(langOf(page.html)).toBe('es');
  });

  it('execute refuses a locale the pages do not speak, naming it', async () => {
    const res = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: apiKey,
      body: { paymentMethodToken: 'tok_visa', amount: 1000, locale: 'pl' },
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ details: { locale: [expect.any(String)] } });
  });
});

describe('a platform’s locale tag', () => {
  it.each([
    ['fr-CA', 'fr'],
    ['pt_BR', 'pt'],
    [' NL ', 'nl'],
    ['it', 'it'],
    ['ja-JP', null],
    ['', null],
    [null, null],
  ])('%j → %j', (tag, locale) => {
    expect(pageLocaleOf(tag)).toBe(locale);
  });
});

describe('the catalogues', () => {
  const each = pageLocales.map((locale) => [locale, messagesIn(locale)] as const);

  it.each(each)('%s keeps every value a sentence interpolates', (locale: PageLocale, m) => {
    expect(m.lang).toBe(locale);
    expect(m.card.lead('BRAND')).toContain('BRAND');
    expect(m.card.label('Mastercard', '4444')).toMatch(/Mastercard.*4444/);
    expect(m.card.savedLead('BRAND', 'CARD')).toMatch(/BRAND.*CARD|CARD.*BRAND/);
    expect(m.card.refusals.other('CODE')).toContain('CODE');
    expect(m.cancel.discount.textWithPrices('LOW', 'HIGH', 'TERM')).toMatch(/(?=.*LOW)(?=.*HIGH)(?=.*TERM)/);
    expect(m.cancel.discount.title(20, 'TERM')).toMatch(/(?=.*20)(?=.*TERM)/);
    expect(m.cancel.downgrade.text('LOW', 'HIGH')).toMatch(/(?=.*LOW)(?=.*HIGH)/);
    expect(m.cancel.downgrade.text('LOW', null)).not.toMatch(/HIGH|null/);
    expect(m.cancel.downgrade.textWithoutPrice).not.toMatch(/\d/);
    expect(m.cancel.done.discounted('BRAND', 20, 'TERM').text).toMatch(/(?=.*BRAND)(?=.*20)(?=.*TERM)/);
    expect(m.links.error.contact('REF-1')).toContain('REF-1');
    expect(m.months(1)).toContain('1');
    expect(m.months(3)).toContain('3');
    const sentences = JSON.stringify(m, (_k, v: unknown) => (typeof v === 'function' ? undefined : v));
    expect(sentences).not.toMatch(/undefined|\$\{/);
  });

  it('every language but English words its pages differently from English', () => {
    const en = messagesIn('en');
    for (const [locale, m] of each.filter(([l]) => l !== 'en')) {
      expect(m.card.title, locale).not.toBe(en.card.title);
      expect(m.cancel.keep, locale).not.toBe(en.cancel.keep);
      expect(m.cancel.offersChanged, locale).not.toBe(en.cancel.offersChanged);
      expect(m.cancel.downgrade.textWithoutPrice, locale).not.toBe(en.cancel.downgrade.textWithoutPrice);
      expect(Object.values(m.card.errors), locale).not.toEqual(Object.values(en.card.errors));
    }
  });
});
