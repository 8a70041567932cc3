import type { BenchReport } from './run.js';

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const times = (x: number | null) => (x === null ? 'n/a' : x.toFixed(3));

/** The report as a Markdown table, the way docs/benchmarks.md shows it. */
export function formatTable(r: BenchReport): string {
  const header =
    '| strategy | recovered revenue | recovery rate | attempts / payment | mean days to recover | network violations |';
  const rule = '|---|---:|---:|---:|---:|---:|';
  const rows = Object.entries(r.strategies).map(
    ([name, s]) =>
      `| ${name} | ${pct(s.recoveredRevenueShare)} | ${pct(s.recoveryRate)} | ${s.attemptsPerPayment.toFixed(2)} | ${s.meanDaysToRecover.toFixed(1)} | ${s.networkViolations} |`,
  );
  return [
    `World ${r.world}: ${r.payments} payments, seed ${r.seed}`,
    '',
    header,
    rule,
    ...rows,
    '',
    `best fixed ${r.bestFixed} · engineVsBestFixed ${times(r.engineVsBestFixed)} · engineVsOracle ${times(r.engineVsOracle)}`,
  ].join('\n');
}
