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
   * The account's recoveries whose failure falls in the `observationDays` before `from`: not reported, but
   * still watched in the range, so a pulse in it may be their own payment (`pulsesMatched`).
   */
  earlierRecoveries: ReportedRecovery[];
  /** Pulses logged in [from, to): the organic successes, but for those that are a compared payment's own. */
  pulses: number;
  /**
   * When each customer with a compared payment (in the range or earlier) paid on their own (pulse), by
   * email: every pulse of theirs from `observationDays` before `from` until the observation window of the
   * last failure in the range closes.
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
 * Which compared payments a pulse collected, and when: a pulse with the customer's email is one payment, so
 * it collects one failure at most. Each payment collected no other way (a control; a treated payment Recoup
 * did not collect and no platform reported paid), oldest first, takes the earliest pulse of its customer
 * within its observation window that no older payment took.
 */
function pulsesMatched(payments: ReportedRecovery[], paidOnTheirOwn: Map<string, Date[]>) {
  const unused = new Map(
    [...paidOnTheirOwn].map(([email, times]) => [
      email,
      [...times].sort((a, b) => a.getTime() - b.getTime()),
    ]),
  );
  const matched = new Map<ReportedRecovery, Date>();
  const oldestFirst = payments
    .filter(isCompared)
    .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
  for (const r of oldestFirst) {
    const { within } = observationOf(r);
    if (collectedByOthers(r, within)) continue;
    const pulses = unused.get(r.customerEmail ?? '') ?? [];
    const pulse = pulses.find((t) => within(t));
    if (!pulse) continue;
    pulses.splice(pulses.indexOf(pulse), 1);
    matched.set(r, pulse);
  }
  return matched;
}

/**
 * Treatment against control on one outcome: the payment was collected within its observation window —
 * recovered by Recoup, stopped as paid elsewhere, or its customer paid on their own (a pulse matched to it,
 * or the billing platform's notice after the recovery ended unpaid). A control can only be collected the
 * last way, having no attempts to be recovered or stopped by. A payment counts once its window has closed,
 * collected or not.
 */
function proofGroups(input: ReportInput, byPulse: Map<ReportedRecovery, Date>) {
  const treatment = { trials: 0, successes: 0 };
  const control = { trials: 0, successes: 0 };
  for (const r of input.recoveries.filter(isCompared)) {
    const { closes, within } = observationOf(r);
    // Counting a payment collected early while an uncollected one of the same days waits would push both
    // rates towards 1, and the group that collects faster the most.
    if (input.now.getTime() < closes) continue;
    const group = r.state === 'holdout' ? control : treatment;
    group.trials += 1;
    if (collectedByOthers(r, within) || byPulse.has(r)) group.successes += 1;
  }
  return { treatment, control };
}

/**
 * How many pulses in [from, to) are a compared payment's own (matched to it): that payment is among the
 * failures of this range or an earlier one, so it is not a first-try success as well.
 */
function ownPaymentsPulsed(input: ReportInput, byPulse: Map<ReportedRecovery, Date>): number {
  return [...byPulse.values()].filter((at) => at >= input.from && at < input.to).length;
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
  const byPulse = pulsesMatched([...input.earlierRecoveries, ...input.recoveries], input.paidOnTheirOwn);
  const organicSuccesses = input.pulses - ownPaymentsPulsed(input, byPulse);
  const payments = organicSuccesses + input.recoveries.length;
  const organicRate = share(organicSuccesses, payments);
  const withRecoup = share(organicSuccesses + recovered.length, payments);
  const groups = proofGroups(input, byPulse);
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
