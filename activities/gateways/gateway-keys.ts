import { sha256 } from '../../runtime/crypto.js';

/**
 * An attempt key a gateway can take as its idempotency key or reference: the key itself when it fits in
 * `max` characters, else its SHA-256 in hex cut to `max` (the same on every try of the attempt).
 */
export function keyWithin(key: string, max: number): string {
  return key.length <= max ? key : sha256(key).slice(0, max);
}
