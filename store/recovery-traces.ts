import type { Db } from 'mongodb';
import { idsOfAccount } from './account-data.js';
import { inBatches } from './batches.js';
import { collections } from './collections.js';
import { erasedToken } from './recoveries.js';

/** A document that names a recovery by its transaction id: a customer index entry, a block, a duplicate claim. */
interface TraceDoc {
  _id: string;
  transactionId: string | null;
  at?: Date;
}

/** The time a forgotten duplicate claim keeps: the epoch, past every window. */
const forgotten = new Date(0);

/**
 * Which of the documents' transactions no longer have a recovery (data retention deleted it, or a recovery
 * whose workflow never started was discarded): the ids of those documents.
 */
async function namingNoRecovery(db: Db, docs: TraceDoc[]): Promise<string[]> {
  const ids = [...new Set(docs.flatMap((d) => (d.transactionId ? [d.transactionId] : [])))];
  const kept = await db
    .collection<{ _id: string }>(collections.recoveries)
    .find({ _id: { $in: ids } }, { projection: { _id: 1 } })
    .toArray();
  const existing = new Set(kept.map((r) => r._id));
  return docs.filter((d) => d.transactionId && !existing.has(d.transactionId)).map((d) => d._id);
}

/**
 * Unsets `transactionId` (to `unlinked`) on the account's documents of `collection` that name a recovery
 * no longer there; returns how many changed.
 */
async function unlinkGone(db: Db, accountId: string, collection: string, unlinked: string | null) {
  const docs = db.collection<TraceDoc>(collection);
  const linked = docs.find(
    { _id: { $regex: idsOfAccount(accountId) }, transactionId: { $nin: [null, unlinked] } },
    { projection: { transactionId: 1 } },
  );
  let changed = 0;
  for await (const batch of inBatches(linked)) {
    const gone = await namingNoRecovery(db, batch);
    // Only while they still name what was read: a block a new recovery wrote meanwhile stays its own.
    const named = [...new Set(batch.flatMap((d) => (d.transactionId ? [d.transactionId] : [])))];
    if (gone.length > 0)
      changed += (
        await docs.updateMany(
          { _id: { $in: gone }, transactionId: { $in: named } },
          { $set: { transactionId: unlinked } },
        )
      ).modifiedCount;
  }
  return changed;
}

/**
 * After data retention deleted an account's old recoveries, what still tied them to a customer or a card
 * no longer names them, as an erasure leaves it: the customer index entries under a hash of the email
 * (they keep their numbers, so the paywall and retention counters stay exact, and lead nowhere), the blocks
 * of the cards the recoveries were refused on (kept for the risk screen, naming `erased`) and the 5-minute
 * duplicate claims made before `cutoff` (they keep their numbers, and lose their transaction and time: none
 * is within its window). Found by what they name, so what an earlier purge left is taken too. Returns how
 * many records changed.
 */
export async function unlinkPurgedRecoveries(db: Db, accountId: string, cutoff: Date): Promise<number> {
  const entries = await unlinkGone(db, accountId, collections.customerRecoveries, null);
  const blocks = await unlinkGone(db, accountId, collections.blockedCards, erasedToken);
  const claims = await db
    .collection<TraceDoc>(collections.velocity)
    .updateMany(
      { _id: { $regex: idsOfAccount(accountId) }, at: { $lt: cutoff, $gt: forgotten } },
      { $set: { transactionId: erasedToken, at: forgotten } },
    );
  return entries + blocks + claims.modifiedCount;
}
