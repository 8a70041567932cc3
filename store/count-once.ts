import type { Db, OptionalUnlessRequiredId } from 'mongodb';
import { isDuplicateKey } from './mongo.js';

/** A row of an insert-only log that is counted into a tally. */
export interface Countable {
  _id: string;
  /** When the row was logged (absent on rows logged before counts were marked: counted as logged). */
  loggedAt?: Date;
  /** False until the row's count is in the tally. */
  counted?: boolean;
}

/** A row still uncounted this long after it was logged was left by a writer that died between its writes. */
export const uncountedAfterMs = 5 * 60_000;

/**
 * Logs `row` once (its `_id` decides) and counts it into its tally once, surviving a crash between the
 * two writes: the row is logged uncounted, `count` adds it to the tally, then the row is marked counted. A
 * later call for the same row that finds it logged but uncounted long after (`uncountedAfterMs`) counts it
 * in the dead writer's place; one that finds it younger leaves it to its writer, still at work. Counting it
 * twice would take a writer stalled that long between its two writes, or two such late calls at once.
 * Returns the row as first logged.
 */
export async function logAndCountOnce<Row extends Countable>(
  db: Db,
  logName: string,
  row: Row,
  count: (first: Row) => Promise<void>,
  now: Date,
): Promise<Row> {
  const rows = db.collection<Countable>(logName);
  const markCounted = () => rows.updateOne({ _id: row._id }, { $set: { counted: true } });
  const logged: Row = { ...row, loggedAt: now, counted: false };
  try {
    await db.collection<Row>(logName).insertOne(logged as OptionalUnlessRequiredId<Row>);
  } catch (error) {
    if (!isDuplicateKey(error)) throw error;
    const first = (await rows.findOne({ _id: row._id })) as Row | null;
    if (!first) return logged;
    const abandoned =
      first.counted === false &&
      first.loggedAt !== undefined &&
      now.getTime() - first.loggedAt.getTime() >= uncountedAfterMs;
    if (!abandoned) return first;
    await count(first);
    await markCounted();
    return first;
  }
  await count(logged);
  await markCounted();
  return logged;
}
