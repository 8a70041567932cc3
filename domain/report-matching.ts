import type { ReportedRecovery } from './report.js';

const day = 86_400_000;
/** How long a payment is watched before its outcome counts in the Proof Mode comparison. */
export const observationDays = 30;

/** A pulse that names the failed payment it pays (the recovery's stored id), and when it was paid. */
export interface NamedPulse {
  pays: string;
  at: Date;
}

/**
 * Whether a recovery is in the Proof Mode comparison: drawn into a group at intake (so Proof Mode was on and
 * the request itself did not block it) and with a customer email. A control's outcome is seen only through
 * a pulse with its customer's email; whether there is an email is known before the draw, so leaving out
 * payments without one leaves the two groups alike.
 */
export const isCompared = (r: ReportedRecovery) => r.inProofMode === true && !!r.customerEmail;

/** A payment's observation window: from its failure to `observationDays` later, both ends included. */
export function observationOf(r: ReportedRecovery) {
  const opens = r.createdAt.getTime();
  const closes = opens + observationDays * day;
  return {
    closes,
    within: (t: Date | null | undefined) => !!t && t.getTime() >= opens && t.getTime() <= closes,
  };
}

/** Collected within its window by Recoup, or reported paid by the billing platform: not by a pulse. */
export function collectedByOthers(
  r: ReportedRecovery,
  within: (t: Date | null | undefined) => boolean,
): boolean {
  return (
    (r.state === 'succeeded' && within(r.recoveredAt)) ||
    (r.state === 'paid_elsewhere' && within(r.endedAt)) ||
    within(r.paidOnTheirOwnAt)
  );
}

/**
 * Which compared payments a pulse collected, and when; a pulse is one payment, so it collects one failure
 * at most. Only payments collected no other way (a control; a treated payment Recoup did not collect and no
 * platform reported paid) are collected by a pulse. First the pulses that name their failure: each collects
 * the failure it names, when that is such a payment and the pulse falls within its observation window (the
 * earliest, when several name it), and no other. Then, oldest first, each payment still uncollected takes
 * the earliest pulse naming nothing with its customer's email within its window that no older payment took.
 */
export function pulsesMatched(
  payments: ReportedRecovery[],
  named: NamedPulse[],
  paidOnTheirOwn: Map<string, Date[]>,
): Map<ReportedRecovery, { at: Date; named: boolean }> {
  const oldestFirst = payments
    .filter(isCompared)
    .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime())
    .map((r) => ({ r, ...observationOf(r) }))
    .filter(({ r, within }) => !collectedByOthers(r, within));
  const matched = new Map<ReportedRecovery, { at: Date; named: boolean }>();
  const byId = new Map(oldestFirst.map((p) => [p.r._id, p] as const));
  for (const pulse of [...named].sort((a, b) => a.at.getTime() - b.at.getTime())) {
    const payment = byId.get(pulse.pays);
    if (payment && !matched.has(payment.r) && payment.within(pulse.at))
      matched.set(payment.r, { at: pulse.at, named: true });
  }
  const unused = new Map(
    [...paidOnTheirOwn].map(([email, times]) => [
      email,
      [...times].sort((a, b) => a.getTime() - b.getTime()),
    ]),
  );
  for (const { r, within } of oldestFirst) {
    if (matched.has(r)) continue;
    const pulses = unused.get(r.customerEmail ?? '') ?? [];
    const pulse = pulses.find((t) => within(t));
    if (!pulse) continue;
    pulses.splice(pulses.indexOf(pulse), 1);
    matched.set(r, { at: pulse, named: false });
  }
  return matched;
}
