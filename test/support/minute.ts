import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Waits, if need be, for the next minute to begin, so that `needMs` of requests all fall in one of the rate
 * limiter's fixed one-minute windows (a window ending midway would let the request past the limit through).
 */
export async function inOneMinuteWindow(needMs = 20_000): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < needMs) await sleep(left + 50);
}
