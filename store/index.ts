import type { Db } from 'mongodb';
import { createAccountStore } from './accounts.js';
import { createRateLimiter } from './rate-limits.js';
import { createCardBudgetStore } from './card-budgets.js';

/** Every repository over one database; the only place that wires collections to code. */
export function createStores(db: Db, masterKey: Buffer) {
  return {
    db,
    accounts: createAccountStore(db, masterKey),
    rateLimits: createRateLimiter(db),
    cardBudgets: createCardBudgetStore(db),
  };
}

export type Stores = ReturnType<typeof createStores>;
