import { stillOwed } from '../domain/recovery.js';
import type { Account } from '../store/accounts.js';
import type { Stores } from '../store/index.js';
import type { RecoveryDoc } from '../store/recoveries.js';

/**
 * A customer's recoveries still owed (not paid by Recoup or elsewhere, not written off by the merchant), of
 * every one of theirs in the account's current mode: the sandbox's in test mode, else the live ones. Read a
 * batch at a time, however many the customer has.
 */
export async function* owedBy(
  stores: Stores,
  account: Pick<Account, 'id' | 'testMode'>,
  customerEmail: string,
): AsyncGenerator<RecoveryDoc> {
  const recoveries = stores.recoveries.eachOfCustomer(account.id, customerEmail, {
    simulated: account.testMode,
  });
  for await (const recovery of recoveries) if (stillOwed(recovery)) yield recovery;
}

/**
 * The paywall view of a customer (GET /api/recovery/paywall-status): what they still owe, in the oldest
 * failure's currency and by currency. Folded as it is read: memory holds one batch of recoveries.
 */
export async function paywallOf(
  stores: Stores,
  account: Pick<Account, 'id' | 'testMode'>,
  customerEmail: string,
  fallbackCurrency = 'USD',
) {
  const byCurrency: Record<string, number> = {};
  let count = 0;
  let oldest: Pick<RecoveryDoc, 'createdAt' | 'currency'> | null = null;
  for await (const r of owedBy(stores, account, customerEmail)) {
    count += 1;
    byCurrency[r.currency] = (byCurrency[r.currency] ?? 0) + r.amount;
    if (!oldest || r.createdAt < oldest.createdAt) oldest = { createdAt: r.createdAt, currency: r.currency };
  }
  const currency = oldest?.currency ?? fallbackCurrency;
  return {
    isPastDue: count > 0,
    totalOwedCents: byCurrency[currency] ?? 0,
    currency,
    failedPaymentCount: count,
    oldestFailureAt: oldest?.createdAt.toISOString() ?? null,
    byCurrency,
  };
}
