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
    // Every one of the customer's recoveries is read, each by _id (no scan of the account's), a batch at a
    // time; the index is in admission order, not quite the listing's, so only the page (and one more, for
    // hasMore) of the newest after the cursor is kept.
    const kept: RecoveryDoc[] = [];
    for await (const doc of stores.recoveries.eachOfCustomer(accountId, query.customerEmail)) {
      if (!states.includes(doc.state) || (before && newestFirstOrder(before, doc) >= 0)) continue;
      kept.push(doc);
      kept.sort(newestFirstOrder);
      if (kept.length > query.limit + 1) kept.pop();
    }
    return { docs: kept.slice(0, query.limit), hasMore: kept.length > query.limit };
  }
  return pageOf(query.limit, (limit) =>
    stores.recoveries.page(accountId, {
      ...(query.status || query.state ? { states } : {}),
      ...(before ? { before } : {}),
      limit,
    }),
  );
}
