import { MongoClient, MongoServerError, type Db } from 'mongodb';
import { ConnectionString } from 'mongodb-connection-string-url';

/**
 * Opens a MongoDB connection; the database name comes from the URI path (default `recoup`). Reads go to the
 * primary whatever the URI says: the store reads back what it has just written (a numbered claim's winner,
 * a new account). Retryable writes stay on (the driver's default; a standalone server such as FerretDB has
 * none), so a write in flight during a replica set's election is sent once more rather than failed.
 */
export async function connectMongo(uri: string): Promise<{ client: MongoClient; db: Db }> {
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 10_000, readPreference: 'primary' });
  const name = databaseNameOf(uri);
  await client.connect();
  return { client, db: client.db(name) };
}

/**
 * The database a MongoDB URI names in its path, `recoup` when it names none; read with the driver's own
 * parser, so a replica set's seed list (`mongodb://h1:27017,h2:27017/recoup?replicaSet=rs0`) is a URI too.
 */
export function databaseNameOf(uri: string): string {
  return decodeURIComponent(new ConnectionString(uri).pathname.replace(/^\//, '')) || 'recoup';
}

/** True for a unique-index violation (E11000): how the store makes things happen exactly once. */
export function isDuplicateKey(error: unknown): boolean {
  return error instanceof MongoServerError && error.code === 11000;
}

/**
 * Runs an upsert, and once more if it lost the race to create the document: two upserts of one missing
 * _id both try to insert it, and FerretDB, unlike MongoDB since 4.2, does not retry the loser as an update.
 */
export async function upsert<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (!isDuplicateKey(error)) throw error;
    return write();
  }
}

/** Pings the server; used by the health check. */
export async function pingMongo(db: Db): Promise<boolean> {
  try {
    await db.command({ ping: 1 });
    return true;
  } catch {
    return false;
  }
}
