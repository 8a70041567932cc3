import type { LoopOutcome } from '../../../domain/recovery-loop.js';
import type { RecoveryDoc } from '../../../store/recoveries.js';
import type { Charge, PaymentResult } from '../payment-run.js';
import type { Payment } from '../payments.js';

/** One payment whose workflow run differs from its pure run, line by line. */
export interface Mismatch {
  payment: number;
  lines: string[];
}

const chargeText = (c: Charge | undefined) =>
  c
    ? `${new Date(c.at).toISOString()} ${c.token} via ${c.gateway}: ${c.approved ? 'approved' : `declined ${c.code}`}`
    : 'none';

/** How a recovery ended, as its read model shows it: state, then strategy (succeeded) or decline code. */
const endOf = (state: string, strategy: string | null, code: string | null) =>
  state === 'succeeded' ? `succeeded (${strategy})` : `${state} (${code})`;

function expectedEnd(outcome: LoopOutcome): string {
  switch (outcome.kind) {
    case 'succeeded':
      return endOf('succeeded', outcome.strategy, null);
    case 'failed':
      return endOf('failed', 'all_failed', outcome.lastDeclineCode);
    case 'expired':
      return endOf('failed', 'all_failed', 'expired_card');
    case 'blocked':
      return endOf('blocked', null, outcome.declineCode);
  }
}

/**
 * Compares each payment's pure run with its workflow run: every charge the world saw (time at the world's
 * minute, token, gateway, outcome and code), the attempts production recorded, and how the recovery ended.
 */
export function compareRuns(
  payments: Payment[],
  pure: Array<PaymentResult & { outcome: LoopOutcome }>,
  world: PaymentResult[],
  docs: RecoveryDoc[],
): Mismatch[] {
  const mismatches: Mismatch[] = [];
  payments.forEach((p, i) => {
    const a = pure[i]!;
    const b = world[i]!;
    const doc = docs[i]!;
    const lines: string[] = [];
    for (let n = 0; n < Math.max(a.charges.length, b.charges.length); n += 1) {
      const [x, y] = [chargeText(a.charges[n]), chargeText(b.charges[n])];
      if (x !== y) lines.push(`attempt ${n + 1}: pure ${x} | workflow ${y}`);
    }
    const recorded = doc.attempts.map((r) => `${r.gateway}: ${r.outcome} ${r.declineCode ?? ''}`.trim());
    const charged = b.charges.map((c) => `${c.gateway}: ${c.approved ? 'approved' : `declined ${c.code}`}`);
    if (recorded.join('; ') !== charged.join('; '))
      lines.push(`recorded attempts [${recorded.join('; ')}] but the world saw [${charged.join('; ')}]`);
    const [x, y] = [expectedEnd(a.outcome), endOf(doc.state, doc.strategyUsed, doc.lastDeclineCode)];
    if (x !== y) lines.push(`outcome: pure ${x} | workflow ${y}`);
    if (lines.length > 0) mismatches.push({ payment: p.index, lines });
  });
  return mismatches;
}

/** The per-payment mismatch report. */
export function formatMismatches(payments: Payment[], mismatches: Mismatch[]): string {
  const byIndex = new Map(payments.map((p) => [p.index, p]));
  return mismatches
    .map((m) => {
      const p = byIndex.get(m.payment)!;
      const head = `payment ${m.payment} (${p.merchant.id}, ${p.code}, failed ${new Date(p.failedAt).toISOString()}):`;
      return [head, ...m.lines.map((l) => `  ${l}`)].join('\n');
    })
    .join('\n');
}
