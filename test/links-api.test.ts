import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { recoveryWorkflowId, statusOf } from '../domain/recovery.js';
import { Settings } from '../domain/settings.js';
import { sha256 } from '../runtime/crypto.js';
import type { Account } from '../store/accounts.js';
import { collections } from '../store/collections.js';
import { eventsOf } from './support/events.js';
import { formTokenOf, getPage, onServer, postForm, submitPage } from './support/pages.js';
import { poll } from './support/poll.js';
import { call, startStack, type Stack } from './support/stack.js';
import { startBraintreeEmulator, type BraintreeEmulator } from './support/braintree-emulator.js';
import {
  chargebeeEvent,
  startChargebeeEmulator,
  type ChargebeeEmulator,
} from './support/chargebee-emulator.js';
import { postWebhook } from './support/connectors.js';
import { startPayPalEmulator } from './support/paypal-emulator.js';
import { startStripeEmulator, type StripeEmulator } from './support/stripe-emulator.js';

const hour = 3_600_000;
/** The stack's clock: real time plus an offset the expiry tests move forward. */
let offsetMs = 0;
const clock = () => new Date(Date.now() + offsetMs);
let stack: Stack;
let n = 0;
/** A fresh amount per request keeps the 5-minute velocity rule out of unrelated cases. */
const amount = () => 2000 + (n += 1);

const goodCard = { number: '4242 4242 4242 4242', expiry: '12/34', cvc: '123' };
const offers = [
  { type: 'pause', months: 2 },
  { type: 'discount', percentOff: 50, durationMonths: 3 },
];

beforeAll(async () => {
  stack = await startStack({ clock });
});
afterAll(() => stack.close());
beforeEach(() => {
  offsetMs = 0;
});

const cardLink = (key: string, body: Record<string, unknown> = { paymentMethodToken: 'tok_visa' }) =>
  call<{ url: string; token: string; expiresAt: string }>(
    stack.baseUrl,
    'POST',
    '/api/recovery/update-card/generate',
    {
      key,
      body,
    },
  );
const cancelLink = (key: string, body: Record<string, unknown> = { customerId: 'cus_1' }) =>
  call<{ url: string; token: string; expiresAt: string }>(
    stack.baseUrl,
    'POST',
    '/api/cancel-flow/generate',
    {
      key,
      body,
    },
  );

/** The recovery's state once it has succeeded, or its last state when it has not within 15 s. */
const stateOnceSucceeded = async (accountId: string, transactionId: string) =>
  (
    await poll(
      () => stack.stores.recoveries.find(accountId, transactionId),
      (doc) => doc?.state === 'succeeded',
    )
  )?.state;

/** Every document of the test database, serialised: what an attacker with a database dump would see. */
async function databaseDump(): Promise<string> {
  const parts: string[] = [];
  for (const { name } of await stack.stores.db.listCollections().toArray())
    parts.push(JSON.stringify(await stack.stores.db.collection(name).find().toArray()));
  return parts.join('\n');
}

function expectFreshLink(
  body: { url: string; token: string; expiresAt: string },
  path: string,
  lifetimeMs: number,
) {
  expect(body.url).toBe(`http://127.0.0.1/${path}/${body.token}`);
  expect(body.token).toMatch(/^[A-Za-z0-9_-]+$/);
  expect(Buffer.from(body.token, 'base64url').length).toBeGreaterThanOrEqual(16);
  expect(Math.abs(Date.parse(body.expiresAt) - (Date.now() + lifetimeMs))).toBeLessThan(5_000);
}

describe('POST /api/recovery/update-card/generate', () => {
  it('answers 200 with a 72-hour link on the public base URL; a fresh 256-bit token each time', async () => {
    const { apiKey } = await stack.createAccount();
    const queued = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: apiKey,
      body: { paymentMethodToken: 'tok_visa', amount: amount(), originalDeclineCode: 'insufficient_funds' },
    });
    const first = await cardLink(apiKey, {
      paymentMethodToken: 'tok_visa',
      customerEmail: 'ada@example.com',
      returnUrl: 'https://shop.example.com/account',
      transactionId: String(queued.body.transactionId),
    });
    const second = await cardLink(apiKey);
    expect(first.status).toBe(200);
    expect(Object.keys(first.body).sort()).toEqual(['expiresAt', 'token', 'url']);
    expectFreshLink(first.body, 'update-card', 72 * hour);
    expect(Buffer.from(first.body.token, 'base64url').length).toBe(32);
    expect(second.body.token).not.toBe(first.body.token);
  });

  it('uses the account custom domain over https when one is set', async () => {
    const { apiKey } = await stack.createAccount({ customDomain: 'pay.example.com' });
    const res = await cardLink(apiKey);
    expect(res.body.url).toBe(`https://pay.example.com/update-card/${res.body.token}`);
  });

  it.each([
    [{}, 'paymentMethodToken', 'Required'],
    [{ paymentMethodToken: '   ' }, 'paymentMethodToken', 'must not be empty'],
    [{ paymentMethodToken: 'tok_visa', returnUrl: 'http://shop.example.com' }, 'returnUrl', 'https'],
    [{ paymentMethodToken: 'tok_visa', customerEmail: 'not-an-email' }, 'customerEmail', ''],
    [{ paymentMethodToken: 'tok_visa', paymentMethodtoken: 'typo' }, 'paymentMethodtoken', 'Unknown field'],
  ])('400 names the bad field: %j', async (body, field, message) => {
    const { apiKey } = await stack.createAccount();
    const res = await cardLink(apiKey, body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'Validation failed' });
    const details = (res.body as unknown as { details: Record<string, string[]> }).details;
    expect(details[field]?.join(' ')).toContain(message);
  });

  it('400 naming paymentMethodToken for one over 512 characters, and no link is stored; 512 is taken', async () => {
    const { apiKey, account } = await stack.createAccount();
    const res = await cardLink(apiKey, { paymentMethodToken: `tok_${'x'.repeat(509)}` });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'Validation failed',
      details: { paymentMethodToken: [expect.stringContaining('512')] },
    });
    expect(
      await stack.stores.db.collection(collections.links).countDocuments({ accountId: account.id }),
    ).toBe(0);
    expect((await cardLink(apiKey, { paymentMethodToken: `tok_${'x'.repeat(508)}` })).status).toBe(200);
  });

  it('401 without a key, with a wrong key, or with the publishable key', async () => {
    const { publishableKey } = await stack.createAccount();
    for (const key of [undefined, 'sk_wrong', publishableKey]) {
      const res = await call(stack.baseUrl, 'POST', '/api/recovery/update-card/generate', {
        ...(key ? { key } : {}),
        body: { paymentMethodToken: 'tok_visa' },
      });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'Missing or invalid API key' });
    }
  });

  it('400 for a transactionId naming no recovery of the account (its promised retry would be dropped), and no link is made', async () => {
    const { apiKey, account } = await stack.createAccount();
    const other = await stack.createAccount();
    const theirs = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: other.apiKey,
      body: { paymentMethodToken: 'tok_visa', amount: amount(), originalDeclineCode: 'insufficient_funds' },
    });
    expect(theirs.status).toBe(202);
    for (const transactionId of [randomUUID(), 'tx_unknown', String(theirs.body.transactionId)]) {
      const res = await cardLink(apiKey, { paymentMethodToken: 'tok_visa', transactionId });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: 'Validation failed',
        details: { transactionId: ['must be the transactionId of a recovery of this account'] },
      });
    }
    expect(
      await stack.stores.db.collection(collections.links).countDocuments({ accountId: account.id }),
    ).toBe(0);
  });

  it('stores the link hashed: the token appears nowhere in the database', async () => {
    const { apiKey } = await stack.createAccount();
    const { body } = await cardLink(apiKey, { paymentMethodToken: 'tok_visa' });
    const dump = await databaseDump();
    expect(dump).not.toContain(body.token);
    expect(dump).toContain(sha256(body.token));
  });
});

