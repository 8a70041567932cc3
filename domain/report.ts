import { statusOf, type RecoveryState } from './recovery.js';
import { compareProportions, type Comparison } from './two-proportions.js';

const day = 86_400_000;
/** How long a payment is watched before its outcome counts in the Proof Mode comparison. */
export const observationDays = 30;

/** A recovery as the report reads it. */
export interface ReportedRecovery {
  state: RecoveryState;
  amount: number;
  currency: string;
  customerEmail: string | null;
  createdAt: Date;
  recoveredAt: Date | null;
}

export interface ReportInput {
  from: Date;
  to: Date;
  now: Date;
  /** The account's recoveries whose failure falls in [from, to). */
  recoveries: ReportedRecovery[];
  /** Organic successes (pulse) in [from, to). */
  organicSuccesses: number;
  /** When each customer with a control payment paid on their own (pulse), by email. */
  paidOnTheirOwn: Map<string, Date[]>;
}

/** part ÷ whole to four decimals; null when there is nothing to divide by. */
export const share = (part: number, whole: number) =>
  whole > 0 ? Math.round((part / whole) * 10_000) / 10_000 : null;

/**
 * A control payment (Proof Mode: no attempts) counts as recovered when its customer paid on their own
 * (a pulse with the same email) within the observation window; a treated one when Recoup recovered it in
 * that window. A payment counts once its window has passed or it was recovered.
 */
function proofGroups(input: ReportInput) {
  const treatment = { trials: 0, successes: 0 };
  const control = { trials: 0, successes: 0 };
  for (const r of input.recoveries) {
    const closes = r.createdAt.getTime() + observationDays * day;
    const recovered =
      r.state === 'holdout'
        ? (input.paidOnTheirOwn.get(r.customerEmail ?? '') ?? []).some(
            (t) => t.getTime() >= r.createdAt.getTime() && t.getTime() <= closes,
          )
        : r.state === 'succeeded' && r.recoveredAt !== null && r.recoveredAt.getTime() <= closes;
    if (!recovered && input.now.getTime() < closes) continue;
    const group = r.state === 'holdout' ? control : treatment;
    group.trials += 1;
    if (recovered) group.successes += 1;
  }
  return { treatment, control };
}

/** The summary report: what failed, what Recoup recovered, the organic baseline, lift and Proof Mode. */
export function summaryReport(input: ReportInput) {
  const treated = input.recoveries.filter((r) => r.state !== 'holdout');
  const recovered = treated.filter((r) => r.state === 'succeeded');
  const revenue: Record<string, { failed: number; recovered: number }> = {};
  for (const r of treated) {
    const c = (revenue[r.currency] ??= { failed: 0, recovered: 0 });
    c.failed += r.amount;
    if (r.state === 'succeeded') c.recovered += r.amount;
  }
  const payments = input.organicSuccesses + input.recoveries.length;
  const organicRate = share(input.organicSuccesses, payments);
  const withRecoup = share(input.organicSuccesses + recovered.length, payments);
  const holdouts = input.recoveries.length - treated.length;
  const groups = proofGroups(input);
  const proof: Comparison & { treatment: number; control: number } = {
    treatment: groups.treatment.trials,
    control: groups.control.trials,
    ...compareProportions(groups.treatment, groups.control),
  };
  return {
    from: input.from.toISOString(),
    to: input.to.toISOString(),
    failedPayments: input.recoveries.length,
    recovered: recovered.length,
    inProgress: treated.filter((r) => statusOf(r.state) === 'unknown').length,
    recoveryRate: share(recovered.length, treated.length),
    revenueByCurrency: revenue,
    organicSuccesses: input.organicSuccesses,
    organicSuccessRate: organicRate,
    successRateWithRecoup: withRecoup,
    liftPoints:
      organicRate === null || withRecoup === null
        ? null
        : Math.round((withRecoup - organicRate) * 10_000) / 100,
    proofMode: holdouts > 0 ? proof : null,
  };
}
