import { describe, expect, it } from 'vitest';
import { parseGateways } from '../cli/gateway-spec.js';
import { UsageError } from '../cli/errors.js';
import { mergePatch } from '../domain/merge-patch.js';

describe('mergePatch (JSON merge patch, RFC 7396)', () => {
  it.each([
    ['merges nested objects key by key', { a: { b: 1, c: 2 } }, { a: { b: 3 } }, { a: { b: 3, c: 2 } }],
    ['removes a key given as null', { a: 1, b: 2 }, { a: null }, { b: 2 }],
    ['replaces arrays whole', { a: [1, 2] }, { a: [3] }, { a: [3] }],
    ['adds new keys', { a: 1 }, { b: { c: true } }, { a: 1, b: { c: true } }],
    ['replaces a scalar with an object', { a: 1 }, { a: { b: 1 } }, { a: { b: 1 } }],
  ])('%s', (_name, target, patch, expected) => {
    expect(mergePatch(target, patch)).toEqual(expected);
  });

  it('leaves the target untouched', () => {
    const target = { a: { b: 1 } };
    mergePatch(target, { a: { b: 2 } });
    expect(target).toEqual({ a: { b: 1 } });
  });
});

describe('parseGateways (--gateway and --backup-gateway)', () => {
  it('makes `test` a sandbox primary and names backups after their kind, numbering repeats', () => {
    expect(
      parseGateways('test', ['stripe:{"secretKey":"a"}', 'stripe:{"secretKey":"b"}']).map(
        ({ name, kind, test }) => ({
          name,
          kind,
          test,
        }),
      ),
    ).toEqual([
      { name: 'test', kind: 'test', test: true },
      { name: 'stripe', kind: 'stripe', test: false },
      { name: 'stripe-2', kind: 'stripe', test: false },
    ]);
  });

  it('keeps the credentials given as JSON', () => {
    expect(parseGateways('adyen:{"apiKey":"k","merchantAccount":"M"}', [])[0]?.credentials).toEqual({
      apiKey: 'k',
      merchantAccount: 'M',
    });
  });

  it.each([
    ['an unknown kind', 'square:{}', [], /unknown gateway kind "square"/],
    ['a real gateway without credentials', 'stripe', [], /needs credentials/],
    ['credentials that are not JSON', 'stripe:{nope', [], /must be valid JSON/],
    ['credentials that are not strings', 'stripe:{"a":1}', [], /JSON object of strings/],
    ['more than two backups', 'test', ['test', 'test', 'test'], /at most two backups/],
  ])('refuses %s as a usage error', (_name, primary, backups, message) => {
    expect(() => parseGateways(primary, backups)).toThrow(UsageError);
    expect(() => parseGateways(primary, backups)).toThrow(message);
  });
});