describe('POST /api/cancel-flow/generate', () => {
  it('403 with error and message when the cancel flow is not enabled', async () => {
    const { apiKey } = await stack.createAccount();
    const res = await cancelLink(apiKey);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({
      error: 'Cancel flow not enabled',
      message: expect.stringContaining('not enabled'),
    });
  });

  it('answers 200 with a 48-hour link; on the custom domain when set', async () => {
    const plain = await stack.createAccount({ cancelFlow: { enabled: true, offers } });
    const res = await cancelLink(plain.apiKey, {
      customerId: 'cus_42',
      customerEmail: 'ada@example.com',
      subscriptionId: 'sub_9',
      amount: 1999,
      currency: 'eur',
      returnUrl: 'https://shop.example.com/billing',
    });
    expect(res.status).toBe(200);
    expectFreshLink(res.body, 'cancel-flow', 48 * hour);
    const custom = await stack.createAccount({
      cancelFlow: { enabled: true, offers },
      customDomain: 'pay.example.com',
    });
    const onDomain = await cancelLink(custom.apiKey);
    expect(onDomain.body.url).toBe(`https://pay.example.com/cancel-flow/${onDomain.body.token}`);
    expect(await databaseDump()).not.toContain(res.body.token);
  });

  it('takes an amount of 0 (a free plan): a working link to a page that renders', async () => {
    const { apiKey } = await stack.createAccount({ cancelFlow: { enabled: true, offers } });
    const res = await cancelLink(apiKey, { customerId: 'cus_free', amount: 0 });
    expect(res.status).toBe(200);
    expectFreshLink(res.body, 'cancel-flow', 48 * hour);
    const page = await getPage(onServer(stack.baseUrl, res.body.url));
    expect(page.status).toBe(200);
    expect(page.html).toContain('Pause for 2 months');
  });

  it.each([
    [{}, 'customerId'],
    [{ customerId: 'c', amount: -1 }, 'amount'],
    [{ customerId: 'c', amount: 19.99 }, 'amount'],
    [{ customerId: 'c', currency: 'XYZ' }, 'currency'],
    [{ customerId: 'c', returnUrl: 'javascript:alert(1)' }, 'returnUrl'],
    [{ customerId: 'c', plan: 'gold' }, 'plan'],
  ])('400 names the bad field: %j', async (body, field) => {
    const { apiKey } = await stack.createAccount({ cancelFlow: { enabled: true, offers } });
    const res = await cancelLink(apiKey, body);
    expect(res.status).toBe(400);
    expect(Object.keys((res.body as unknown as { details: object }).details)).toContain(field);
  });

  it('401 without a valid secret key', async () => {
    const res = await call(stack.baseUrl, 'POST', '/api/cancel-flow/generate', {
      key: 'sk_nope',
      body: { customerId: 'c' },
    });
    expect(res.status).toBe(401);
  });
});

describe('hosted pages: lifetime, single use and trust', () => {
  it('a card-update link works until 72 hours and is refused with 410 after', async () => {
    const { apiKey } = await stack.createAccount();
    const url = onServer(stack.baseUrl, (await cardLink(apiKey)).body.url);
    offsetMs = 72 * hour - 60_000;
    const page = await getPage(url);
    expect(page.status).toBe(200);
    offsetMs = 72 * hour + 1_000;
    expect((await getPage(url)).status).toBe(410);
    const late = await postForm(url, { _form: formTokenOf(page.html), ...goodCard });
    expect(late.status).toBe(410);
    expect(late.html).toContain('This link has expired');
  });

  it('a cancel-flow link works until 48 hours and is refused with 410 after', async () => {
    const { apiKey } = await stack.createAccount({ cancelFlow: { enabled: true, offers } });
    const url = onServer(stack.baseUrl, (await cancelLink(apiKey)).body.url);
    offsetMs = 48 * hour - 60_000;
    const page = await getPage(url);
    expect(page.status).toBe(200);
    offsetMs = 48 * hour + 1_000;
    expect((await getPage(url)).status).toBe(410);
    expect((await postForm(url, { _form: formTokenOf(page.html), choice: 'cancel' })).status).toBe(410);
  });

  it('pages carry a strict CSP and never leak the token by referrer or cache', async () => {
    const { apiKey } = await stack.createAccount({
      branding: { brandName: 'Acme', logoUrl: 'https://cdn.acme.test/logo.svg' },
    });
    const page = await getPage(onServer(stack.baseUrl, (await cardLink(apiKey)).body.url));
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toMatch(/style-src 'self' 'nonce-[A-Za-z0-9+/=]+'/);
    expect(csp).toContain('img-src https://cdn.acme.test');
    expect(csp).toContain("form-action 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('script-src');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.html).not.toContain('<script');
    expect(page.html).toContain('<html lang="en">');
  });

  it('unknown tokens, and tokens of the other kind, get a friendly 404 page', async () => {
    const { apiKey } = await stack.createAccount({ cancelFlow: { enabled: true, offers } });
    const cancel = await cancelLink(apiKey);
    for (const path of [
      '/update-card/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
      `/update-card/${cancel.body.token}`,
    ]) {
      const page = await getPage(stack.baseUrl + path);
      expect(page.status).toBe(404);
      expect(page.html).toContain('This link is not valid');
    }
  });

  it('a form without a valid token of this link (CSRF), or sent cross-site, is refused and changes nothing', async () => {
    const { apiKey } = await stack.createAccount();
    const url = onServer(stack.baseUrl, (await cardLink(apiKey)).body.url);
    const other = onServer(stack.baseUrl, (await cardLink(apiKey)).body.url);
    const token = formTokenOf((await getPage(url)).html);
    const otherToken = formTokenOf((await getPage(other)).html);
    const attempts = [
      postForm(url, goodCard),
      postForm(url, { _form: otherToken, ...goodCard }),
      postForm(url, { _form: `${token}x`, ...goodCard }),
      postForm(url, { _form: token, ...goodCard }, { 'Sec-Fetch-Site': 'cross-site' }),
      fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ _form: token, ...goodCard }),
      }).then((r) => ({ status: r.status })),
    ];
    for (const res of await Promise.all(attempts)) expect(res.status).toBe(403);
    expect((await getPage(url)).status).toBe(200);
    expect((await postForm(url, { _form: token, ...goodCard })).status).toBe(200);
  });

  it('a form over 64 KiB is refused with a 413 page and changes nothing', async () => {
    const { apiKey } = await stack.createAccount();
    const url = onServer(stack.baseUrl, (await cardLink(apiKey)).body.url);
    const token = formTokenOf((await getPage(url)).html);
    const res = await postForm(url, { _form: token, ...goodCard, padding: 'x'.repeat(70_000) });
    expect(res.status).toBe(413);
    expect(res.html).toContain('Reload the page');
    expect((await postForm(url, { _form: token, ...goodCard })).status).toBe(200);
  });

  it('the card number is never stored', async () => {
    const { apiKey } = await stack.createAccount();
    const url = onServer(stack.baseUrl, (await cardLink(apiKey)).body.url);
    expect((await submitPage(url, goodCard)).status).toBe(200);
    expect(await databaseDump()).not.toMatch(/4242\s?4242\s?4242\s?4242/);
  });

  it("counts a typed expiry in the account's time zone: a card whose month has ended in Auckland is refused there", async () => {
    // 18:00 UTC on the last day of this month: already the 1st of the next in Auckland.
    const now = new Date();
    offsetMs = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) - 6 * hour - Date.now();
    const at = clock();
    const expiry = `${String(at.getUTCMonth() + 1).padStart(2, '0')}/${String(at.getUTCFullYear() % 100)}`;
    const inZone = async (timezone: string) => {
      const { apiKey } = await stack.createAccount({ timezone });
      return submitPage(onServer(stack.baseUrl, (await cardLink(apiKey)).body.url), { ...goodCard, expiry });
    };
    const auckland = await inZone('Pacific/Auckland');
    expect(auckland.status).toBe(422);
    expect(auckland.html).toContain('This card has expired');
    expect((await inZone('UTC')).status).toBe(200);
  });

  it('escapes everything it renders: a brand name with markup shows as text', async () => {
    const { apiKey } = await stack.createAccount({ branding: { brandName: '<b>Acme & "Co"</b>' } });
    const page = await getPage(onServer(stack.baseUrl, (await cardLink(apiKey)).body.url));
    expect(page.html).toContain('&lt;b&gt;Acme &amp; &quot;Co&quot;&lt;/b&gt;');
    expect(page.html).not.toContain('<b>Acme');
  });

  it('a use interrupted after consuming the link still sends its event once, when the link is next opened', async () => {
    const { apiKey, account } = await stack.createAccount();
    const link = await cardLink(apiKey, { paymentMethodToken: 'tok_old' });
    const url = onServer(stack.baseUrl, link.body.url);
    const eventId = randomUUID();
    // The process died right after the consumption insert: no event, no retries.
    await stack.stores.links.consume({
      _id: sha256(link.body.token),
      accountId: account.id,
      at: clock(),
      eventId,
      outcome: { kind: 'card_updated', newPaymentMethodToken: 'tok_visa_new', eligibleGateways: ['test'] },
      effectsDoneAt: null,
    });
    expect((await getPage(url)).status).toBe(410);
    expect(await stack.stores.events.get(eventId)).toBeNull(); // the use may still be in flight
    offsetMs = 61_000;
    expect((await getPage(url)).status).toBe(410);
    expect((await getPage(url)).status).toBe(410);
    const events = (await stack.stores.events.list({ accountId: account.id })).filter(
      (e) => e.type === 'card.updated',
    );
    expect(events.map((e) => e._id)).toEqual([eventId]);
    expect(events[0]!.payload).toMatchObject({
      oldPaymentMethodToken: 'tok_old',
      newPaymentMethodToken: 'tok_visa_new',
    });
  });
});

