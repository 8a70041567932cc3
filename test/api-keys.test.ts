import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startStack, type Stack } from './support/stack.js';

/** decisions.md: the publishable key is good for the paywall status alone; every other route wants the secret key. */
const acceptingPublishableKey = ['GET /api/recovery/paywall-status'];
const refused = { status: 401, body: { error: 'Missing or invalid API key' } };
const letThrough = 'let past the key check';

interface Operation {
  name: string;
  method: string;
  path: string;
}

interface OpenApi {
  paths: Record<string, Record<string, { security?: unknown[] }>>;
}

let stack: Stack;
let keys: { apiKey: string; publishableKey: string };
let keyed: Operation[];

/** Every operation the OpenAPI document says needs a key, path parameters filled with a plausible id. */
function keyedOperations(doc: OpenApi): Operation[] {
  return Object.entries(doc.paths).flatMap(([template, methods]) =>
    Object.entries(methods)
      .filter(([, op]) => op.security?.length !== 0)
      .map(([method]) => ({
        name: `${method.toUpperCase()} ${template}`,
        method: method.toUpperCase(),
        path: template.replace(/\{\w+\}/g, () => randomUUID()),
      })),
  );
}

/** Sends the operation with these headers (any JSON body where it takes one): refused, or let past the key check. */
async function verdict(op: Operation, headers: Record<string, string>): Promise<unknown> {
  const res = await call(stack.baseUrl, op.method, op.path, {
    headers,
    ...(op.method === 'POST' ? { body: {} } : {}),
  });
  return res.status === 401 ? { status: res.status, body: res.body } : letThrough;
}

/** Each keyed operation's verdict on these headers, by operation name. */
async function verdictsOn(headers: Record<string, string>): Promise<Record<string, unknown>> {
  const verdicts: Record<string, unknown> = {};
  for (const op of keyed) verdicts[op.name] = await verdict(op, headers);
  return verdicts;
}

beforeAll(async () => {
  stack = await startStack({ worker: false });
  keys = await stack.createAccount();
  keyed = keyedOperations((await call<OpenApi>(stack.baseUrl, 'GET', '/api/openapi.json')).body);
});
afterAll(() => stack.close());

describe('only the secret key, except where the publishable key is allowed', () => {
  it('covers every keyed operation of the OpenAPI document', () => {
    expect(keyed.length).toBeGreaterThanOrEqual(15);
    expect(keyed.map((op) => op.name)).toEqual(expect.arrayContaining(acceptingPublishableKey));
  });

  it('refuses the publishable key with 401 on every operation but the paywall status', async () => {
    expect(await verdictsOn({ 'X-API-KEY': keys.publishableKey })).toEqual(
      Object.fromEntries(
        keyed.map((op) => [op.name, acceptingPublishableKey.includes(op.name) ? letThrough : refused]),
      ),
    );
  });

  it('refuses the secret key sent as Authorization: Bearer with 401 on every operation', async () => {
    expect(await verdictsOn({ Authorization: `Bearer ${keys.apiKey}` })).toEqual(
      Object.fromEntries(keyed.map((op) => [op.name, refused])),
    );
  });
});
