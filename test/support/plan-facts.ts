import type { PlanFacts, PlanOption } from '../../domain/plan.js';
import { emptyStats } from '../../domain/success-model.js';

const day = 86_400_000;

/** The primary card through the main gateway: the one option of a plain recovery. */
export const primaryOption: PlanOption = { gateway: 'main', token: 'tok_a', role: 'primary' };

/**
 * What the planner sees for a card that failed with `code` at `now` (the merchant's own attempt) and has
 * not been retried yet: the default settings, a 21-day window, no learned statistics.
 */
export function planFacts(now: number, code: string, overrides: Partial<PlanFacts> = {}): PlanFacts {
  return {
    now,
    failedAt: now,
    code,
    options: [primaryOption],
    attempts: [{ at: now, gateway: 'main', token: 'tok_a', code }],
    attemptsLeft: 8,
    horizonEnd: now + 21 * day,
    critical: false,
    offsetMinutes: 0,
    billingCycleDay: null,
    riskSkipThreshold: 85,
    notBefore: {},
    stats: emptyStats(),
    ...overrides,
  };
}
