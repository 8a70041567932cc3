import { randomBytes } from 'node:crypto';
import { request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createApp } from '../api/app.js';
import { createLogger } from '../runtime/logger.js';
import { createStores } from '../store/index.js';
import { connectMongo } from '../store/mongo.js';
import { call, startStack, type Stack } from './support/stack.js';

let stack: Stack;
let keys: { apiKey: string; publishableKey: string; accountId: string };

beforeAll(async () => {
  stack = await startStack({ worker: false });
  const created = await stack.createAccount();
  keys = { apiKey: created.apiKey, publishableKey: created.publishableKey, accountId: created.account.id };
});
afterAll(() => stack.close());

describe('health', () => {
  it('answers 200 with both dependencies checked, without a key', async () => {
    const res = await call(stack.baseUrl, 'GET', '/api/health');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'ok', checks: { mongo: 'ok', temporal: 'ok' } });
    expect(res.body.version).toMatch(/^\d+\.\d+\.\d+/);
  });

  // Temporal down is checked where an app with an unreachable Temporal is built (recovery-start-failure).
  it('answers 503 degraded with mongo down when MongoDB cannot be reached', () =>
    withClosedMongo(async (url) => {
      const res = await call(url, 'GET', '/api/health');
      expect(res.status).toBe(503);
      expect(res.body).toEqual({
        status: 'degraded',
        version: expect.any(String),
        checks: { mongo: 'down', temporal: 'ok' },
      });
    }));
});

describe('errors', () => {
  it('answers an unknown route with a JSON 404 and a request id', async () => {
    const res = await call(stack.baseUrl, 'GET', '/api/nope', { key: keys.apiKey });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'Not found' });
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers a method no route has with a JSON 405 on a known path and 404 elsewhere, never a 5xx', async () => {
    const send = (method: string, path: string) =>
      new Promise<{ status: number; body: unknown; allow?: string }>((resolve, reject) => {
        const req = request(`${stack.baseUrl}${path}`, { method }, (res) => {
          let text = '';
          res.on('data', (chunk: Buffer) => (text += chunk.toString()));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              body: JSON.parse(text),
              ...(res.headers.allow ? { allow: res.headers.allow } : {}),
            }),
          );
        });
        req.on('error', reject).end();
      });
    // A 405 names the methods the path has (RFC 9110).
    for (const method of ['TRACE', 'PROPFIND', 'PUT', 'PATCH', 'DELETE'])
      expect(await send(method, '/api/health'), method).toEqual({
        status: 405,
        body: { error: 'Method Not Allowed' },
        allow: 'HEAD, GET',
      });
    expect(await send('GET', '/api/recovery/execute')).toMatchObject({ status: 405, allow: 'POST' });
    for (const method of ['TRACE', 'PROPFIND'])
      expect(await send(method, '/api/nope'), method).toEqual({ status: 404, body: { error: 'Not found' } });
  });

  it('echoes a sane caller X-Request-Id', async () => {
    const res = await call(stack.baseUrl, 'GET', '/api/health', { headers: { 'X-Request-Id': 'abc-123' } });
    expect(res.headers.get('x-request-id')).toBe('abc-123');
  });
});

/** What streaming a long chunked body came to: the answer, and how far the body had got when it came. */
interface Streamed {
  status: number;
  body: unknown;
  /** Body bytes the client had handed to its socket when the answer came (null: no answer). */
  sentWhenAnswered: number | null;
  /** Body bytes the client had handed to its socket when the connection closed. */
  sentWhenClosed: number;
  /** Whether the client had sent the whole body (a server that reads to the end answers only then). */
  sentAll: boolean;
}

/**
 * Sends `total` body bytes in 64 KiB chunks with chunked transfer encoding (no Content-Length), a few
 * milliseconds apart, until the server answers and closes the connection or the whole body is sent.
 */
