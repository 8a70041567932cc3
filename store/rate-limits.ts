import type { Db } from 'mongodb';
import { collections } from './collections.js';
import { isDuplicateKey } from './mongo.js';

interface SlotDoc {
  _id: string; // `${bucket}:${windowStart}:${slot}`
  bucket: string;
  windowStart: number;
  expiresAt: Date;
}

/** The decision for one request: allowed, or refused with seconds until the window resets. */
export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/**
 * Fixed one-minute windows enforced exactly across any number of API processes: each accepted request
 * claims a numbered slot whose id is unique, so no more than `limit` inserts can ever succeed in a window.
 * Unique inserts behave the same on MongoDB and FerretDB (whose updates are not atomic).
 */
export function createRateLimiter(db: Db) {
  const slots = db.collection<SlotDoc>(collections.rateLimits);
  return {
    async take(bucket: string, limit: number, now: Date): Promise<RateDecision> {
      const windowStart = Math.floor(now.getTime() / 60_000) * 60_000;
      const retryAfterSeconds = Math.max(1, Math.ceil((windowStart + 60_000 - now.getTime()) / 1000));
      let slot = (await slots.countDocuments({ bucket, windowStart })) + 1;
      while (slot <= limit) {
        try {
          await slots.insertOne({
            _id: `${bucket}:${windowStart}:${slot}`,
            bucket,
            windowStart,
            expiresAt: new Date(windowStart + 120_000),
          });
          return { allowed: true };
        } catch (error) {
          if (!isDuplicateKey(error)) throw error;
          slot += 1;
        }
      }
      return { allowed: false, retryAfterSeconds };
    },

    /** Deletes windows that ended; run periodically (FerretDB has no TTL indexes). */
    async purgeExpired(now: Date): Promise<number> {
      return (await slots.deleteMany({ expiresAt: { $lt: now } })).deletedCount;
    },
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;
