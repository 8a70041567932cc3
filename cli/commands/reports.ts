import { formatMoney } from '../../domain/money.js';
import { ReportWindow } from '../../domain/report-window.js';
import { breakdownOf, summaryOf } from '../../services/reports.js';
import { onePositional, parseCommand, validInput } from '../args.js';
import { commandGroup, type CliContext, type Run } from '../context.js';
import { existingAccount } from '../existing-account.js';
import { pairs, table } from '../format.js';
import { jsonFlag, print } from '../output.js';

const window = '[--from <ISO date-time>] [--to <ISO date-time>] [--json]';
const summaryUsage = [`recoup reports summary <clientId> ${window}`];
const breakdownUsage = [`recoup reports breakdown <clientId> ${window}`];
export const reportsUsage = [...summaryUsage, ...breakdownUsage];

/** What a report is asked for: the account, the window and how to print it. */
interface ReportArgs {
  clientId: string;
  query: ReportWindow;
  json: boolean;
}

/** `--from` and `--to` checked with the API's own query schema, and the account they report on. */
function reportArgs(argv: string[], usage: string[]): ReportArgs {
  const { values, positionals } = parseCommand(argv, {
    ...jsonFlag,
    from: { type: 'string' },
    to: { type: 'string' },
  });
  const clientId = onePositional(positionals, 'clientId', usage.join(' '));
  const query = validInput(
    'report window',
    ReportWindow,
    { from: values.from, to: values.to },
    { from: '--from', to: '--to' },
  );
  return { clientId, query, json: values.json };
}

/** A report command: its arguments checked first, then the account looked up before `report` runs. */
function reportCommand(usage: string[], report: (ctx: CliContext, args: ReportArgs) => Promise<void>) {
  return (argv: string[]): Run => {
    const args = reportArgs(argv, usage);
    return async (ctx) => {
      await existingAccount(ctx, args.clientId);
      await report(ctx, args);
    };
  };
}

const percent = (rate: number | null) => (rate === null ? '–' : `${(rate * 100).toFixed(1)} %`);
const money = (amount: number, currency: string) => formatMoney({ amount, currency });

/** The account's summary report, as the merchant's GET /api/reports/summary answers. */
const summary = reportCommand(summaryUsage, async (ctx, { clientId, query, json }) => {
  const report = await summaryOf(ctx.stores, clientId, query, ctx.clock());
  const proof = report.proofMode;
  print(ctx, json, report, () => [
    `Failures from ${report.from} to ${report.to}:`,
    ...pairs([
      ['failed payments', String(report.failedPayments)],
      ['recovered', `${report.recovered} (${percent(report.recoveryRate)})`],
      ['in progress', String(report.inProgress)],
      ...Object.entries(report.revenueByCurrency).map(([currency, r]): [string, string] => [
        `revenue ${currency}`,
        `${money(r.recovered, currency)} recovered of ${money(r.failed, currency)}`,
      ]),
      ['organic successes', String(report.organicSuccesses)],
      ['organic success rate', percent(report.organicSuccessRate)],
      ['with Recoup', percent(report.successRateWithRecoup)],
      ['lift', report.liftPoints === null ? '–' : `${report.liftPoints} points`],
      ...(proof
        ? ([
            [
              'Proof Mode',
              `${proof.treatment} treated (${percent(proof.treatmentRate)}) against ${proof.control} controls (${percent(proof.controlRate)})`,
            ],
            [
              'uplift',
              proof.upliftPoints === null
                ? '–'
                : `${proof.upliftPoints} points, 95 % interval ${proof.confidenceInterval95?.join(' to ') ?? '–'}, p = ${proof.pValue ?? '–'}${proof.insufficientData ? ' (insufficient data)' : ''}`,
            ],
          ] satisfies Array<[string, string]>)
        : []),
    ]),
  ]);
});

/** The account's breakdown report, as the merchant's GET /api/reports/breakdown answers. */
const breakdown = reportCommand(breakdownUsage, async (ctx, { clientId, query, json }) => {
  const report = await breakdownOf(ctx.stores, clientId, query, ctx.clock());
  const revenue = (byCurrency: Record<string, number>) =>
    Object.entries(byCurrency)
      .map(([currency, amount]) => money(amount, currency))
      .join(', ');
  const days = report.daysToRecover;
  print(ctx, json, report, () => [
    `Failures from ${report.from} to ${report.to}, by decline code:`,
    ...table(
      ['decline code', 'group', 'failed', 'recovered', 'rate', 'in progress', 'revenue recovered'],
      report.byDeclineCode.map((row) => [
        row.declineCode ?? '(none given)',
        row.group,
        String(row.failedPayments),
        String(row.recovered),
        percent(row.recoveryRate),
        String(row.inProgress),
        revenue(Object.fromEntries(Object.entries(row.revenueByCurrency).map(([c, r]) => [c, r.recovered]))),
      ]),
    ),
    '',
    'Recovered by strategy:',
    ...table(
      ['strategy', 'recovered', 'revenue'],
      report.byStrategy.map((row) => [
        row.strategyUsed ?? '–',
        String(row.recovered),
        revenue(row.recoveredByCurrency),
      ]),
    ),
    '',
    `Recovered: ${report.chargesToRecover.map((row) => `${row.recovered} after ${row.attempts} charge${row.attempts === 1 ? '' : 's'}`).join(', ') || '–'}`,
    `Days to recover: ${days ? `median ${days.p50}, 90th percentile ${days.p90}, mean ${days.mean} (${days.recovered} recovered)` : '–'}`,
    '',
    'Attempts by gateway:',
    ...table(
      ['gateway', 'attempts', 'approved', 'declined', 'ambiguous', 'not charged', 'approval rate'],
      report.byGateway.map((row) => [
        row.gateway,
        String(row.attempts),
        String(row.approved),
        String(row.declined),
        String(row.ambiguous),
        String(row.notCharged),
        percent(row.approvalRate),
      ]),
    ),
  ]);
});

/** `recoup reports summary|breakdown`: an account's reports, for the operator. */
export const reportsCommand = commandGroup('reports', { summary, breakdown });
