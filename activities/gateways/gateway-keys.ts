import { sha256 } from '../../runtime/crypto.js';

/**
 * An attempt key a gateway can take as its idempotency key or reference: the key itself when it fits in
 * `max` characters, else its SHA-256 in hex cut to `max` (the same on every try of the attempt).
 */
export function keyWithin(key: string, max: number): string {
  return key.length <= max ? key : sha256(key).slice(0, max);
}

/**
 * A character an HTTP header cannot carry: Node refuses it (`ERR_INVALID_CHAR`, the request never leaves).
 * Anything above Latin-1 (a merchant's `inv-€-✓`) and the control characters but tab.
 */
const notInHeader = /[^\t\x20-\x7e\x80-\xff]/;

/**
 * An attempt key for an HTTP header (an `Idempotency-Key`): `keyWithin`, and hashed the same way also when
 * it holds a character no header carries, so every key a merchant may give reaches the gateway. A key a
 * header could carry before is unchanged, so an attempt under way keeps the key its gateway knows it by.
 */
export function headerKeyWithin(key: string, max: number): string {
  return notInHeader.test(key) ? sha256(key).slice(0, max) : keyWithin(key, max);
}
