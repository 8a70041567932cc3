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
  /** When it reached its final state; absent on recoveries that ended before this was recorded. */
  endedAt?: Date;
  /** Drawn into a Proof Mode group at intake (control: state `holdout`); absent or false otherwise. */
  inProofMode?: boolean;
  /** When the billing platform reported paid a control, or a recovery that had ended without the payment. */
  paidOnTheirOwnAt?: Date;
}

export interface ReportInput {
  from: Date;
  to: Date;
  now: Date;
  /** The account's recoveries whose failure falls in [from, to). */
  recoveries: ReportedRecovery[];
  /**
   * Pulses logged in [from, to): the organic successes, but for those that are a compared payment's own
   * payment (`ownPaymentsPulsed`), which the report takes out.
   */
  pulses: number;
  /**
   * When each customer with a payment in the Proof Mode comparison paid on their own (pulse), by email:
   * every pulse of theirs from `from` until the observation window of the last failure in the range closes.
   */
  paidOnTheirOwn: Map<string, Date[]>;
}

/** part ÷ whole to four decimals; null when there is nothing to divide by. */
export const share = (part: number, whole: number) =>
  whole > 0 ? Math.round((part / whole) * 10_000) / 10_000 : null;

/**
 * Whether a recovery is in the Proof Mode comparison: drawn into a group at intake (so Proof Mode was on and
 * it was not blocked there) and with a customer email. A control's outcome is seen only through a pulse
 * with its customer's email; whether there is an email is known before the draw, so leaving out payments
 * without one leaves the two groups alike.
 */
export const isCompared = (r: ReportedRecovery) => r.inProofMode === true && !!r.customerEmail;

/** A payment's observation window: from its failure to `observationDays` later, both ends included. */
function observationOf(r: ReportedRecovery) {
  const opens = r.createdAt.getTime();
  const closes = opens + observationDays * day;
  return {
    closes,
    within: (t: Date | null | undefined) => !!t && t.getTime() >= opens && t.getTime() <= closes,
  };
}

/** Collected within its window by Recoup, or reported paid by the billing platform: not by a pulse. */
function collectedByOthers(r: ReportedRecovery, within: (t: Date | null | undefined) => boolean): boolean {
  return (
    (r.state === 'succeeded' && within(r.recoveredAt)) ||
    (r.state === 'paid_elsewhere' && within(r.endedAt)) ||
    within(r.paidOnTheirOwnAt)
  );
}

/**
 * Treatment against control on one outcome: the payment was collected within its observation window —
 * recovered by Recoup, stopped as paid elsewhere, or its customer paid on their own (a pulse with the same
 * email, or the billing platform's notice after the recovery ended unpaid). A control can only be collected
 * the last way, having no attempts to be recovered or stopped by. A payment counts once its window has
 * closed, collected or not.
 */
function proofGroups(input: ReportInput) {
  const treatment = { trials: 0, successes: 0 };
  const control = { trials: 0, successes: 0 };
  for (const r of input.recoveries.filter(isCompared)) {
    const { closes, within } = observationOf(r);
    // Counting a payment collected early while an uncollected one of the same days waits would push both
    // rates towards 1, and the group that collects faster the most.
    if (input.now.getTime() < closes) continue;
    const collected =
      collectedByOthers(r, within) || (input.paidOnTheirOwn.get(r.customerEmail ?? '') ?? []).some(within);
    const group = r.state === 'holdout' ? control : treatment;
    group.trials += 1;
    if (collected) group.successes += 1;
  }
  return { treatment, control };
}

/**
 * How many pulses in [from, to) are a compared payment's own: the first pulse of its customer's email within
 * its observation window, for a payment collected no other way (a control; a treated payment Recoup did not
 * collect and no platform reported paid) — the comparison takes it as the payment collected. That payment is
 * already among the failures, so it is not a first-try success as well. A pulse that is the first for two
 * payments of one customer is one payment, taken out once.
 */
function ownPaymentsPulsed(input: ReportInput): number {
  const paying = new Set<string>();
  for (const r of input.recoveries.filter(isCompared)) {
    const { within } = observationOf(r);
    if (collectedByOthers(r, within)) continue;
    const email = r.customerEmail ?? '';
    const first = (input.paidOnTheirOwn.get(email) ?? [])
      .map((at, index) => ({ at, index }))
      .filter(({ at }) => within(at))
      .sort((a, b) => a.at.getTime() - b.at.getTime())[0];
    if (first && first.at >= input.from && first.at < input.to) paying.add(`${email}\n${first.index}`);
  }
  return paying.size;
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
  const organicSuccesses = input.pulses - ownPaymentsPulsed(input);
  const payments = organicSuccesses + input.recoveries.length;
  const organicRate = share(organicSuccesses, payments);
  const withRecoup = share(organicSuccesses + recovered.length, payments);
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
    organicSuccesses,
    organicSuccessRate: organicRate,
    successRateWithRecoup: withRecoup,
    liftPoints:
      organicRate === null || withRecoup === null
        ? null
        : Math.round((withRecoup - organicRate) * 10_000) / 100,
    proofMode: input.recoveries.some((r) => r.inProofMode === true) ? proof : null,
  };
}
