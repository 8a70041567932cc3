import { recoveryStates, statusOf, type RecoveryState, type RecoveryStatus } from '../domain/recovery.js';
import type { Stores } from '../store/index.js';
import { newestFirstOrder, pageOf } from '../store/paging.js';
import type { RecoveryDoc } from '../store/recoveries.js';

export interface RecoveryListQuery {
  status?: RecoveryStatus;
  state?: RecoveryState;
  /** A transactionId (either form) of the account's: the page after it. */
  before?: string;
  limit: number;
  /** Only this customer's recoveries (the email given to execute), found through the customer index. */
  customerEmail?: string;
}

/** A page of recoveries, or why the cursor was refused. */
export type RecoveryPage = { docs: RecoveryDoc[]; hasMore: boolean } | { unknownCursor: string };

/**
 * An account's recoveries, newest first, by status and/or state, a page at a time: what the merchant's
 * GET /api/recoveries and the operator's `recoup recoveries list` show.
 */
export async function listRecoveries(
  stores: Stores,
  accountId: string,
  query: RecoveryListQuery,
): Promise<RecoveryPage> {
  const before = query.before ? await stores.recoveries.find(accountId, query.before) : null;
  if (query.before && !before) return { unknownCursor: query.before };
  const states = recoveryStates.filter(
    (s) => (!query.status || statusOf(s) === query.status) && (!query.state || s === query.state),
  );
  if (query.customerEmail !== undefined) {
    // At most a few hundred, each read by _id: no scan of the account's recoveries.
    const listed = (await stores.recoveries.forCustomer(accountId, query.customerEmail))
      .filter((doc) => states.includes(doc.state) && (!before || newestFirstOrder(before, doc) < 0))
      .sort(newestFirstOrder);
    return { docs: listed.slice(0, query.limit), hasMore: listed.length > query.limit };
  }
  return pageOf(query.limit, (limit) =>
    stores.recoveries.page(accountId, {
      ...(query.status || query.state ? { states } : {}),
      ...(before ? { before } : {}),
      limit,
    }),
  );
}
