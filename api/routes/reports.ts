import { breakdownOf, summaryOf } from '../../services/reports.js';
import type { Stores } from '../../store/index.js';
import { accountOf } from '../context.js';
import { reply, route } from '../route.js';
import { reportWindow } from '../../domain/report-window.js';
import { Breakdown, Summary } from '../schemas/reports.js';

interface Deps {
  stores: Stores;
  clock: () => Date;
}

const window = 'Failures whose recovery started in [from, to) (default: the last 30 days).';

/** The merchant's reports: what Recoup recovered, what it adds over paying customers alone, and how. */
export function reportRoutes({ stores, clock }: Deps) {
  // Checked against the clock the report is computed with.
  const query = reportWindow(clock);
  return [
    route({
      method: 'get',
      path: '/api/reports/summary',
      tag: 'Reports',
      summary: 'Recovery rate, recovered revenue, the organic baseline, lift and the Proof Mode comparison',
      description: `${window} A Proof Mode control counts as recovered when its customer pays within 30 days of the failure: a pulse that names it (paysTransactionId), else a pulse with its customer’s email that names no failure. That pulse (and a treated payment’s own, when Recoup did not collect it) is not also an organic success, nor is any pulse that names a failure. A payment takes part in the comparison once its 30 days are over, collected or not.`,
      auth: 'secret',
      query,
      responses: { 200: { description: 'The summary', schema: Summary } },
      async handle(ctx, { query }) {
        return reply(200, await summaryOf(stores, accountOf(ctx).id, query, clock()));
      },
    }),
    route({
      method: 'get',
      path: '/api/reports/breakdown',
      tag: 'Reports',
      summary: 'Recovered revenue by decline code, strategy, charges and days to recover, and gateway',
      description: `${window} Proof Mode controls are left out.`,
      auth: 'secret',
      query,
      responses: { 200: { description: 'The breakdown', schema: Breakdown } },
      async handle(ctx, { query }) {
        return reply(200, await breakdownOf(stores, accountOf(ctx).id, query, clock()));
      },
    }),
  ];
}
