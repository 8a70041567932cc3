import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../api/app.js';
import { createLogger } from '../runtime/logger.js';
import { formTokenOf, getPage, onServer, postForm } from './support/pages.js';
import { call, startStack, type Stack } from './support/stack.js';

// What the API logs for each request, read from the logger itself: a hosted page's path holds its link's
// token, and whoever reads the logs must not be able to open the page with it.

let stack: Stack;
let server: Server;
let baseUrl: string;
/** Every line the app logged, parsed. */
const lines: Array<Record<string, unknown>> = [];
let raw = '';

beforeAll(async () => {
  stack = await startStack({ worker: false });
  const log = createLogger('info', 'api', {
    write(line: string) {
      raw += line;
      lines.push(JSON.parse(line) as Record<string, unknown>);
    },
  });
  const app = createApp({
    log,
    stores: stack.stores,
    temporal: stack.temporal,
    queues: stack.queues,
    publicBaseUrl: 'http://127.0.0.1',
    clock: () => new Date(),
    events: stack.events,
  });
  server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await stack?.close();
});

/** Mints a link through the API; its page's URL on this app, and its token. */
async function link(path: string, key: string, body: Record<string, unknown>) {
  const res = await call<{ url: string; token: string }>(baseUrl, 'POST', path, { key, body });
  expect(res.status).toBe(200);
  return { url: onServer(baseUrl, res.body.url), token: res.body.token };
}

/** The request lines logged for requests with this id. */
const requestLines = (id: string | null) => lines.filter((l) => l.msg === 'request' && l.requestId === id);

describe('the request log', () => {
  it('names the route template of a hosted page, never its token, on GET and POST', async () => {
    const { apiKey } = await stack.createAccount({
      cancelFlow: { enabled: true, offers: [{ type: 'pause', months: 2 }] },
    });
    const card = await link('/api/recovery/update-card/generate', apiKey, { paymentMethodToken: 'tok_visa' });
    const cancel = await link('/api/cancel-flow/generate', apiKey, { customerId: 'cus_log' });

    const cardPage = await getPage(card.url);
    const cardSaved = await postForm(card.url, {
      _form: formTokenOf(cardPage.html),
      number: '4242 4242 4242 4242',
      expiry: '12/34',
      cvc: '123',
    });
    const cancelPage = await getPage(cancel.url);
    const cancelled = await postForm(cancel.url, { _form: formTokenOf(cancelPage.html), choice: 'cancel' });
    expect([cardPage.status, cardSaved.status, cancelPage.status, cancelled.status]).toEqual([
      200, 200, 200, 200,
    ]);

    expect(raw).not.toContain(card.token);
    expect(raw).not.toContain(cancel.token);
    for (const [res, method, route, status] of [
      [cardPage, 'GET', '/update-card/:token', 200],
      [cardSaved, 'POST', '/update-card/:token', 200],
      [cancelPage, 'GET', '/cancel-flow/:token', 200],
      [cancelled, 'POST', '/cancel-flow/:token', 200],
    ] as const)
      expect(requestLines(res.headers.get('x-request-id'))).toEqual([
        expect.objectContaining({ level: 30, method, route, status, ms: expect.any(Number) }),
      ]);
  });

  it('an unknown token is logged by its route, a request no route took (a mangled link) by no path at all', async () => {
    const { apiKey } = await stack.createAccount();
    const live = await link('/api/recovery/update-card/generate', apiKey, { paymentMethodToken: 'tok_visa' });
    const unknown = 'u'.repeat(43);

    const unknownPage = await getPage(`${baseUrl}/update-card/${unknown}`);
    const unknownPost = await postForm(`${baseUrl}/cancel-flow/${unknown}`, { choice: 'cancel' });
    // A link mangled on its way to the customer still carries a token that opens the real page.
    const mistyped = await getPage(`${baseUrl}/update_card/${live.token}`);
    const wrongMethod = await fetch(live.url, { method: 'PUT' });
    expect([unknownPage.status, unknownPost.status, mistyped.status, wrongMethod.status]).toEqual([
      404, 404, 404, 405,
    ]);

    expect(raw).not.toContain(unknown);
    expect(raw).not.toContain(live.token);
    expect(requestLines(unknownPage.headers.get('x-request-id'))).toEqual([
      expect.objectContaining({ method: 'GET', route: '/update-card/:token', status: 404 }),
    ]);
    expect(requestLines(unknownPost.headers.get('x-request-id'))).toEqual([
      expect.objectContaining({ method: 'POST', route: '/cancel-flow/:token', status: 404 }),
    ]);
    for (const [res, method, status] of [
      [mistyped, 'GET', 404],
      [wrongMethod, 'PUT', 405],
    ] as const) {
      const [line, ...more] = requestLines(res.headers.get('x-request-id'));
      expect(more).toEqual([]);
      expect(line).toMatchObject({ method, route: 'unmatched', status });
      expect(line).not.toHaveProperty('path');
    }
    expect(lines.filter((l) => l.msg === 'request').every((l) => !('path' in l))).toBe(true);
  });
});
