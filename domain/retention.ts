const day = 86_400_000;

/**
 * Proactive retention thresholds: a customer whose recoveries failed `minFailures` times within
 * `windowMs` is offered the cancel flow, at most once per `windowMs`.
 */
export const proactiveRetention = { minFailures: 3, windowMs: 30 * day } as const;

/** How many of these failure times fall in the window ending at `now`. */
export function recentFailureCount(
  failedAt: Date[],
  now: Date,
  windowMs = proactiveRetention.windowMs,
): number {
  const since = now.getTime() - windowMs;
  return failedAt.filter((at) => at.getTime() > since && at.getTime() <= now.getTime()).length;
}