function streamLongBody(
  method: string,
  path: string,
  headers: Record<string, string>,
  total: number,
): Promise<Streamed> {
  const chunk = Buffer.alloc(64 * 1024, ' ');
  return new Promise((resolve, reject) => {
    let sent = 0;
    let sentWhenAnswered: number | null = null;
    let closed = false;
    let sentWhenClosed = 0;
    let sentAll = false;
    let answer: Pick<Streamed, 'status' | 'body'> | null = null;
    const req = request(`${stack.baseUrl}${path}`, {
      method,
      headers: { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked', ...headers },
    });
    const done = () =>
      answer
        ? resolve({ ...answer, sentWhenAnswered, sentWhenClosed, sentAll })
        : reject(new Error('no answer'));
    req.on('response', (res) => {
      sentWhenAnswered = sent;
      let text = '';
      res.on('data', (b: Buffer) => (text += b.toString()));
      res.on('end', () => {
        answer = { status: res.statusCode ?? 0, body: JSON.parse(text) };
      });
    });
    // The server closing the connection while the body is still coming fails the client's writes.
    req.on('error', () => undefined);
    req.on('socket', (socket) =>
      socket.on('close', () => {
        closed = true;
        sentWhenClosed = sent;
        setTimeout(done, 50);
      }),
    );
    void (async () => {
      while (sent < total && !closed) {
        const written = await new Promise<boolean>((ok) => req.write(chunk, (error) => ok(!error)));
        if (!written) return;
        sent += chunk.length;
        await new Promise((r) => setTimeout(r, 5));
      }
      if (!closed) {
        sentAll = true;
        req.end();
      }
    })();
  });
}

describe('a body past its limit, streamed without Content-Length', () => {
  const total = 32 * 1024 * 1024;
  it.each([
    ['POSTed to an unknown path', 'POST', '/api/nope', {}, 404, { error: 'Not found' }],
    [
      'POSTed to a route without a key',
      'POST',
      '/api/recovery/execute',
      {},
      401,
      { error: 'Missing or invalid API key' },
    ],
    [
      'POSTed to a route with its key',
      'POST',
      '/api/recovery/stop',
      'key',
      413,
      { error: 'Request body too large (limit 64 KiB)' },
    ],
    // A GET or a DELETE may carry a body too: no route reads it, and Node would read it all after the answer.
    ['sent with a GET to an unknown path', 'GET', '/api/nope', {}, 404, { error: 'Not found' }],
    [
      'sent with a DELETE to a route that takes none',
      'DELETE',
      '/api/recovery/execute',
      {},
      405,
      { error: 'Method Not Allowed' },
    ],
  ] as const)(
    '%s is answered and the connection closed long before it all arrives',
    async (_, method, path, headers, status, body) => {
      const res = await streamLongBody(
        method,
        path,
        headers === 'key' ? { 'X-API-KEY': keys.apiKey } : headers,
        total,
      );
      expect(res).toMatchObject({ status, body, sentAll: false });
      // A server that stops reading holds the client to what the sockets' buffers take (a few MiB here),
      // however slow its answer; one that reads on takes all 32 MiB.
      expect(res.sentWhenAnswered).toBeLessThan(8 * 1024 * 1024);
      expect(res.sentWhenClosed).toBeLessThan(8 * 1024 * 1024);
    },
  );
});

describe('openapi', () => {
  it('serves an OpenAPI 3.1 document, version 1.0.0, listing the health route', async () => {
    const res = await call<{ openapi: string; info: { version: string }; paths: Record<string, unknown> }>(
      stack.baseUrl,
      'GET',
      '/api/openapi.json',
    );
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    expect(res.body.info.version).toBe('1.0.0');
    expect(res.body.paths).toHaveProperty('/api/health');
  });

  // OpenAPI 3.1 resolves a `#/…` reference against the document's root, wherever it appears.
  it('has every $ref resolve against the document root, each named schema given once', async () => {
    const res = await call(stack.baseUrl, 'GET', '/api/openapi.json');
    const refs: string[] = [];
    const collect = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(collect);
      else if (node !== null && typeof node === 'object')
        for (const [key, value] of Object.entries(node))
          if (key === '$ref' && typeof value === 'string') refs.push(value);
          else collect(value);
    };
    collect(res.body);
    expect(refs.length).toBeGreaterThan(100);
    const resolve = (ref: string): unknown =>
      ref.startsWith('#/')
        ? ref
            .slice(2)
            .split('/')
            .map((s) => decodeURIComponent(s).replaceAll('~1', '/').replaceAll('~0', '~'))
            .reduce<unknown>(
              (at, key) =>
                at !== null && typeof at === 'object' && Object.hasOwn(at, key)
                  ? (at as Record<string, unknown>)[key]
                  : undefined,
              res.body,
            )
        : undefined;
    expect([...new Set(refs)].filter((ref) => resolve(ref) === undefined)).toEqual([]);
    expect(JSON.stringify(res.body)).not.toContain('"$defs"');
  });

  it.each([
    ['/api/recovery/stop', '64 KiB'],
    ['/api/gateways/adyen/webhook/{clientId}', '1 MiB'],
    ['/api/connectors/{platform}/webhook/{clientId}', '1 MiB'],
  ])('declares the 413 of POST %s with the limit its body is read with (%s)', async (path, limit) => {
    type Paths = Record<string, { post?: { responses: Record<string, { description: string }> } }>;
    const res = await call<{ paths: Paths }>(stack.baseUrl, 'GET', '/api/openapi.json');
    expect(res.body.paths[path]?.post?.responses['413']?.description).toBe(
      `Request body too large (${limit})`,
    );
  });

  it.each([
    ['get', '/api/recovery/status/{transactionId}'],
    ['get', '/api/recovery/status'],
    ['post', '/api/recovery/stop'],
    ['post', '/api/recovery/update-card/complete'],
    ['post', '/api/predict/outcome'],
    ['get', '/api/events/{eventId}'],
    ['post', '/api/events/{eventId}/resend'],
  ])('declares the 404 of %s %s with the error body every 4xx shares', async (method, path) => {
    type Operation = { responses: Record<string, { content?: Record<string, { schema: unknown }> }> };
    const res = await call<{
      paths: Record<string, Record<string, Operation>>;
      components: { schemas: Record<string, unknown> };
    }>(stack.baseUrl, 'GET', '/api/openapi.json');
    const bodyOf = (status: string) =>
      res.body.paths[path]?.[method]?.responses[status]?.content?.['application/json']?.schema;
    expect(bodyOf('404')).toMatchObject({ $ref: '#/components/schemas/Error' });
    expect(res.body.components.schemas.Error).toMatchObject({
      type: 'object',
      properties: { error: { type: 'string' } },
      required: ['error'],
    });
    expect(bodyOf('404')).toEqual(bodyOf('401'));
  });
});

