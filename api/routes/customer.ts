import { stillOwed } from '../../domain/recovery.js';
import type { Stores } from '../../store/index.js';
import type { RecoveryDoc } from '../../store/recoveries.js';
import { accountOf } from '../context.js';
import { reply, route } from '../route.js';
import { PaywallQuery, PaywallStatus, PulseRequest, PulseResult } from '../schemas/customer.js';

interface Deps {
  stores: Stores;
  clock: () => Date;
}

/**
 * The paywall view of a customer's recoveries: anything not paid (by Recoup or elsewhere) and not written
 * off by the merchant is still owed.
 */
export function paywallStatus(recoveries: RecoveryDoc[], fallbackCurrency: string) {
  const owed = recoveries
    .filter((r) => stillOwed(r.state))
    .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
  const byCurrency: Record<string, number> = {};
  for (const r of owed) byCurrency[r.currency] = (byCurrency[r.currency] ?? 0) + r.amount;
  const currency = owed[0]?.currency ?? fallbackCurrency;
  return {
    isPastDue: owed.length > 0,
    totalOwedCents: byCurrency[currency] ?? 0,
    currency,
    failedPaymentCount: owed.length,
    oldestFailureAt: owed[0]?.createdAt.toISOString() ?? null,
    byCurrency,
  };
}

/** Organic-success logging (pulse) and the paywall lookup. */
export function customerRoutes({ stores, clock }: Deps) {
  return [
    route({
      method: 'post',
      path: '/api/recovery/pulse',
      tag: 'Pulse',
      summary: 'Log a payment that succeeded on the first try (the baseline for lift)',
      auth: 'secret',
      body: PulseRequest,
      responses: { 200: { description: 'Logged', schema: PulseResult } },
      async handle(ctx, { body }) {
        const now = clock();
        const pulse = await stores.pulses.log(
          {
            accountId: accountOf(ctx).id,
            merchantTransactionId: body.transactionId ?? null,
            amount: body.amount,
            currency: body.currency,
            customerEmail: body.customerEmail ?? null,
            occurredAt: body.occurredAt ? new Date(body.occurredAt) : now,
          },
          now,
        );
        return reply(200, { success: true, message: 'Organic success logged', transactionId: pulse._id });
      },
    }),
    route({
      method: 'get',
      path: '/api/recovery/paywall-status',
      tag: 'Paywall',
      summary: 'Whether a customer has unrecovered past-due payments',
      description:
        'Accepts the publishable key as well as the secret key; open to browsers (CORS); 120 requests per minute per key.',
      auth: 'secret-or-publishable',
      rateLimit: 'paywall',
      cors: true,
      query: PaywallQuery,
      responses: { 200: { description: 'Paywall status', schema: PaywallStatus } },
      async handle(ctx, { query }) {
        const recoveries = await stores.recoveries.forCustomer(accountOf(ctx).id, query.customerEmail);
        return reply(200, paywallStatus(recoveries, 'USD'));
      },
    }),
  ];
}
