import { randomUUID } from 'node:crypto';
import type { AttemptInput } from '../../activities/recovery-attempt.js';
import type { PlanOption } from '../../domain/plan.js';

/**
 * A first attempt of a fresh recovery on `option`, as the recovery workflow sends it to the charge activity
 * (a Visa card, 25.00 USD after an insufficient-funds decline, now), with `overrides`.
 */
export function attemptOf(
  accountId: string,
  option: PlanOption,
  overrides: Partial<AttemptInput> = {},
): AttemptInput {
  return {
    accountId,
    transactionId: randomUUID(),
    attemptKey: `${randomUUID()}/1`,
    attemptNo: 1,
    option,
    amount: 2500,
    currency: 'USD',
    paymentMethodType: 'card',
    simulate: null,
    brand: 'visa',
    fromCode: 'insufficient_funds',
    advice: null,
    offsetMinutes: 0,
    now: Date.now(),
    ...overrides,
  };
}
