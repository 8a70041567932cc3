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
  it('makes `test` a sandbox gateway named after its kind, numbering repeats', () => {
    expect(
      parseGateways('test', ['test:{"latencyMs":"5"}', 'test']).map(({ name, kind, test }) => ({
        name,
        kind,
        test,
      })),
    ).toEqual([
      { name: 'test', kind: 'test', test: true },
      { name: 'test-2', kind: 'test', test: true },
      { name: 'test-3', kind: 'test', test: true },
    ]);
  });

  it('takes the sandbox settings it knows, and the countries a gateway acquires locally', () => {
    expect(
      parseGateways('test@de,AT:{"latencyMs":"50","wallets":"apple_pay","declineAll":"do_not_honor"}', []),
    ).toEqual([
      {
        name: 'test',
        kind: 'test',
        test: true,
        countries: ['DE', 'AT'],
        credentials: { latencyMs: '50', wallets: 'apple_pay', declineAll: 'do_not_honor' },
      },
    ]);
  });

  it('keeps the credentials given as JSON', () => {
    expect(parseGateways('test:{"declineAll":"insufficient_funds"}', [])[0]?.credentials).toEqual({
      declineAll: 'insufficient_funds',
    });
  });

  it.each([
    ['an unknown kind', 'square:{}', [], /unknown gateway kind "square"/],
    ['credentials its kind does not take', 'paypal:{"clientId":"x"}', [], /paypal credentials: clientSecret/],
    ['credentials that are not JSON', 'test:{nope', [], /must be valid JSON \(not repeated/],
    ['credentials that are not strings', 'test:{"latencyMs":5}', [], /JSON object of strings/],
    ['more than two backups', 'test', ['test', 'test', 'test'], /at most two backups/],
    ['a sandbox latency that is not a number', 'test:{"latencyMs":"abc"}', [], /test credentials: latencyMs/],
    ['a misspelt sandbox setting', 'test:{"declineall":"x"}', [], /test credentials: .*declineall/],
    ['a wallet the sandbox does not know', 'test:{"wallets":"apple_pay,bitcoin"}', [], /wallets: must be/],
    ['a country that is not a country code', 'test@Germany', [], /countries must be 2-letter ISO/],
  ])('refuses %s as a usage error', (_name, primary, backups, message) => {
    expect(() => parseGateways(primary, backups)).toThrow(UsageError);
    expect(() => parseGateways(primary, backups)).toThrow(message);
  });
});
