import type { Db } from 'mongodb';
import { deleteAccountDocuments } from './account-data.js';
import { createAccountStore, type AccountCaching } from './accounts.js';
import { createAdyenAuthorisationStore } from './adyen-authorisations.js';
import { createAttemptSendStore } from './attempt-sends.js';
import { createConnectorEventStore } from './connector-events.js';
import { createErasureStore } from './erasures.js';
import { createEventStore } from './events.js';
import { createExpiryWarningStore } from './expiry-warnings.js';
import { createRateLimiter } from './rate-limits.js';
import { createCardBudgetStore } from './card-budgets.js';
import { createHoldoutStore } from './holdouts.js';
import { createLearningStore } from './learning.js';
import { createLinkStore } from './links.js';
import { createPredictionStore } from './predictions.js';
import { createPulseStore } from './pulses.js';
import { createIntakeClaims } from './intake-claims.js';
import { createRecoveryStore } from './recoveries.js';
import { createRetentionNoticeStore } from './retention-notices.js';
import { createTestGatewayStore } from './test-gateway.js';

/** Every repository over one database; the only place that wires collections to code. */
export function createStores(db: Db, masterKey: Buffer, caching: AccountCaching = {}) {
  return {
    db,
    accounts: createAccountStore(db, masterKey, caching),
    rateLimits: createRateLimiter(db),
    events: createEventStore(db, masterKey),
    cardBudgets: createCardBudgetStore(db),
    attemptSends: createAttemptSendStore(db),
    recoveries: createRecoveryStore(db),
    claims: createIntakeClaims(db),
    pulses: createPulseStore(db),
    predictions: createPredictionStore(db),
    learning: createLearningStore(db),
    holdouts: createHoldoutStore(db),
    sandbox: createTestGatewayStore(db),
    links: createLinkStore(db),
    retentionNotices: createRetentionNoticeStore(db),
    connectorEvents: createConnectorEventStore(db),
    adyenAuthorisations: createAdyenAuthorisationStore(db),
    erasures: createErasureStore(db),
    expiryWarnings: createExpiryWarningStore(db),
    /** Deletes every document of an account, the account last (closure). */
    deleteAccountData: (accountId: string) => deleteAccountDocuments(db, accountId),
  };
}

export type Stores = ReturnType<typeof createStores>;