describe('the cancel flow after the operator changed the offers', () => {
  /** The values of a cancel-flow page's offer buttons, in the order shown. */
  const offerChoices = (html: string) =>
    [...html.matchAll(/name="choice"\s+value="(offer:[^"]+)"/g)].map((m) => m[1]!);
  /** The operator replaces the account's offers (as `recoup accounts update --settings` does). */
  const setOffers = (account: Account, list: unknown[]) =>
    stack.stores.accounts.updateSettings(
      account.id,
      Settings.parse({ ...account.settings, cancelFlow: { enabled: true, offers: list } }),
    );
  const churnEvents = async (accountId: string) =>
    (await stack.stores.events.list({ accountId, limit: 200 })).filter((e) =>
      e.type.startsWith('churn.flow.'),
    );

  it('a choice of an offer no longer at its place shows the current offers again and leaves the link usable; a current choice sends exactly the offer shown', async () => {
    const { apiKey, account } = await stack.createAccount({ cancelFlow: { enabled: true, offers } });
    const link = (await cancelLink(apiKey, { customerId: 'cus_reordered' })).body;
    const url = onServer(stack.baseUrl, link.url);
    const page = await getPage(url);
    const [pause, discount] = offerChoices(page.html);
    expect(page.html).toContain('Pause for 2 months');

    // The operator drops the pause and adds a downgrade while the page is open: the offer the customer
    // clicked is gone, and what is now at each place is another offer.
    const downgrade = { type: 'downgrade', planId: 'basic', label: 'Basic', amount: 999 } as const;
    await setOffers(account, [offers[1], downgrade]);
    for (const choice of [pause!, discount!, 'offer:0']) {
      const stale = await postForm(url, { _form: formTokenOf(page.html), choice });
      expect(stale.status, choice).toBe(409);
      expect(stale.html).toContain('The offers have changed since this page was opened.');
      expect(stale.html).not.toContain('Pause for 2 months');
      expect(stale.html).toContain('Switch to Basic');
    }
    expect(await churnEvents(account.id)).toEqual([]);
    expect(
      await stack.stores.db
        .collection('linkConsumptions')
        .countDocuments({ _id: sha256(link.token) as never }),
    ).toBe(0);

    const again = await getPage(url);
    expect(again.status).toBe(200);
    const shown = offerChoices(again.html);
    expect(shown).toHaveLength(2);
    const done = await postForm(url, { _form: formTokenOf(again.html), choice: shown[1]! });
    expect(done.status).toBe(200);
    expect(done.html).toContain('Basic');
    await eventsOf(stack, account.id, ['churn.flow.downgraded']);
    const [event, ...more] = await churnEvents(account.id);
    expect(more).toEqual([]);
    expect(event!.payload).toMatchObject({ event: 'churn.flow.downgraded', outcome: 'downgraded' });
    expect((event!.payload as { offer: unknown }).offer).toEqual(downgrade);
  });

  it('a choice of an offer edited in place is not taken either', async () => {
    const { apiKey, account } = await stack.createAccount({ cancelFlow: { enabled: true, offers } });
    const url = onServer(stack.baseUrl, (await cancelLink(apiKey, { customerId: 'cus_edited' })).body.url);
    const page = await getPage(url);
    const [, discount] = offerChoices(page.html);
    await setOffers(account, [offers[0], { ...offers[1], percentOff: 20 }]);
    const stale = await postForm(url, { _form: formTokenOf(page.html), choice: discount! });
    expect(stale.status).toBe(409);
    expect(stale.html).toContain('20% off');
    expect(await churnEvents(account.id)).toEqual([]);
  });
});

describe('a card update while the recovery’s attempt is under way', () => {
  it('a recovery whose unclear charge is being looked up takes the new card as soon as the lookup leaves it waiting', async () => {
    const { apiKey, account } = await stack.createAccount();
    const res = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: apiKey,
      body: {
        paymentMethodToken: 'tok_server_error',
        originalDeclineCode: 'processing_error',
        amount: amount(),
      },
    });
    expect(res.body).toMatchObject({ status: 'unknown' });
    const transactionId = String(res.body.transactionId);
    expect(await stack.stores.recoveries.find(account.id, transactionId)).toMatchObject({
      state: 'reconciling',
    });
    // Neither named by the link nor queued: under way on the old card, its lookup 30 s away.
    const link = await cardLink(apiKey, { paymentMethodToken: 'tok_server_error' });
    expect((await submitPage(onServer(stack.baseUrl, link.body.url), goodCard)).status).toBe(200);

    const done = await poll(
      () => stack.stores.recoveries.find(account.id, transactionId),
      (doc) => doc?.state === 'succeeded',
      { timeoutMs: 75_000, everyMs: 500 },
    );
    expect(done).toMatchObject({ state: 'succeeded' });
    expect(done!.paymentMethodToken).not.toBe('tok_server_error');
  }, 90_000);
});

