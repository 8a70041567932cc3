import { describe, expect, it } from 'vitest';
import { cancelFlowForm, type Price } from '../api/pages/cancel-flow-views.js';
import { messagesIn } from '../api/pages/i18n/index.js';
import { CancelOffer, Settings } from '../domain/settings.js';

// What the cancel flow says an offer costs: only ever a price in the link's own currency, and never a
// sentence that makes no sense ("pay $0.00 instead of $0.00").

const en = messagesIn('en');

/** The text of the cancel form for one offer on a link of this price, tags stripped. */
function offerText(offer: unknown, price: Price): string {
  const html = cancelFlowForm(
    {
      action: '/cancel-flow/x',
      formToken: 'f',
      brandName: 'Acme',
      offers: [{ offer: CancelOffer.parse(offer), value: 'offer:0' }],
      price,
    },
    en,
  ).value;
  const item = /<li class="offer">([\s\S]*?)<\/li>/.exec(html)?.[1] ?? '';
  return item
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

const basic = { type: 'downgrade', planId: 'basic', label: 'Basic', amount: 499 };

describe('the price of a downgrade offer', () => {
  it.each([
    [
      'in the link’s currency, below the current price',
      { ...basic, currency: 'USD' },
      { amount: 1999, currency: 'USD' },
      'for $4.99 instead of $19.99',
    ],
    [
      'in the link’s currency, given in lower case',
      { ...basic, currency: 'usd' },
      { amount: 1999, currency: 'USD' },
      'for $4.99 instead of $19.99',
    ],
    [
      'in the link’s currency, the current price unknown',
      { ...basic, currency: 'USD' },
      { amount: null, currency: 'USD' },
      'for $4.99 per billing period',
    ],
    [
      'a free plan',
      { ...basic, amount: 0, currency: 'EUR' },
      { amount: 1999, currency: 'EUR' },
      'for €0.00 instead of €19.99',
    ],
  ])('is shown %s', (_, offer, price, shown) => {
    expect(offerText(offer, price)).toContain(shown);
  });

  it.each([
    [
      'in another currency than the link’s (a USD 499 offer on a JPY link)',
      { ...basic, currency: 'USD' },
      { amount: 3000, currency: 'JPY' },
    ],
    ['without a currency (an offer saved before offers had one)', basic, { amount: 1999, currency: 'USD' }],
  ])('is not shown %s', (_, offer, price) => {
    const text = offerText(offer, price);
    expect(text).toContain('Keep the essentials on a smaller plan.');
    expect(text).not.toMatch(/¥|\$|499|4\.99/);
  });

  it('is not compared with a current price it does not undercut: never "$0.00 instead of $0.00"', () => {
    const free = { ...basic, amount: 0, currency: 'USD' };
    const text = offerText(free, { amount: 0, currency: 'USD' });
    expect(text).toContain('for $0.00 per billing period');
    expect(text).not.toContain('instead of');
  });
});

describe('the price of a discount offer', () => {
  const half = { type: 'discount', percentOff: 50, durationMonths: 3 };

  it('is the link’s price less the discount', () => {
    expect(offerText(half, { amount: 1999, currency: 'USD' })).toContain('$10.00 instead of $19.99');
  });

  it('is not shown for a free subscription', () => {
    const text = offerText(half, { amount: 0, currency: 'USD' });
    expect(text).not.toContain('$0.00');
    expect(text).toContain('50%');
  });
});

describe('the currency of a downgrade offer in the settings', () => {
  const settingsWith = (offer: unknown) =>
    Settings.safeParse({
      webhookUrl: 'https://merchant.example/hooks',
      cancelFlow: { enabled: true, offers: [offer] },
    });

  it('is optional, so offers stored without one still load', () => {
    expect(settingsWith(basic).success).toBe(true);
  });

  it('is stored upper-case, and must be an ISO 4217 code', () => {
    const parsed = settingsWith({ ...basic, currency: 'jpy' });
    expect(parsed.success && parsed.data.cancelFlow.offers[0]).toEqual({ ...basic, currency: 'JPY' });
    const refused = settingsWith({ ...basic, currency: 'XYZ' });
    expect(refused.success).toBe(false);
    expect(refused.error?.issues[0]?.path).toEqual(['cancelFlow', 'offers', 0, 'currency']);
  });
});
