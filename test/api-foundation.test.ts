import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
});

describe('errors', () => {
  it('answers an unknown route with a JSON 404 and a request id', async () => {
    const res = await call(stack.baseUrl, 'GET', '/api/nope', { key: keys.apiKey });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'Not found' });
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('echoes a sane caller X-Request-Id', async () => {
    const res = await call(stack.baseUrl, 'GET', '/api/health', { headers: { 'X-Request-Id': 'abc-123' } });
    expect(res.headers.get('x-request-id')).toBe('abc-123');
  });
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
});