describe('a card update while the last attempt is under way', () => {
  /**
   * Executes a trial conversion (charged at once) on `old` at a gateway answering in 3 s, and has the
   * customer save a new card while that charge is under way (on the page, or `newCard` saved in the
   * merchant's own form); returns the answer and the recovery.
   */
  async function updatedMidCharge(
    old: string,
    settings: Record<string, unknown> = {},
    { newCard, fallback = 'tok_second_card' }: { newCard?: string; fallback?: string } = {},
  ) {
    const { apiKey, account } = await stack.createAccount(settings, [
      { name: 'slow', kind: 'test', test: true, credentials: { latencyMs: '3000' } },
    ]);
    const answer = call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: apiKey,
      body: {
        paymentMethodToken: old,
        fallbackPaymentMethodTokens: [fallback],
        originalDeclineCode: 'insufficient_funds',
        isTrialConversion: true,
        amount: amount(),
      },
    });
    await poll(
      () => stack.stores.sandbox.countForToken('slow', old),
      (charges) => charges > 0,
      { everyMs: 20 },
    );
    const link = await cardLink(apiKey, { paymentMethodToken: old });
    const saved = newCard
      ? await call(stack.baseUrl, 'POST', '/api/recovery/update-card/complete', {
          key: apiKey,
          body: { token: link.body.token, newPaymentMethodToken: newCard },
        })
      : await submitPage(onServer(stack.baseUrl, link.body.url), goodCard);
    expect(saved.status).toBe(200);
    const res = await answer;
    // The account's one recovery (a blocked answer names no transactionId).
    const doc = await poll(
      async () => (await stack.stores.recoveries.page(account.id, { limit: 1 }))[0],
      (d) => d !== undefined && statusOf(d.state) !== 'unknown',
    );
    const charged = async (token: string) => stack.stores.sandbox.countForToken('slow', token);
    return { res, doc: doc!, charged, accountId: account.id };
  }

  it('the new card is tried before the recovery ends on the old one, expired', async () => {
    const old = 'tok_decline_expired_card';
    const { res, doc, charged, accountId } = await updatedMidCharge(old);
    expect(res).toMatchObject({ status: 200, body: { success: true } });
    // The merchant hears of the success alone: no ending on the old card was published first.
    const events = await eventsOf(stack, accountId, ['recovery.success']);
    expect(events.map((e) => e.type).sort()).toEqual(['card.updated', 'recovery.success']);
    expect(events.find((e) => e.type === 'recovery.success')?.payload).toMatchObject({
      serviceTransactionId: res.body.transactionId,
    });
    expect(res.body.strategyUsed).not.toBe('smart_retry');
    expect(doc).toMatchObject({ state: 'succeeded' });
    expect(doc.paymentMethodToken).not.toBe(old);
    expect(await charged(doc.paymentMethodToken)).toBe(1);
    expect(await charged(old)).toBe(1);
    // The fallback card, left untried by the old card's ending, stays so.
    expect(await charged('tok_second_card')).toBe(0);
  });

  it('a new card the issuer blocks ends the recovery blocked, and recovery.blocked names that card, not the old one', async () => {
    const stolen = 'tok_decline_stolen_card';
    // Invalid, as is the fallback card tried next: the recovery ends asking for a new card, which it has.
    const { res, doc, charged, accountId } = await updatedMidCharge(
      'tok_decline_incorrect_number',
      {},
      { newCard: stolen, fallback: 'tok_decline_invalid_number' },
    );
    expect(res).toMatchObject({ status: 403, body: { declineCode: 'stolen_card', action: 'blocked' } });
    expect(doc).toMatchObject({ state: 'blocked', paymentMethodToken: stolen });
    expect(await charged(stolen)).toBe(1);
    const events = await eventsOf(stack, accountId, ['recovery.blocked']);
    expect(events.map((e) => e.type)).not.toContain('recovery.failed');
    const blocked = events.filter((e) => e.type === 'recovery.blocked');
    expect(blocked).toHaveLength(1);
    expect(blocked[0]?.payload).toMatchObject({
      declineCode: 'stolen_card',
      recommendedAction: 'manual_review',
      paymentMethodToken: stolen,
    });
  });

  it('not when the ending concerns the payment (a possible duplicate), nor past the budget', async () => {
    const duplicate = await updatedMidCharge('tok_decline_duplicate_transaction');
    expect(duplicate.res.body).toMatchObject({ success: false, recommendedAction: 'monitor' });
    expect(duplicate.doc).toMatchObject({
      paymentMethodToken: 'tok_decline_duplicate_transaction',
      lastDeclineCode: 'duplicate_transaction',
    });

    const spent = await updatedMidCharge('tok_decline_expired_card', {
      retryPolicy: { maxAttempts: 1, maxDays: 21 },
    });
    // The ending it was to have: the card expired, the customer to update it (which they did).
    expect(spent.res.body).toMatchObject({ success: false, recommendedAction: 'request_card_update' });
    expect(spent.doc.paymentMethodToken).toBe('tok_decline_expired_card');
    expect(spent.doc.state).not.toBe('succeeded');
  });
});

describe('another account', () => {
  it("cannot reach a link's recoveries: another account's queued recovery on the same token is not retried", async () => {
    const a = await stack.createAccount();
    const b = await stack.createAccount();
    const queued = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: b.apiKey,
      body: {
        paymentMethodToken: 'tok_decline_insufficient_funds',
        originalDeclineCode: 'insufficient_funds',
        amount: amount(),
      },
    });
    expect(queued.status).toBe(202);
    const transactionId = String(queued.body.transactionId);
    // A cannot name B's transaction (no recovery of A's: 400), and a card update on B's token stays A's.
    expect(
      (await cardLink(a.apiKey, { paymentMethodToken: 'tok_decline_insufficient_funds', transactionId }))
        .status,
    ).toBe(400);
    const link = await cardLink(a.apiKey, { paymentMethodToken: 'tok_decline_insufficient_funds' });
    expect((await submitPage(onServer(stack.baseUrl, link.body.url), goodCard)).status).toBe(200);
    expect((await eventsOf(stack, a.account.id, ['card.updated'])).map((e) => e.type)).toContain(
      'card.updated',
    );

    const handle = stack.temporal.workflow.getHandle(recoveryWorkflowId(b.account.id, transactionId));
    await new Promise((r) => setTimeout(r, 1_500));
    const status = await call(stack.baseUrl, 'GET', `/api/recovery/status/${transactionId}`, {
      key: b.apiKey,
    });
    expect(status.body).toMatchObject({ state: 'queued' });
    expect((await stack.stores.events.list({ accountId: b.account.id })).map((e) => e.type)).not.toContain(
      'card.updated',
    );
    await handle.terminate('test done');
  });
});

