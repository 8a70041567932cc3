import { createCipheriv, createDecipheriv, createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Key kinds and their fixed prefixes. */
const keyPrefixes = { secret: 'sk_', publishable: 'pk_', signing: 'whsec_' } as const;
export type KeyKind = keyof typeof keyPrefixes;

/** A new random credential: prefix + 32 random bytes, base64url. */
export function generateKey(kind: KeyKind): string {
  return keyPrefixes[kind] + randomBytes(32).toString('base64url');
}

/** A url-safe random token with `bytes` of entropy. */
export function randomToken(bytes = 24): string {
  return randomBytes(bytes).toString('base64url');
}

/** SHA-256 in hex: how API keys and link tokens are kept at rest. */
export function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/**
 * A UUID-shaped id derived from `parts`: the same parts always give the same id (events that must be sent
 * once per fact, such as one warning per card and expiry, are published under it).
 */
export function stableEventId(...parts: string[]): string {
  const hex = sha256(parts.join('\n'));
  return [hex.slice(0, 8), hex.slice(8, 12), hex.slice(12, 16), hex.slice(16, 20), hex.slice(20, 32)].join(
    '-',
  );
}

/** Constant-time string comparison. */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}

/** An AES-256-GCM sealed value, stored as `v1.<iv>.<tag>.<ciphertext>` (base64url parts). */
export type Sealed = string;

/** Encrypts JSON-serialisable data with the master key. */
export function seal(masterKey: Buffer, value: unknown): Sealed {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', masterKey, iv);
  const body = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
  return ['v1', iv, cipher.getAuthTag(), body]
    .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
    .join('.');
}

/** Decrypts a value sealed by `seal`; throws if it was tampered with or the key is wrong. */
export function unseal<T>(masterKey: Buffer, sealed: Sealed): T {
  const [version, iv, tag, body] = sealed.split('.');
  if (version !== 'v1' || !iv || !tag || body === undefined) throw new Error('Unrecognised sealed value');
  const decipher = createDecipheriv('aes-256-gcm', masterKey, Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  const plain = Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]);
  return JSON.parse(plain.toString('utf8')) as T;
}

/** Identifies one card of one account across recoveries without storing the token in keys. */
export function cardKeyOf(accountId: string, paymentMethodToken: string): string {
  return `${accountId}:${sha256(paymentMethodToken).slice(0, 32)}`;
}
