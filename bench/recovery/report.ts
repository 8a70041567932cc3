import { strategyNames, type BenchReport } from './run.js';

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

/** The report as a Markdown table, the way docs/benchmarks.md shows it. */
export function formatTable(r: BenchReport): string {
  const header =
    '| strategy | recovered revenue | recovery rate | attempts / payment | mean days to recover | network violations |';
  const rule = '|---|---:|---:|---:|---:|---:|';
  const rows = strategyNames.map((name) => {
    const s = r.strategies[name];
    return `| ${name} | ${pct(s.recoveredRevenueShare)} | ${pct(s.recoveryRate)} | ${s.attemptsPerPayment.toFixed(2)} | ${s.meanDaysToRecover.toFixed(1)} | ${s.networkViolations} |`;
  });
  return [
    `World ${r.world}: ${r.payments} payments, seed ${r.seed}`,
    '',
    header,
    rule,
    ...rows,
    '',
    `engineVsBestFixed ${r.engineVsBestFixed.toFixed(3)} · engineVsOracle ${r.engineVsOracle.toFixed(3)}`,
  ].join('\n');
}