describe('links minted by the engine', () => {
  it('a retry skipped as high risk sends recovery.skipped_high_risk with a working card-update link, before recovery.failed', async () => {
    const account = await stack.createAccount({ riskSkipThreshold: 0 });
    const res = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: account.apiKey,
      body: {
        paymentMethodToken: 'tok_visa',
        originalDeclineCode: 'insufficient_funds',
        amount: 4321,
        currency: 'EUR',
      },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: false });
    // The id the merchant was given (FAILED_API_…, a failure answered at once) names the skipped charge.
    const transactionId = String(res.body.transactionId);
    expect(transactionId).toMatch(/^FAILED_API_/);
    const ai = res.body.ai as { score: number; confidence: number; reasoning: string };
    const events = await eventsOf(stack, account.account.id, [
      'recovery.skipped_high_risk',
      'recovery.failed',
    ]);
    const skipped = events.find((e) => e.type === 'recovery.skipped_high_risk')!;
    const failed = events.find((e) => e.type === 'recovery.failed')!;
    expect(skipped.createdAt.getTime()).toBeLessThanOrEqual(failed.createdAt.getTime());
    expect(skipped.payload).toMatchObject({
      paymentMethodToken: 'tok_visa',
      amount: 4321,
      currency: 'EUR',
      riskScore: Math.round((100 - ai.score) * 10) / 10,
      confidence: ai.confidence,
      reasoning: ai.reasoning,
      skippedChargeId: transactionId,
      cardUpdateUrl: expect.stringMatching(/\/update-card\/[A-Za-z0-9_-]{43}$/),
    });
    const cardUpdateUrl = String((skipped.payload as { cardUpdateUrl: string }).cardUpdateUrl);
    const page = await getPage(cardUpdateUrl);
    expect(page.status).toBe(200);
    expect(page.html).toContain('Update your payment details');
    // Kept to be resent, but sealed: a database dump opens no link.
    expect(await databaseDump()).not.toContain(cardUpdateUrl.split('/').at(-1));
  });

  /** Executes a recovery that fails at once and waits for its workflow to finish. */
  async function failOnce(apiKey: string, accountId: string, customerEmail: string) {
    const res = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: apiKey,
      body: {
        paymentMethodToken: 'tok_decline_expired_card',
        originalDeclineCode: 'expired_card',
        amount: amount(),
        customerEmail,
      },
    });
    expect(res.body).toMatchObject({ success: false });
    const id = String(res.body.transactionId).replace(/^FAILED_API_/, '');
    await stack.temporal.workflow.getHandle(recoveryWorkflowId(accountId, id)).result();
  }

  const retentionEvents = async (accountId: string) =>
    (await stack.stores.events.list({ accountId, limit: 200 })).filter(
      (e) => e.type === 'recovery.proactive_retention',
    );

  it('the third failed recovery of one customer within 30 days sends recovery.proactive_retention once, with a working cancel flow', async () => {
    const { apiKey, account } = await stack.createAccount({ cancelFlow: { enabled: true, offers } });
    await failOnce(apiKey, account.id, 'grace@example.com');
    await failOnce(apiKey, account.id, 'grace@example.com');
    await failOnce(apiKey, account.id, 'other@example.com');
    expect(await retentionEvents(account.id)).toHaveLength(0);
    await failOnce(apiKey, account.id, 'grace@example.com');
    const [event, ...more] = await retentionEvents(account.id);
    expect(more).toHaveLength(0);
    const payload = event!.payload as Record<string, unknown>;
    expect(payload).toMatchObject({
      customerEmail: 'grace@example.com',
      recentFailureCount: 3,
      currency: 'USD',
      cancelFlowToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    expect(payload.cancelFlowUrl).toBe(`${stack.baseUrl}/cancel-flow/${String(payload.cancelFlowToken)}`);
    const page = await getPage(String(payload.cancelFlowUrl));
    expect(page.status).toBe(200);
    expect(page.html).toContain('Pause for 2 months');
    expect(await databaseDump()).not.toContain(String(payload.cancelFlowToken));

    await failOnce(apiKey, account.id, 'grace@example.com');
    expect(await retentionEvents(account.id)).toHaveLength(1);
  });

  it('counts a failure from when it ended, and not once the customer paid it: later writes do not make old failures recent', async () => {
    const { apiKey, account } = await stack.createAccount({ cancelFlow: { enabled: true, offers } });
    const email = 'lovelace@example.com';
    await failOnce(apiKey, account.id, email);
    await failOnce(apiKey, account.id, email);
    const [old, paid] = await stack.stores.recoveries.forCustomer(account.id, email);
    // The first failed 40 days ago and was written to today (a write-back, say); the customer paid the
    // second on their own.
    const recoveries = stack.stores.db.collection<{ _id: string }>(collections.recoveries);
    await recoveries.updateOne(
      { _id: old!._id },
      { $set: { endedAt: new Date(clock().getTime() - 40 * 24 * hour), updatedAt: clock() } },
    );
    await recoveries.updateOne({ _id: paid!._id }, { $set: { paidOnTheirOwnAt: clock() } });
    await failOnce(apiKey, account.id, email);
    await failOnce(apiKey, account.id, email);
    expect(await retentionEvents(account.id)).toHaveLength(0);
    await failOnce(apiKey, account.id, email);
    const [event] = await retentionEvents(account.id);
    expect(event?.payload).toMatchObject({ customerEmail: email, recentFailureCount: 3 });
  });

  it('no proactive retention without the cancel flow enabled', async () => {
    const { apiKey, account } = await stack.createAccount();
    for (let i = 0; i < 3; i += 1) await failOnce(apiKey, account.id, 'hopper@example.com');
    expect(await retentionEvents(account.id)).toHaveLength(0);
  });

  it('once the account goes live, what its sandbox did counts no more: neither its failures nor the offer it made', async () => {
    const { apiKey, account } = await stack.createAccount({ cancelFlow: { enabled: true, offers } });
    expect(account.testMode).toBe(true);
    const email = 'turing@example.com';
    for (let i = 0; i < 3; i += 1) await failOnce(apiKey, account.id, email);
    expect(await retentionEvents(account.id)).toHaveLength(1);

    // The primary gateway becomes a live one: the sandbox's adapter marked live, so it can still be charged.
    const live = await stack.stores.accounts.setGateways(account.id, [
      { name: 'live', kind: 'test', test: false, credentials: {} },
      { name: 'test', kind: 'test', test: true, credentials: {} },
    ]);
    expect(live?.testMode).toBe(false);
    // The first live failure is one, not four.
    await failOnce(apiKey, account.id, email);
    expect(await retentionEvents(account.id)).toHaveLength(1);
    // The third is offered, though the sandbox's offer is not 30 days old.
    await failOnce(apiKey, account.id, email);
    await failOnce(apiKey, account.id, email);
    const [latest, ...earlier] = await retentionEvents(account.id);
    expect(earlier).toHaveLength(1);
    expect(latest?.payload).toMatchObject({ customerEmail: email, recentFailureCount: 3 });
  });

  describe('for a customer of a billing platform', () => {
    let chargebee: ChargebeeEmulator;
    beforeAll(async () => {
      chargebee = await startChargebeeEmulator();
    });
    afterAll(() => chargebee.close());
    const webhookAuth = { authorization: `Basic ${Buffer.from('recoup:hooks').toString('base64')}` };

    /** Chargebee failed to collect a new invoice of the customer on their card, and its recovery fails too. */
    async function chargebeeFailure(accountId: string, customer: { id: string; email: string }) {
      const invoice = { id: `inv_${randomUUID()}`, customer_id: customer.id, amount_due: amount() };
      chargebee.addInvoice({ ...invoice, currency_code: 'USD' });
      const body = chargebeeEvent('payment_failed', {
        transaction: { customer_id: customer.id, error_code: 'expired_card' },
        invoice: { ...invoice, status: 'payment_due', currency_code: 'USD' },
        customer: {
          ...customer,
          payment_method: { reference_id: `${customer.id}/tok_decline_expired_card` },
        },
      });
      const res = await postWebhook(stack, 'chargebee', accountId, JSON.stringify(body), webhookAuth);
      expect(res.body).toMatchObject({ action: 'recovery_started' });
      const doc = await stack.stores.recoveries.findByKey(accountId, invoice.id);
      await stack.temporal.workflow.getHandle(doc!.workflowId).result();
    }

    it("offers a cancel flow naming the platform's customer, which churn.flow echoes", async () => {
      const { account } = await stack.createAccount({ cancelFlow: { enabled: true, offers } });
      await stack.stores.accounts.setConnector(account.id, 'chargebee', {
        username: 'recoup',
        password: 'hooks',
        site: chargebee.site,
        apiKey: chargebee.apiKey,
        apiBase: chargebee.url,
      });
      const customer = { id: `AzZpat${(n += 1)}`, email: 'pat@example.com' };
      for (let i = 0; i < 3; i += 1) await chargebeeFailure(account.id, customer);
      const [offer] = await retentionEvents(account.id);
      expect(offer?.payload).toMatchObject({ customerEmail: customer.email, recentFailureCount: 3 });

      const url = String((offer!.payload as { cancelFlowUrl: string }).cancelFlowUrl);
      expect((await submitPage(url, { choice: 'keep' })).status).toBe(200);
      const events = await eventsOf(stack, account.id, ['churn.flow.retained']);
      expect(events.find((e) => e.type === 'churn.flow.retained')?.payload).toMatchObject({
        customerId: customer.id,
        customerEmail: customer.email,
        subscriptionId: null,
      });
    });
  });
});

