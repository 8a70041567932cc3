import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { linkUseWorkflowId } from '../domain/links.js';
import { sha256 } from '../runtime/crypto.js';
import { formTokenOf, getPage, postForm, type PageResponse } from './support/pages.js';
import { call, startStack, type Stack } from './support/stack.js';

// The same submission of a hosted form sent twice (a second click while the first was saving, a reload of
// the result): the second is shown the result of the first, never "already used", and nothing happens
// twice. A different use of a used link still gets 410. And a use whose effects fail once it is recorded
// is shown as done: its follow-up workflow finishes it.

/** The stack's clock: real time plus an offset the window tests move forward. */
let offsetMs = 0;
const clock = () => new Date(Date.now() + offsetMs);
let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ clock });
});
afterAll(() => stack.close());
beforeEach(() => {
  offsetMs = 0;
});

const offers = [{ type: 'pause', months: 2 }];
const goodCard = { number: '4242 4242 4242 4242', expiry: '12/34', cvc: '123' };

/** A fresh link's page on this server, and its hash. */
async function link(key: string, path: string, body: Record<string, unknown>) {
  const res = await call<{ url: string; token: string }>(stack.baseUrl, 'POST', path, { key, body });
  expect(res.status).toBe(200);
  return { url: stack.baseUrl + new URL(res.body.url).pathname, hash: sha256(res.body.token) };
}

const eventsOfType = async (accountId: string, prefix: string) =>
  (await stack.stores.events.list({ accountId })).filter((e) => e.type.startsWith(prefix));

const headingOf = (page: PageResponse) => /<h1>([^<]*)<\/h1>/.exec(page.html)?.[1];

describe('the cancel flow', () => {
  it('the same choice sent twice is confirmed twice, with one churn event; another choice, or the same one after ten minutes, is 410', async () => {
    const { apiKey, account } = await stack.createAccount({ cancelFlow: { enabled: true, offers } });
    const { url } = await link(apiKey, '/api/cancel-flow/generate', { customerId: 'cus_twice' });
    const form = formTokenOf((await getPage(url)).html);

    const first = await postForm(url, { _form: form, choice: 'cancel' });
    const second = await postForm(url, { _form: form, choice: 'cancel' });
    for (const answer of [first, second]) {
      expect(answer.status).toBe(200);
      expect(headingOf(answer)).toBe('Your cancellation has been sent');
    }
    expect((await eventsOfType(account.id, 'churn.flow.')).map((e) => e.type)).toEqual([
      'churn.flow.cancelled',
    ]);

    const other = await postForm(url, { _form: form, choice: 'keep' });
    expect(other.status).toBe(410);
    expect(other.html).toContain('This link has already been used');
    offsetMs = 11 * 60_000;
    expect((await postForm(url, { _form: form, choice: 'cancel' })).status).toBe(410);
    expect(await eventsOfType(account.id, 'churn.flow.')).toHaveLength(1);
  });

  it("with a returnUrl: a confirmation that goes on to it at once, never a redirect checked against the form's CSP", async () => {
    const { apiKey } = await stack.createAccount({ cancelFlow: { enabled: true, offers } });
    const returnUrl = 'https://shop.example.com/billing?done=1';
    const { url } = await link(apiKey, '/api/cancel-flow/generate', { customerId: 'cus_back', returnUrl });
    const page = await getPage(url);
    const offer = /value="(offer:0:[0-9a-f]{12})"/.exec(page.html)?.[1] ?? '';
    const token = formTokenOf(page.html);
    for (const answer of [
      await postForm(url, { _form: token, choice: offer }),
      await postForm(url, { _form: token, choice: offer }),
    ]) {
      expect(answer.status).toBe(200);
      expect(headingOf(answer)).toBe('Your subscription will be paused');
      expect(answer.html).toContain(
        '<meta http-equiv="refresh" content="0; url=https://shop.example.com/billing?done=1" />',
      );
      expect(answer.html).toContain('href="https://shop.example.com/billing?done=1"');
      expect(answer.headers.get('content-security-policy')).toContain("form-action 'self';");
    }
  });
});

describe('the card form', () => {
  it('the same form sent twice shows the saved card twice, with one card.updated; another form of the link is 410', async () => {
    const { apiKey, account } = await stack.createAccount();
    const { url, hash } = await link(apiKey, '/api/recovery/update-card/generate', {
      paymentMethodToken: 'tok_visa',
    });
    const [formA, formB] = [formTokenOf((await getPage(url)).html), formTokenOf((await getPage(url)).html)];

    const first = await postForm(url, { _form: formA, ...goodCard });
    const second = await postForm(url, { _form: formA, ...goodCard });
    for (const answer of [first, second]) {
      expect(answer.status).toBe(200);
      expect(headingOf(answer)).toBe('Your card has been updated');
      expect(answer.html).toContain('Visa card ending in 4242');
    }
    expect(await eventsOfType(account.id, 'card.updated')).toHaveLength(1);
    expect((await stack.stores.links.find(hash))?.consumption?.outcome).toMatchObject({
      card: { brand: 'visa', last4: '4242' },
    });

    const other = await postForm(url, { _form: formB, ...goodCard });
    expect(other.status).toBe(410);
    expect(await eventsOfType(account.id, 'card.updated')).toHaveLength(1);
  });

  it('a saved card whose card.updated cannot be sent yet is shown as saved; the follow-up workflow is there to send it', async () => {
    const { apiKey, account } = await stack.createAccount();
    const { url, hash } = await link(apiKey, '/api/recovery/update-card/generate', {
      paymentMethodToken: 'tok_visa',
    });
    const form = formTokenOf((await getPage(url)).html);
    const publish = vi.spyOn(stack.events, 'publish').mockRejectedValueOnce(new Error('MongoDB unreachable'));
    let saved: PageResponse;
    try {
      saved = await postForm(url, { _form: form, ...goodCard });
    } finally {
      publish.mockRestore();
    }
    expect(saved.status).toBe(200);
    expect(headingOf(saved)).toBe('Your card has been updated');
    const { consumption } = (await stack.stores.links.find(hash))!;
    expect(consumption).toMatchObject({ effectsDoneAt: null });
    expect(await eventsOfType(account.id, 'card.updated')).toEqual([]);
    const followUp = await stack.temporal.workflow.getHandle(linkUseWorkflowId(hash)).describe();
    expect(followUp.status.name).toBe('RUNNING');

    // A minute on, the use is finished (here by the next visit, as the follow-up workflow would).
    offsetMs = 61_000;
    expect((await getPage(url)).status).toBe(410);
    const sent = await eventsOfType(account.id, 'card.updated');
    expect(sent.map((e) => e._id)).toEqual([consumption!.eventId]);
  });
});