describe('unexpected failures', () => {
  it('are declared on every operation of the OpenAPI document, with their body', async () => {
    type Operation = { responses: Record<string, { content?: Record<string, { schema: unknown }> }> };
    const res = await call<{ paths: Record<string, Record<string, Operation>> }>(
      stack.baseUrl,
      'GET',
      '/api/openapi.json',
    );
    const operations = Object.values(res.body.paths).flatMap((p) => Object.values(p));
    expect(operations.length).toBeGreaterThan(20);
    for (const op of operations)
      expect(op.responses['500']?.content?.['application/json']?.schema).toMatchObject({
        $ref: '#/components/schemas/InternalError',
      });
  });

  it('answer a bare 500 naming the request id, never the internal error', () =>
    withClosedMongo(async (url) => {
      const res = await call(url, 'GET', '/api/recovery/status/abc', { key: keys.apiKey });
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ error: 'Internal error', requestId: res.headers.get('x-request-id') });
    }));
});

/** Runs `use` against an app of this stack whose MongoDB client is closed, then stops the app. */
async function withClosedMongo(use: (url: string) => Promise<void>): Promise<void> {
  const { client, db } = await connectMongo(`${inject('mongoUri')}t_closed_${Date.now()}`);
  const app = createApp({
    log: createLogger('silent', 'test'),
    stores: createStores(db, randomBytes(32)),
    temporal: stack.temporal,
    queues: stack.queues,
    publicBaseUrl: 'http://127.0.0.1',
    clock: () => new Date(),
    events: stack.events,
  });
  await client.close();
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  try {
    await use(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  } finally {
    await new Promise((r) => server.close(r));
  }
}