describe('the card-update page of a Stripe account', () => {
  let stripe: StripeEmulator;
  beforeAll(async () => {
    stripe = await startStripeEmulator();
  });
  afterAll(() => stripe.close());

  const stripeAccount = () =>
    stack.createAccount({}, [
      {
        name: 'stripe',
        kind: 'stripe',
        test: false,
        credentials: { secretKey: stripe.secretKey, apiBase: stripe.url },
      },
    ]);
  const latestSession = () => stripe.sessions().at(-1)!;

  it("sends the customer to Stripe Checkout for the old card's customer and saves the card entered there; the queued recovery is retried with it", async () => {
    stripe.addCard('pm_old1', { customer: 'cus_page1', answers: [{ decline: 'do_not_honor' }] });
    const { apiKey, account } = await stripeAccount();
    const queued = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: apiKey,
      body: {
        paymentMethodToken: 'pm_old1',
        amount: amount(),
        currency: 'EUR',
        originalDeclineCode: 'processing_error',
      },
    });
    expect(queued.status).toBe(202);
    const transactionId = String(queued.body.transactionId);
    const link = (await cardLink(apiKey, { paymentMethodToken: 'pm_old1', transactionId })).body;
    const url = onServer(stack.baseUrl, link.url);

    const away = await getPage(url);
    expect(away.status).toBe(303);
    const session = latestSession();
    expect(away.headers.get('location')).toBe(session.url);
    expect(session).toMatchObject({
      customer: 'cus_page1',
      // The currency of the recovery the link names.
      currency: 'eur',
      success_url: `${link.url}?session=${session.id}`,
      cancel_url: `${link.url}?cancelled=1`,
    });

    stripe.completeCheckout(session.id, { id: 'pm_new1', brand: 'visa', last4: '4242' });
    const back = await getPage(`${url}?session=${session.id}`);
    expect(back.status).toBe(200);
    expect(back.html).toContain('Visa card ending in 4242');
    const events = await eventsOf(stack, account.id, ['card.updated']);
    expect(events.find((e) => e.type === 'card.updated')?.payload).toMatchObject({
      oldPaymentMethodToken: 'pm_old1',
      newPaymentMethodToken: 'pm_new1',
      eligibleGateways: ['stripe'],
    });
    expect(await stateOnceSucceeded(account.id, transactionId)).toBe('succeeded');
    expect(stripe.intents().filter((i) => i.payment_method === 'pm_new1')).toHaveLength(1);
    // Coming back with the session again (a reload) shows the card saved, and sends nothing more; ten
    // minutes on, the link reads as used.
    const reload = await getPage(`${url}?session=${session.id}`);
    expect(reload.status).toBe(200);
    expect(reload.html).toContain('Visa card ending in 4242');
    expect(
      (await stack.stores.events.list({ accountId: account.id })).filter((e) => e.type === 'card.updated'),
    ).toHaveLength(1);
    offsetMs = 11 * 60_000;
    expect((await getPage(`${url}?session=${session.id}`)).status).toBe(410);
  });

  it('the Checkout session closes with the link: 24 hours on (Stripe’s longest) for a fresh link, 31 minutes (its shortest, nearly) for one about to expire', async () => {
    stripe.addCard('pm_old6', { customer: 'cus_page6', answers: [] });
    const { apiKey } = await stripeAccount();
    const link = (await cardLink(apiKey, { paymentMethodToken: 'pm_old6' })).body;
    const url = onServer(stack.baseUrl, link.url);
    const closesIn = async () => {
      expect((await getPage(url)).status).toBe(303);
      return latestSession().expires_at * 1000 - Date.now();
    };
    expect(Math.abs((await closesIn()) - 24 * hour)).toBeLessThan(2 * 60_000);
    // Ten hours of the link's 72 left: the session closes with it.
    offsetMs = 62 * hour;
    expect(Math.abs((await closesIn()) - 10 * hour)).toBeLessThan(60_000);
    // Five minutes left: as soon as Stripe allows.
    offsetMs = 72 * hour - 5 * 60_000;
    expect(Math.abs((await closesIn()) - 31 * 60_000)).toBeLessThan(60_000);
  });

  /**
   * A card-update link of a Stripe account with ten minutes left, naming a queued recovery on `oldCard`,
   * whose customer is sent to Checkout: the link, its page and the session opened for it.
   */
  async function checkoutOpenedLate(oldCard: string, customer: string) {
    stripe.addCard(oldCard, { customer, answers: [{ decline: 'do_not_honor' }] });
    const { apiKey, account } = await stripeAccount();
    const queued = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: apiKey,
      body: {
        paymentMethodToken: oldCard,
        amount: amount(),
        currency: 'EUR',
        originalDeclineCode: 'processing_error',
      },
    });
    expect(queued.status).toBe(202);
    const transactionId = String(queued.body.transactionId);
    const link = (await cardLink(apiKey, { paymentMethodToken: oldCard, transactionId })).body;
    const url = onServer(stack.baseUrl, link.url);
    offsetMs = 72 * hour - 10 * 60_000;
    expect((await getPage(url)).status).toBe(303);
    return { apiKey, account, transactionId, link, url, session: latestSession() };
  }

  const cardUpdates = async (accountId: string) =>
    (await stack.stores.events.list({ accountId })).filter((e) => e.type === 'card.updated');

  it('a card saved in a Checkout session opened in the link’s last minutes is taken when the customer comes back after the link expired', async () => {
    const { account, transactionId, link, url, session } = await checkoutOpenedLate('pm_late1', 'cus_late1');
    // Stripe keeps the session open 31 minutes, past the link's expiry ten minutes on.
    expect(session.expires_at * 1000 - Date.now()).toBeGreaterThan(30 * 60_000);
    offsetMs += 20 * 60_000;
    stripe.completeCheckout(session.id, { id: 'pm_late1new', brand: 'visa', last4: '4444' });

    const back = await getPage(`${url}?session=${session.id}`);
    expect(back.status).toBe(200);
    expect(back.html).toContain('Visa card ending in 4444');
    const [updated, ...more] = await cardUpdates(account.id);
    expect(more).toEqual([]);
    expect(updated?.payload).toMatchObject({
      oldPaymentMethodToken: 'pm_late1',
      newPaymentMethodToken: 'pm_late1new',
      eligibleGateways: ['stripe'],
    });
    expect(await stateOnceSucceeded(account.id, transactionId)).toBe('succeeded');
    expect(stripe.intents().filter((i) => i.payment_method === 'pm_late1new')).toHaveLength(1);
    // A reload shows the card saved and sends nothing more; the link is used once.
    const reload = await getPage(`${url}?session=${session.id}`);
    expect(reload.status).toBe(200);
    expect(reload.html).toContain('Visa card ending in 4444');
    expect(await cardUpdates(account.id)).toHaveLength(1);
    expect((await stack.stores.links.find(sha256(link.token)))?.consumption?.outcome).toMatchObject({
      kind: 'card_updated',
      newPaymentMethodToken: 'pm_late1new',
    });
  });

  it('a Checkout session coming back longer after the link expired than Stripe keeps one open saves nothing (410)', async () => {
    const { account, transactionId, link, url, session } = await checkoutOpenedLate('pm_late2', 'cus_late2');
    offsetMs += 50 * 60_000;
    stripe.completeCheckout(session.id, { id: 'pm_late2new', brand: 'visa', last4: '5555' });

    const back = await getPage(`${url}?session=${session.id}`);
    expect(back.status).toBe(410);
    expect(back.html).toContain('This link has expired');
    expect(await cardUpdates(account.id)).toEqual([]);
    expect((await stack.stores.links.find(sha256(link.token)))?.consumption).toBeNull();
    expect(stripe.intents().filter((i) => i.payment_method === 'pm_late2new')).toEqual([]);
    expect((await stack.stores.recoveries.find(account.id, transactionId))?.paymentMethodToken).toBe(
      'pm_late2',
    );
  });

  it('an expired link of a Stripe account stays expired without a session of its own finished in Checkout: a visit, a posted card, another link’s session, an unfinished one (410)', async () => {
    const late = await checkoutOpenedLate('pm_late3', 'cus_late3');
    const other = (await cardLink(late.apiKey, { paymentMethodToken: 'pm_late3' })).body;
    expect((await getPage(onServer(stack.baseUrl, other.url))).status).toBe(303);
    const otherSession = latestSession();
    stripe.completeCheckout(otherSession.id, { id: 'pm_late3other', brand: 'visa', last4: '6666' });
    offsetMs += 20 * 60_000;
    const opened = stripe.sessions().length;

    const visit = await getPage(late.url);
    expect(visit.status).toBe(410);
    expect(visit.html).toContain('This link has expired');
    expect(stripe.sessions()).toHaveLength(opened);
    expect((await postForm(late.url, { _form: 'x', ...goodCard })).status).toBe(410);
    for (const query of [`?session=${otherSession.id}`, `?session=${late.session.id}`, '?cancelled=1'])
      expect({ query, status: (await getPage(late.url + query)).status }).toEqual({ query, status: 410 });
    expect(await cardUpdates(late.account.id)).toEqual([]);
    expect((await stack.stores.links.find(sha256(late.link.token)))?.consumption).toBeNull();
  });

  it("a link naming no recovery opens Checkout in the currency of a recovery under way on the old card, else of the account's latest recovery; USD only for an account without any", async () => {
    stripe.addCard('pm_old4', { customer: 'cus_page4', answers: [{ decline: 'do_not_honor' }] });
    stripe.addCard('pm_old5', { customer: 'cus_page5', answers: [] });
    const { apiKey } = await stripeAccount();
    const queued = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: apiKey,
      body: {
        paymentMethodToken: 'pm_old4',
        amount: amount(),
        currency: 'JPY',
        originalDeclineCode: 'processing_error',
      },
    });
    expect(queued.status).toBe(202);
    const checkoutCurrency = async (key: string, paymentMethodToken: string) => {
      const link = (await cardLink(key, { paymentMethodToken })).body;
      expect((await getPage(onServer(stack.baseUrl, link.url))).status).toBe(303);
      return latestSession().currency;
    };
    expect(await checkoutCurrency(apiKey, 'pm_old4')).toBe('jpy');
    expect(await checkoutCurrency(apiKey, 'pm_old5')).toBe('jpy');
    expect(await checkoutCurrency((await stripeAccount()).apiKey, 'pm_old5')).toBe('usd');
  });

  it('a session not finished, opened for another link or left early saves nothing, and the link stays usable', async () => {
    stripe.addCard('pm_old2', { customer: 'cus_page2', answers: ['approve'] });
    const { apiKey, account } = await stripeAccount();
    const urlA = onServer(
      stack.baseUrl,
      (await cardLink(apiKey, { paymentMethodToken: 'pm_old2' })).body.url,
    );
    const urlB = onServer(
      stack.baseUrl,
      (await cardLink(apiKey, { paymentMethodToken: 'pm_old2' })).body.url,
    );
    expect((await getPage(urlA)).status).toBe(303);
    const sessionA = latestSession();
    expect((await getPage(urlB)).status).toBe(303);
    const sessionB = latestSession();
    stripe.completeCheckout(sessionB.id, { id: 'pm_other', brand: 'visa', last4: '1111' });

    for (const query of [`?session=${sessionB.id}`, `?session=${sessionA.id}`, '?session=cs_test_unknown']) {
      const page = await getPage(urlA + query);
      expect(page.status).toBe(200);
      expect(page.html).toContain('The secure card form was not completed.');
    }
    const left = await getPage(`${urlA}?cancelled=1`);
    expect(left.html).toContain('You left the secure card form');
    expect((await getPage(urlA)).status).toBe(303);
    const events = await stack.stores.events.list({ accountId: account.id });
    expect(events.filter((e) => e.type === 'card.updated')).toEqual([]);
  });

  it('a card posted to the page of a Stripe account is refused with 501, and the link stays unused', async () => {
    stripe.addCard('pm_old3', { customer: 'cus_page3', answers: ['approve'] });
    const { apiKey } = await stripeAccount();
    const url = onServer(stack.baseUrl, (await cardLink(apiKey, { paymentMethodToken: 'pm_old3' })).body.url);
    const posted = await postForm(url, { _form: 'x', ...goodCard });
    expect(posted.status).toBe(501);
    expect(posted.html).toContain('not available');
    expect((await getPage(url)).status).toBe(303);
  });

  it.each([
    [
      'Braintree',
      'braintree',
      {
        merchantId: 'acme',
        publicKey: 'pub',
        privateKey: 'priv',
        environment: 'sandbox',
        merchantAccounts: 'USD:acme_usd',
      },
      'card1|customer1',
    ],
    ['Adyen', 'adyen', { apiKey: 'AQEkey', environment: 'test' }, 'AcmeECOM|stored1|shopper1'],
  ] as const)(
    'the page of a %s account (whose card form Recoup does not embed) is 501, and the link stays unused',
    async (_, kind, credentials, paymentMethodToken) => {
      const { apiKey } = await stack.createAccount({}, [{ name: kind, kind, test: false, credentials }]);
      const link = await cardLink(apiKey, { paymentMethodToken });
      expect(link.status).toBe(200);
      const url = onServer(stack.baseUrl, link.body.url);
      for (const page of [await getPage(url), await postForm(url, { _form: 'x', ...goodCard })]) {
        expect(page.status).toBe(501);
        expect(page.html).toContain('not available');
      }
      expect((await getPage(url)).status).toBe(501);
    },
  );
});

