import type { Db, Filter } from 'mongodb';
import { collections } from './collections.js';

/** Any of our documents: string ids, and an `accountId` on those that belong to one account. */
interface AnyDoc {
  _id: string;
  accountId?: string;
}

/** The account id as a regular expression matches it literally. */
const literally = (accountId: string) => accountId.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `_id`s that begin with the account's id and `delimiter` (`acct_1:…`): its per-customer and per-card records. */
export const idsOfAccount = (accountId: string, delimiter: ':' | '/' = ':') =>
  new RegExp(`^${literally(accountId)}${delimiter}`);

/** The pattern of an `_id` that embeds the account, given the account id as a literal pattern. */
type IdPattern = (account: string) => string;

const startsWith: IdPattern = (account) => `^${account}:`;

/**
 * Where each collection's `_id` embeds the account, anchored where the account stands in it; null where
 * its documents carry an `accountId` alone. Never the account id anywhere in an `_id`: the part after it is
 * often chosen by the merchant (an idempotency key, a platform's event id), and another account's key may
 * well contain `:acct_…` or `/acct_…/`.
 */
const embedding: Record<Exclude<keyof typeof collections, 'accounts'>, IdPattern | null> = {
  apiKeys: null,
  recoveries: null,
  // `${accountId}:${hash of email}:${n}`
  customerRecoveries: startsWith,
  // The card key, `${accountId}:${hash of token}`
  blockedCards: startsWith,
  // `${accountId}:${idempotencyKey}`
  idempotencyKeys: startsWith,
  // `${accountId}:${cardKey}:${amount}:${currency}:${n}`
  velocity: startsWith,
  // `${kind}:${accountId}:${keyKind}:${window}:${n}`, `kind` a fixed word
  rateLimits: (account) => `^[a-zA-Z]+:${account}:`,
  events: null,
  // `${cardKey}:${n}`, `${cardKey}:stop` and `${cardKey}:wait`
  cardBudgets: startsWith,
  // The account's tally: `_id` is the account id
  learning: (account) => `^${account}$`,
  links: null,
  linkConsumptions: null,
  // `${accountId}:${hash of email}:${n}`, a sandbox notice's `${accountId}:sandbox:${hash of email}:${n}`
  retentionNotices: startsWith,
  pulses: null,
  predictions: null,
  predictionOutcomes: null,
  // The account's tally: `_id` is the account id
  riskCalibration: (account) => `^${account}$`,
  // `${accountId}:${hash of the customer}`
  holdouts: startsWith,
  attempts: null,
  // `${gateway name}|recovery/${accountId}/${key}/${n}`: the gateway's idempotency key of an attempt
  sandboxCharges: (account) => `^[^|]*\\|recovery/${account}/`,
  sandboxCards: null,
  // `${accountId}/${platform}/${eventId}`
  connectorEvents: (account) => `^${account}/`,
  // `${accountId}/${pspReference}`
  adyenAuthorisations: (account) => `^${account}/`,
  // `${accountId}:${hash of what was named}`
  erasures: startsWith,
  answerClaims: null,
  attemptSends: null,
  // The deployment's one record of its master key: no account's.
  masterKeyCheck: null,
  // `${accountId}:${hash of the warning's eventId}`
  expiryWarnings: startsWith,
};

/**
 * Deletes every document of an account in every collection (account closure): those with its `accountId`
 * and those whose `_id` embeds it where that collection's ids put it (per-customer, per-card and per-attempt
 * records, the sandbox ledger, learned statistics); the account itself goes last, so an interrupted run can
 * be run again. Returns how many documents there were.
 */
export async function deleteAccountDocuments(db: Db, accountId: string): Promise<number> {
  const account = literally(accountId);
  let deleted = 0;
  for (const [name, pattern] of Object.entries(embedding) as Array<
    [keyof typeof embedding, IdPattern | null]
  >) {
    const mentions: Filter<AnyDoc> = pattern
      ? { $or: [{ accountId }, { _id: { $regex: new RegExp(pattern(account)) } }] }
      : { accountId };
    deleted += (await db.collection<AnyDoc>(collections[name]).deleteMany(mentions)).deletedCount;
  }
  return (
    deleted + (await db.collection<AnyDoc>(collections.accounts).deleteOne({ _id: accountId })).deletedCount
  );
}
