import type { Db, IndexSpecification, CreateIndexesOptions } from 'mongodb';
import { collections } from './collections.js';

type IndexList = Array<[IndexSpecification, CreateIndexesOptions?]>;

/** Every index the service relies on; unique ones are correctness-critical (insert wins or E11000). */
const indexes: Record<keyof typeof collections, IndexList> = {
  accounts: [],
  apiKeys: [[{ accountId: 1 }]],
  recoveries: [
    [{ accountId: 1, customerEmail: 1 }],
    [{ accountId: 1, state: 1 }],
    [{ accountId: 1, cardKey: 1 }],
    // The newest-first listing (GET /api/recoveries) and the reports' window of failures.
    [{ accountId: 1, createdAt: -1, _id: -1 }],
  ],
  idempotencyKeys: [],
  velocity: [],
  customerRecoveries: [],
  blockedCards: [],
  rateLimits: [[{ expiresAt: 1 }]],
  events: [
    [{ accountId: 1, createdAt: -1 }],
    [{ deliveryStatus: 1, createdAt: -1 }],
    [{ createdAt: -1 }],
    // The outbox check: pending events whose latest delivery has made no attempt (few), not all pending.
    [{ deliveryStatus: 1, unattemptedSince: 1 }],
  ],
  cardBudgets: [
    [
      { cardKey: 1, attemptKey: 1 },
      { unique: true, name: 'attempt-once' },
    ],
  ],
  learning: [[{ accountId: 1 }]],
  links: [[{ accountId: 1 }]],
  linkConsumptions: [],
  retentionNotices: [],
  pulses: [[{ accountId: 1, occurredAt: -1 }]],
  predictions: [[{ accountId: 1 }]],
  // Read by _id (the prediction's); data retention deletes an account's old ones.
  predictionOutcomes: [[{ accountId: 1, at: 1 }]],
  riskCalibration: [],
  holdouts: [],
  attempts: [[{ accountId: 1, at: -1 }], [{ accountId: 1, fromCode: 1 }]],
  sandboxCharges: [[{ gateway: 1, token: 1 }]],
  sandboxCards: [[{ accountId: 1, gateway: 1 }]],
  connectorEvents: [[{ accountId: 1, receivedAt: -1 }]],
  // One per payment by its _id (account and PSP reference); the daily purge reads by age, across accounts.
  adyenAuthorisations: [[{ receivedAt: 1 }]],
  erasures: [],
  answerClaims: [],
  // One per attempt by its _id (the attempt key); the daily purge reads by age, across accounts.
  attemptSends: [[{ at: 1 }]],
  // One document for the deployment, read by its _id.
  masterKeyCheck: [],
  // Read by _id; the daily purge deletes the expired ones by date, across accounts.
  expiryWarnings: [[{ expiresAt: 1 }]],
};

/** Creates all indexes (idempotent). FerretDB has no TTL indexes, so expiry is checked on read. */
export async function ensureIndexes(db: Db): Promise<void> {
  for (const [name, list] of Object.entries(indexes) as Array<[keyof typeof collections, IndexList]>) {
    const coll = db.collection(collections[name]);
    for (const [spec, options] of list) await coll.createIndex(spec, options ?? {});
  }
}
