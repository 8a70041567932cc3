import { classifyDecline } from '../../../domain/declines.js';
import type { WorldModel } from '../outcome-model.js';
import { PaymentRun, tokensOf, type PaymentResult } from '../payment-run.js';
import type { Payment } from '../payments.js';

const minute = 60_000;
const day = 1_440 * minute;

/** The fixed-schedule baselines: retry times after the failure, at the failure's clock time. */
export const fixedSchedules = {
  fixed_8_in_14: [1, 2, 3, 5, 7, 9, 11, 14].map((d) => d * day),
  fixed_3_5_7: [3, 5, 7].map((d) => d * day),
  immediate_x3: [20, 40, 60].map((m) => m * minute),
} as const;
export type FixedStrategy = keyof typeof fixedSchedules;

/**
 * A platform's native dunning: the primary card through the primary gateway on a fixed schedule, stopping at
 * success or at a decline it may not retry; an expired card goes to the account updater, as it does in
 * production, and the schedule carries on with the new card.
 */
export function runFixed(
  model: WorldModel,
  payment: Payment,
  seed: number,
  schedule: readonly number[],
): PaymentResult {
  const run = new PaymentRun(model, payment, seed);
  const gateway = model.world.gateways[0]!.name;
  let token = tokensOf(payment).primary;
  const keepGoing = (code: string): boolean => {
    const info = classifyDecline(code);
    if (info.retryable) return true;
    if (info.group !== 'expired') return false;
    const fresh = run.refresh();
    if (fresh) token = fresh;
    return fresh !== null;
  };
  if (!keepGoing(payment.code)) return run.result();
  for (const offset of schedule) {
    const t = payment.failedAt + offset;
    if (t > run.horizonEnd) break;
    const out = run.charge(token, gateway, t);
    if (out.approved || !keepGoing(out.code ?? '')) break;
  }
  return run.result();
}
