/**
 * Seeded randomness for the simulator (never Math.random): a mulberry32 stream for sequential draws and a
 * keyed hash for draws that must not depend on the order they are asked for, so that every strategy meets
 * the same luck on the same payment's n-th attempt.
 */

/** Mixes 32-bit words into one well-spread 32-bit word (murmur3's finaliser over a running hash). */
export function hash32(...words: number[]): number {
  let h = 0x9e3779b9;
  for (const w of words) {
    h = Math.imul(h ^ (w >>> 0), 0x85ebca6b);
    h = (h << 13) | (h >>> 19);
    h = Math.imul(h, 5) + 0xe6546b64;
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A uniform number in [0, 1) determined by its key alone. */
export function keyedUniform(...words: number[]): number {
  return hash32(...words) / 4_294_967_296;
}

/** A sequential stream of uniform numbers in [0, 1): mulberry32. */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = hash32(seed) | 0;
  }

  next(): number {
    this.state = (this.state + 0x6d2b79f5) | 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  }

  /** A standard normal draw (Box–Muller). */
  normal(): number {
    const u = 1 - this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.next());
  }

  /** A key of `weights` drawn in proportion to its weight. */
  pick<K extends string>(weights: Readonly<Record<K, number>>): K {
    return pickWeighted(weights, this.next());
  }
}

/** The key of `weights` that the uniform `u` falls on, in proportion to the weights. */
export function pickWeighted<K extends string>(weights: Readonly<Record<K, number>>, u: number): K {
  const entries = Object.entries(weights) as Array<[K, number]>;
  const total = entries.reduce((s, [, w]) => s + w, 0);
  let x = u * total;
  for (const [key, w] of entries) {
    x -= w;
    if (x < 0) return key;
  }
  const last = entries.findLast(([, w]) => w > 0);
  if (!last) throw new Error('pickWeighted: no positive weight');
  return last[0];
}
