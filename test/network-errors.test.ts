import { validateHeaderValue } from 'node:http';
import { describe, expect, it } from 'vitest';
import { headerKeyWithin, keyWithin } from '../activities/gateways/gateway-keys.js';
import { isNetworkError, isUnanswered } from '../activities/gateways/network-error.js';
import { sha256 } from '../runtime/crypto.js';

/** An error as Node's sockets and HTTP clients raise them: a message and a system code. */
const systemError = (code: string, message = code) => Object.assign(new Error(message), { code });

/** The error Node raises for a header value it cannot carry, before anything is sent. */
function invalidHeaderError(): unknown {
  try {
    validateHeaderValue('Idempotency-Key', 'inv-€-✓');
  } catch (error) {
    return error;
  }
  throw new Error('Node sent a header it cannot carry');
}

describe('isNetworkError: a transport failure after which the gateway may have had the request', () => {
  it.each([
    ['a reset connection', systemError('ECONNRESET')],
    ["Node's socket hang up", systemError('ECONNRESET', 'socket hang up')],
    ['a timeout', systemError('ETIMEDOUT')],
    ['a broken pipe', systemError('EPIPE')],
    ["axios's timeout", systemError('ECONNABORTED', 'timeout of 20000ms exceeded')],
    ["axios's answer cut off", systemError('ERR_BAD_RESPONSE', 'stream has been aborted')],
    [
      "fetch's failure over undici's closed socket",
      new TypeError('fetch failed', { cause: systemError('UND_ERR_SOCKET') }),
    ],
    ["undici's headers timeout", systemError('UND_ERR_HEADERS_TIMEOUT')],
    ['a timeout of ours (AbortSignal.timeout)', new DOMException('The operation timed out', 'TimeoutError')],
  ])('%s is one', (_, error) => {
    expect(isNetworkError(error)).toBe(true);
    expect(isUnanswered(error)).toBe(true);
  });

  it.each([
    ['a refused connection (nothing sent)', systemError('ECONNREFUSED')],
    ['a host that does not resolve', systemError('ENOTFOUND')],
    ['a name server that does not answer', systemError('EAI_AGAIN')],
    ["fetch's refused connection", new TypeError('fetch failed', { cause: systemError('ECONNREFUSED') })],
    ["undici's connect timeout", systemError('UND_ERR_CONNECT_TIMEOUT')],
    ['a certificate the client refuses', systemError('DEPTH_ZERO_SELF_SIGNED_CERT')],
    ['a header Node cannot carry (ERR_INVALID_CHAR, thrown before sending)', invalidHeaderError()],
    ['an error without a code', new Error('boom')],
    ['an API error whose code is the HTTP status', Object.assign(new Error('Not found'), { code: 404 })],
    ['something thrown that is not an error', { code: 'ECONNRESET' }],
  ])('%s is not', (_, error) => {
    expect(isNetworkError(error)).toBe(false);
    expect(isUnanswered(error)).toBe(false);
  });

  it('the header Node refuses is ERR_INVALID_CHAR', () => {
    expect(invalidHeaderError()).toMatchObject({ code: 'ERR_INVALID_CHAR' });
  });
});

describe("isUnanswered: the gateway's own failure or a lost connection leaves the charge unknown", () => {
  it.each([
    [500, true],
    [502, true],
    [503, true],
    [400, false],
    [401, false],
    [422, false],
    [429, false],
    [null, false],
    [undefined, false],
  ])('an answer with status %s: %s', (status, unanswered) => {
    expect(isUnanswered(new Error('refused'), status)).toBe(unanswered);
  });
});

describe('attempt keys a gateway can take', () => {
  it('a key that fits is itself, a longer one its SHA-256 cut to the limit, the same on every try', () => {
    expect(keyWithin('recovery/acct_1/inv-42/1', 64)).toBe('recovery/acct_1/inv-42/1');
    const long = `recovery/acct_1/${'k'.repeat(80)}/1`;
    expect(keyWithin(long, 64)).toBe(sha256(long).slice(0, 64));
    expect(keyWithin(long, 38)).toBe(sha256(long).slice(0, 38));
  });

  it.each([
    ['printable ASCII', 'recovery/acct_1/inv-42/1'],
    ['Latin-1 (sent by Node as it is before)', 'recovery/acct_1/facture-été/1'],
    ['a tab', 'recovery/acct_1/inv\t42/1'],
  ])('a header key of %s that fits is unchanged: an attempt under way keeps its key', (_, key) => {
    expect(headerKeyWithin(key, 128)).toBe(key);
    expect(headerKeyWithin(key, 128)).toBe(keyWithin(key, 128));
    // Node sends it: a gateway may hold an attempt under it already.
    expect(() => validateHeaderValue('Idempotency-Key', key)).not.toThrow();
  });

  it.each([
    ['a euro sign and a check mark', 'recovery/acct_1/inv-€-✓/1'],
    ['a line feed', 'recovery/acct_1/inv\n42/1'],
    ['DEL', 'recovery/acct_1/inv\u007f42/1'],
    ['an emoji', 'recovery/acct_1/🧾/1'],
  ])('a header key holding %s is its SHA-256, which every header carries', (_, key) => {
    const headerKey = headerKeyWithin(key, 64);
    expect(headerKey).toBe(sha256(key).slice(0, 64));
    expect(headerKey).toMatch(/^[0-9a-f]{64}$/);
    expect(() => validateHeaderValue('Idempotency-Key', headerKey)).not.toThrow();
  });

  it('a long header key is hashed as keyWithin hashes it', () => {
    const long = `recovery/acct_1/${'k'.repeat(200)}/1`;
    expect(headerKeyWithin(long, 128)).toBe(keyWithin(long, 128));
  });
});
