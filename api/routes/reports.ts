import { observationDays, summaryReport } from '../../domain/report.js';
import type { Stores } from '../../store/index.js';
import { accountOf } from '../context.js';
import { reply, route } from '../route.js';
import { Summary, SummaryQuery } from '../schemas/reports.js';

interface Deps {
  stores: Stores;
  clock: () => Date;
}

const day = 86_400_000;

/** The merchant's reports: what Recoup recovered and what it adds over paying customers alone. */
export function reportRoutes({ stores, clock }: Deps) {
  return [
    route({
      method: 'get',
      path: '/api/reports/summary',
      tag: 'Reports',
      summary: 'Recovery rate, recovered revenue, the organic baseline, lift and the Proof Mode comparison',
      description:
        'Failures whose recovery started in [from, to) (default: the last 30 days). A Proof Mode control counts as recovered when a pulse with its customer’s email arrives within 30 days of the failure.',
      auth: 'secret',
      query: SummaryQuery,
      responses: { 200: { description: 'The summary', schema: Summary } },
      async handle(ctx, { query }) {
        const account = accountOf(ctx);
        const now = clock();
        const to = query.to ? new Date(query.to) : now;
        const from = query.from ? new Date(query.from) : new Date(to.getTime() - 30 * day);
        const [recoveries, organicSuccesses] = await Promise.all([
          stores.recoveries.createdBetween(account.id, from, to),
          stores.pulses.countBetween(account.id, from, to),
        ]);
        const controlEmails = [
          ...new Set(
            recoveries.flatMap((r) => (r.state === 'holdout' && r.customerEmail ? [r.customerEmail] : [])),
          ),
        ];
        const paidOnTheirOwn = await stores.pulses.paidBy(
          account.id,
          controlEmails,
          from,
          new Date(to.getTime() + observationDays * day),
        );
        return reply(200, summaryReport({ from, to, now, recoveries, organicSuccesses, paidOnTheirOwn }));
      },
    }),
  ];
}
