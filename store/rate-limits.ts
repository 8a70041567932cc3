import type { Db } from 'mongodb';
import { collections } from './collections.js';
import { sequence, type SequenceDoc } from './sequence.js';

interface SlotDoc extends SequenceDoc {
  bucket: string;
  windowStart: number;
  expiresAt: Date;
}

/** The decision for one request: allowed, or refused with seconds until the window resets. */
export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/**
 * Fixed one-minute windows enforced exactly across any number of API processes: each accepted request
 * claims the next numbered slot of its window by unique insert, and no slot past the limit is ever
 * claimed. Each process remembers the last slot it saw, so a claim usually costs one insert.
 */
export function createRateLimiter(db: Db) {
  const slots = db.collection<SlotDoc>(collections.rateLimits);
  const numbered = sequence(slots, { remember: true });
  return {
    async take(bucket: string, limit: number, now: Date): Promise<RateDecision> {
      const windowStart = Math.floor(now.getTime() / 60_000) * 60_000;
      const retryAfterSeconds = Math.max(1, Math.ceil((windowStart + 60_000 - now.getTime()) / 1000));
      const prefix = `${bucket}:${windowStart}`;
      const slot = await numbered.claim(
        prefix,
        (highest) => highest < limit,
        () => ({ bucket, windowStart, expiresAt: new Date(windowStart + 120_000) }),
      );
      return slot === null ? { allowed: false, retryAfterSeconds } : { allowed: true };
    },

    /** Deletes windows that ended; run periodically (FerretDB has no TTL indexes). */
    async purgeExpired(now: Date): Promise<number> {
      return (await slots.deleteMany({ expiresAt: { $lt: now } })).deletedCount;
    },
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;
