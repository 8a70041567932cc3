import { points, share } from './rates.js';
import { statusOf, type RecoveryState } from './recovery.js';
import {
  collectedByOthers,
  isCompared,
  observationOf,
  pulsesMatched,
  type NamedPulse,
} from './report-matching.js';
import { clusteredGroup, compareProportions, type Comparison, type Group } from './two-proportions.js';

/** A recovery as the report reads it. */
export interface ReportedRecovery {
  /** The recovery's stored id (the UUID): a pulse that names the failure it pays names it by this. */
  _id: string;
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
  /** Pulses logged in [from, to): the organic successes, but for those that pay a failure. */
  pulses: number;
  /**
   * The pulses that name the failure they pay, from `observationDays` before `from` until the observation
   * window of the last failure in the range closes.
   */
  namedPulses: NamedPulse[];
  /**
   * When each customer with a compared payment (in the range or earlier) paid on their own, by email: every
   * pulse of theirs that names no failure (nor says it pays none), over the same span as `namedPulses`.
   */
  paidOnTheirOwn: Map<string, Date[]>;
}

/** Revenue per currency: what failed and what Recoup recovered of it, in minor units. */
export type Revenue = Record<string, { failed: number; recovered: number }>;

/** The failures Recoup worked on: all but Proof Mode controls. */
export const treatedOf = <R extends ReportedRecovery>(recoveries: R[]) =>
  recoveries.filter((r) => r.state !== 'holdout');

/** Adds a failure to `revenue`: its amount failed, and recovered when Recoup recovered it. */
export function addRevenue(revenue: Revenue, r: ReportedRecovery): void {
  const c = (revenue[r.currency] ??= { failed: 0, recovered: 0 });
  c.failed += r.amount;
  if (r.state === 'succeeded') c.recovered += r.amount;
}

type Matched = ReturnType<typeof pulsesMatched>;

/**
 * Treatment against control on one outcome: the payment was collected within its observation window —
 * recovered by Recoup, stopped as paid elsewhere, or its customer paid on their own (a pulse matched to it,
 * or the billing platform's notice after the recovery ended unpaid). A control can only be collected the
 * last way, having no attempts to be recovered or stopped by. A payment counts once its window has closed,
 * collected or not.
 */
function proofGroups(input: ReportInput, byPulse: Matched) {
  const treatment = new Map<string, Group>();
  const control = new Map<string, Group>();
  for (const r of input.recoveries.filter(isCompared)) {
    const { closes, within } = observationOf(r);
    // Counting a payment collected early while an uncollected one of the same days waits would push both
    // rates towards 1, and the group that collects faster the most.
    if (input.now.getTime() < closes) continue;
    const groups = r.state === 'holdout' ? control : treatment;
    const customer = r.customerEmail ?? '';
    const tally = groups.get(customer) ?? { trials: 0, successes: 0 };
    groups.set(customer, tally);
    tally.trials += 1;
    if (collectedByOthers(r, within) || byPulse.has(r)) tally.successes += 1;
  }
  return { treatment: [...treatment.values()], control: [...control.values()] };
}

const total = (customers: Group[]) => customers.reduce((sum, c) => sum + c.trials, 0);

/**
 * How many pulses in [from, to) pay a failure, so are not first-try successes as well: every one that names
 * the failure it pays, and every other matched to a compared payment (of this range or an earlier one).
 */
function paymentsOfFailures(input: ReportInput, byPulse: Matched): number {
  const inRange = (at: Date) => at >= input.from && at < input.to;
  const named = input.namedPulses.filter((p) => inRange(p.at)).length;
  return named + [...byPulse.values()].filter((p) => !p.named && inRange(p.at)).length;
}

/** The summary report: what failed, what Recoup recovered, the organic baseline, lift and Proof Mode. */
export function summaryReport(input: ReportInput) {
  const treated = treatedOf(input.recoveries);
  const recovered = treated.filter((r) => r.state === 'succeeded');
  const revenue: Revenue = {};
  for (const r of treated) addRevenue(revenue, r);
  const byPulse = pulsesMatched(
    [...input.earlierRecoveries, ...input.recoveries],
    input.namedPulses,
    input.paidOnTheirOwn,
  );
  const organicSuccesses = input.pulses - paymentsOfFailures(input, byPulse);
  const payments = organicSuccesses + input.recoveries.length;
  const groups = proofGroups(input, byPulse);
  const proof: Comparison & { treatment: number; control: number } = {
    treatment: total(groups.treatment),
    control: total(groups.control),
    // Each customer's payments are one cluster: Proof Mode draws customers (clusteredGroup).
    ...compareProportions(clusteredGroup(groups.treatment), clusteredGroup(groups.control)),
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
    organicSuccessRate: share(organicSuccesses, payments),
    successRateWithRecoup: share(organicSuccesses + recovered.length, payments),
    // With Recoup less without it is the share of all payments Recoup recovered: from the unrounded fraction.
    liftPoints: payments > 0 ? points(recovered.length / payments) : null,
    proofMode: input.recoveries.some((r) => r.inProofMode === true) ? proof : null,
  };
}
