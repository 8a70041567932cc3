import { MongoClient, MongoServerError, type Db } from 'mongodb';

/** Opens a MongoDB connection; the database name comes from the URI path (default `recoup`). */
export async function connectMongo(uri: string): Promise<{ client: MongoClient; db: Db }> {
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 10_000, retryWrites: false });
  await client.connect();
  const name = new URL(uri.replace(/^mongodb(\+srv)?:/, 'http:')).pathname.replace(/^\//, '') || 'recoup';
  return { client, db: client.db(name) };
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