describe("the merchant's own card form, for gateways whose form the page cannot show", () => {
  let braintree: BraintreeEmulator;
  beforeAll(async () => {
    braintree = await startBraintreeEmulator();
  });
  afterAll(() => braintree.close());

  const cardFormUrl = 'https://acme.example/billing/card?from=recoup';
  const braintreeAccount = (settings: Record<string, unknown> = { cardFormUrl }) =>
    stack.createAccount(settings, [
      { name: 'braintree', kind: 'braintree', test: false, credentials: braintree.credentials },
    ]);
  const complete = (key: string, body: Record<string, unknown>) =>
    call(stack.baseUrl, 'POST', '/api/recovery/update-card/complete', { key, body });

  it("sends the customer to the merchant's form with the link; the merchant completes it and the queued recovery is retried with the new card", async () => {
    braintree.addPaymentMethod('bt_old', { customerId: 'bt_cust', answers: [{ decline: '2001' }] });
    braintree.addPaymentMethod('bt_new', { customerId: 'bt_cust', answers: ['approve'] });
    const { apiKey, account } = await braintreeAccount();
    const queued = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: apiKey,
      body: {
        paymentMethodToken: 'bt_old|bt_cust',
        amount: amount(),
        currency: 'USD',
        originalDeclineCode: 'processing_error',
      },
    });
    expect(queued.status).toBe(202);
    const transactionId = String(queued.body.transactionId);
    const link = (await cardLink(apiKey, { paymentMethodToken: 'bt_old|bt_cust', transactionId })).body;

    const away = await getPage(onServer(stack.baseUrl, link.url));
    expect(away.status).toBe(303);
    const location = new URL(away.headers.get('location') ?? '');
    expect(`${location.origin}${location.pathname}`).toBe('https://acme.example/billing/card');
    expect(location.searchParams.get('from')).toBe('recoup');
    expect(location.searchParams.get('recoup_link')).toBe(link.token);

    const done = await complete(apiKey, { token: link.token, newPaymentMethodToken: 'bt_new|bt_cust' });
    expect(done.status).toBe(200);
    expect(done.body).toEqual({
      cardUpdated: true,
      oldPaymentMethodToken: 'bt_old|bt_cust',
      newPaymentMethodToken: 'bt_new|bt_cust',
      eligibleGateways: ['braintree'],
    });
    const events = await eventsOf(stack, account.id, ['card.updated']);
    expect(events.find((e) => e.type === 'card.updated')?.payload).toMatchObject({
      oldPaymentMethodToken: 'bt_old|bt_cust',
      newPaymentMethodToken: 'bt_new|bt_cust',
      paymentMethodType: 'card',
      eligibleGateways: ['braintree'],
    });
    expect(await stateOnceSucceeded(account.id, transactionId)).toBe('succeeded');
    expect(braintree.transactions().filter((t) => t.paymentMethodToken === 'bt_new')).toHaveLength(1);
    // Used: the page says so, and so does a completion with another card; the same completion sent again
    // (its answer lost) gets the same answer, and changes nothing.
    expect((await getPage(onServer(stack.baseUrl, link.url))).status).toBe(410);
    expect(
      await complete(apiKey, { token: link.token, newPaymentMethodToken: 'bt_new|bt_cust' }),
    ).toMatchObject({ status: 200, body: done.body });
    expect(
      await complete(apiKey, { token: link.token, newPaymentMethodToken: 'bt_other|bt_cust' }),
    ).toMatchObject({
      status: 410,
      body: { error: 'Link used' },
    });
    const updates = await stack.stores.events.list({ accountId: account.id });
    expect(updates.filter((e) => e.type === 'card.updated')).toHaveLength(1);
  });

  it("a wallet saved in the merchant's form is reported as such", async () => {
    const { apiKey, account } = await braintreeAccount();
    const link = (await cardLink(apiKey, { paymentMethodToken: 'bt_a|bt_c' })).body;
    const done = await complete(apiKey, {
      token: link.token,
      newPaymentMethodToken: 'paypal_1|bt_c',
      paymentMethodType: 'paypal',
    });
    expect(done.status).toBe(200);
    const events = await eventsOf(stack, account.id, ['card.updated']);
    expect(events.find((e) => e.type === 'card.updated')?.payload).toMatchObject({
      paymentMethodType: 'paypal',
    });
  });

  it('refuses what cannot complete a link, and leaves the link usable', async () => {
    const { apiKey } = await braintreeAccount();
    const other = await braintreeAccount();
    const link = (await cardLink(apiKey, { paymentMethodToken: 'bt_b|bt_c' })).body;
    // A token none of the account's gateways takes (a Stripe one on a Braintree account).
    expect(await complete(apiKey, { token: link.token, newPaymentMethodToken: 'pm_123' })).toMatchObject({
      status: 400,
      body: { details: { newPaymentMethodToken: [expect.stringMatching(/gateways can charge/)] } },
    });
    // Another account's key, an unknown token, a malformed body.
    expect((await complete(other.apiKey, { token: link.token, newPaymentMethodToken: 'x|y' })).status).toBe(
      404,
    );
    expect((await complete(apiKey, { token: 'A'.repeat(43), newPaymentMethodToken: 'x|y' })).status).toBe(
      404,
    );
    expect(
      await complete(apiKey, { token: link.token, newPaymentMethodToken: 'x|y', extra: 1 }),
    ).toMatchObject({
      status: 400,
      body: { details: { extra: expect.any(Array) } },
    });
    expect((await getPage(onServer(stack.baseUrl, link.url))).status).toBe(303);
  });

  it('a completion retried after its answer was lost (the first call consumed the link, then failed) gets the same 200, and its event goes out once; another card gets 410', async () => {
    const { apiKey, account } = await braintreeAccount();
    const link = (await cardLink(apiKey, { paymentMethodToken: 'bt_f|bt_c' })).body;
    const eventId = randomUUID();
    // The process died right after the consumption insert of the first completion: no event yet.
    await stack.stores.links.consume({
      _id: sha256(link.token),
      accountId: account.id,
      at: clock(),
      eventId,
      outcome: { kind: 'card_updated', newPaymentMethodToken: 'bt_g|bt_c', eligibleGateways: ['braintree'] },
      effectsDoneAt: null,
    });
    const again = (newPaymentMethodToken = 'bt_g|bt_c', paymentMethodType = 'card') =>
      complete(apiKey, { token: link.token, newPaymentMethodToken, paymentMethodType });
    const answer = {
      cardUpdated: true,
      oldPaymentMethodToken: 'bt_f|bt_c',
      newPaymentMethodToken: 'bt_g|bt_c',
      eligibleGateways: ['braintree'],
    };
    expect(await again()).toMatchObject({ status: 200, body: answer });
    // Another card, or the same token as another kind of payment method, is another use.
    expect(await again('bt_h|bt_c')).toMatchObject({ status: 410, body: { error: 'Link used' } });
    expect(await again('bt_g|bt_c', 'paypal')).toMatchObject({ status: 410, body: { error: 'Link used' } });
    expect(await stack.stores.events.get(eventId)).toBeNull(); // the first completion may still be running
    offsetMs = 61_000;
    expect(await again()).toMatchObject({ status: 200, body: answer });
    expect(await again()).toMatchObject({ status: 200, body: answer });
    const updates = (await stack.stores.events.list({ accountId: account.id })).filter(
      (e) => e.type === 'card.updated',
    );
    expect(updates.map((e) => e._id)).toEqual([eventId]);
    expect(updates[0]!.payload).toMatchObject({
      oldPaymentMethodToken: 'bt_f|bt_c',
      newPaymentMethodToken: 'bt_g|bt_c',
    });
  });

  it('an expired link cannot be completed (410)', async () => {
    const { apiKey } = await braintreeAccount();
    const link = (await cardLink(apiKey, { paymentMethodToken: 'bt_d|bt_c' })).body;
    offsetMs = 73 * hour;
    expect(await complete(apiKey, { token: link.token, newPaymentMethodToken: 'x|y' })).toMatchObject({
      status: 410,
      body: { error: 'Link expired' },
    });
  });

  it("a PayPal account: the payer approves a new billing agreement in the merchant's flow, and the queued recovery is retried with it", async () => {
    const paypal = await startPayPalEmulator();
    try {
      paypal.addSource('B-1OLD000000000000', [{ refuse: 'INSTRUMENT_DECLINED' }]);
      paypal.addSource('B-2NEW000000000000', ['complete']);
      const { apiKey, account } = await stack.createAccount({ cardFormUrl }, [
        { name: 'paypal', kind: 'paypal', test: false, credentials: paypal.credentials },
      ]);
      const old = 'billing-agreement|B-1OLD000000000000';
      const queued = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
        key: apiKey,
        body: { paymentMethodToken: old, paymentMethodType: 'paypal', amount: amount(), currency: 'USD' },
      });
      expect(queued.status).toBe(202);
      const transactionId = String(queued.body.transactionId);
      const link = (await cardLink(apiKey, { paymentMethodToken: old, transactionId })).body;
      const away = await getPage(onServer(stack.baseUrl, link.url));
      expect(away.status).toBe(303);
      expect(new URL(away.headers.get('location') ?? '').searchParams.get('recoup_link')).toBe(link.token);

      const fresh = 'billing-agreement|B-2NEW000000000000';
      const done = await complete(apiKey, {
        token: link.token,
        newPaymentMethodToken: fresh,
        paymentMethodType: 'paypal',
      });
      expect(done).toMatchObject({ status: 200, body: { eligibleGateways: ['paypal'] } });
      const events = await eventsOf(stack, account.id, ['card.updated']);
      expect(events.find((e) => e.type === 'card.updated')?.payload).toMatchObject({
        newPaymentMethodToken: fresh,
        paymentMethodType: 'paypal',
      });
      expect(await stateOnceSucceeded(account.id, transactionId)).toBe('succeeded');
      expect(paypal.payments().map((p) => p.source)).toEqual(['B-2NEW000000000000']);
    } finally {
      await paypal.close();
    }
  });

  it('a wallet saved in its place is retried only on the gateways that take that wallet', async () => {
    const { apiKey, account } = await stack.createAccount({}, [
      { name: 'test', kind: 'test', test: true, credentials: { wallets: '' } },
      { name: 'test-2', kind: 'test', test: true, credentials: { wallets: 'paypal' } },
    ]);
    const queued = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: apiKey,
      body: { paymentMethodToken: 'tok_visa', amount: amount(), originalDeclineCode: 'insufficient_funds' },
    });
    expect(queued.status).toBe(202);
    const transactionId = String(queued.body.transactionId);
    const link = (await cardLink(apiKey, { paymentMethodToken: 'tok_visa', transactionId })).body;
    // A wallet none of the gateways charges for recurring payments is refused, and the link stays usable.
    expect(
      await complete(apiKey, {
        token: link.token,
        newPaymentMethodToken: 'tok_venmo_wallet',
        paymentMethodType: 'venmo',
      }),
    ).toMatchObject({
      status: 400,
      body: { details: { newPaymentMethodToken: [expect.stringMatching(/venmo token/)] } },
    });
    const cardUpdates = async () =>
      (await stack.stores.events.list({ accountId: account.id })).filter((e) => e.type === 'card.updated');
    expect(await cardUpdates()).toEqual([]);
    const done = await complete(apiKey, {
      token: link.token,
      newPaymentMethodToken: 'tok_paypal_wallet',
      paymentMethodType: 'paypal',
    });
    expect(done).toMatchObject({ status: 200, body: { eligibleGateways: ['test-2'] } });
    expect((await cardUpdates()).map((e) => e.payload)).toMatchObject([{ eligibleGateways: ['test-2'] }]);
    expect(await stateOnceSucceeded(account.id, transactionId)).toBe('succeeded');
    expect(await stack.stores.sandbox.countForToken('test', 'tok_paypal_wallet')).toBe(0);
    expect(await stack.stores.sandbox.countForToken('test-2', 'tok_paypal_wallet')).toBe(1);
  });

  it('without a cardFormUrl the page of such a gateway is 501', async () => {
    const { apiKey } = await braintreeAccount({});
    const link = (await cardLink(apiKey, { paymentMethodToken: 'bt_e|bt_c' })).body;
    expect((await getPage(onServer(stack.baseUrl, link.url))).status).toBe(501);
  });
});
