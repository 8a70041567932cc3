import type { Db, Filter } from 'mongodb';
import { collections } from './collections.js';

/** Any of our documents: string ids, and an `accountId` on those that belong to one account. */
interface AnyDoc {
  _id: string;
  accountId?: string;
}

/** Every id that embeds an account's id does so between delimiters (`acct:…`, `recovery/acct/…`, `test|…`). */
function embedding(accountId: string): RegExp {
  const escaped = accountId.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[:/|])${escaped}([:/|]|$)`);
}

/**
 * Deletes every document of an account in every collection (account closure): those with its `accountId`
 * and those whose `_id` embeds it (per-customer, per-card and per-attempt records, the sandbox ledger,
 * learned statistics); the account itself goes last, so an interrupted run can be run again. Returns how
 * many documents there were.
 */
export async function deleteAccountDocuments(db: Db, accountId: string): Promise<number> {
  const mentions: Filter<AnyDoc> = { $or: [{ accountId }, { _id: { $regex: embedding(accountId) } }] };
  const of = (name: string) => db.collection<AnyDoc>(name);
  let deleted = 0;
  for (const name of Object.values(collections))
    if (name !== collections.accounts) deleted += (await of(name).deleteMany(mentions)).deletedCount;
  return deleted + (await of(collections.accounts).deleteOne({ _id: accountId })).deletedCount;
}
