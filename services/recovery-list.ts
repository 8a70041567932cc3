import { recoveryStates, statusOf, type RecoveryState, type RecoveryStatus } from '../domain/recovery.js';
import type { Stores } from '../store/index.js';
import { pageOf } from '../store/paging.js';
import type { RecoveryDoc } from '../store/recoveries.js';

export interface RecoveryListQuery {
  status?: RecoveryStatus;
  state?: RecoveryState;
  /** A transactionId (either form) of the account's: the page after it. */
  before?: string;
  limit: number;
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
  return pageOf(query.limit, (limit) =>
    stores.recoveries.page(accountId, {
      ...(query.status || query.state ? { states } : {}),
      ...(before ? { before } : {}),
      limit,
    }),
  );
}
