import { emptyStats, tallyOutcome, type OutcomeRow, type OutcomeStats } from '../../domain/success-model.js';

/**
 * One account's learning, as store/learning.ts keeps it: every outcome counted into the account's running
 * statistics by the domain's learning step, read back whole. A read returns a copy, as a database read
 * would, so a plan never sees outcomes that arrive after its statistics were loaded.
 */
export class AccountLog {
  private readonly all = emptyStats();
  private snapshot: OutcomeStats | null = null;

  record(row: OutcomeRow): void {
    tallyOutcome(this.all, row);
    this.snapshot = null;
  }

  /** What production's `loadStats` returns now. */
  stats(): OutcomeStats {
    this.snapshot ??= copy(this.all);
    return this.snapshot;
  }
}

function copy(stats: OutcomeStats): OutcomeStats {
  const out = emptyStats();
  for (const table of Object.keys(out) as Array<keyof OutcomeStats>)
    for (const [key, t] of Object.entries(stats[table])) out[table][key] = { n: t.n, s: t.s };
  return out;
}
