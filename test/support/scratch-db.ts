import { randomUUID } from 'node:crypto';
import { MongoClient, type Db, type MongoClientOptions } from 'mongodb';
import { afterAll, beforeAll, inject } from 'vitest';

/**
 * A fresh database on the shared test server for the calling test file, dropped after it. Registers its
 * own beforeAll and afterAll, so call it at the top level of the file before hooks that use the database.
 */
export function scratchDb(
  prefix: string,
  options?: MongoClientOptions,
): { client: () => MongoClient; db: () => Db } {
  let client: MongoClient | undefined;
  let db: Db | undefined;
  beforeAll(async () => {
    client = await MongoClient.connect(inject('mongoUri'), options);
    db = client.db(`t_${prefix}_${randomUUID().slice(0, 8)}`);
  });
  afterAll(async () => {
    await db?.dropDatabase();
    await client?.close();
  });
  const ready = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('scratchDb is used before its beforeAll ran');
    return value;
  };
  return { client: () => ready(client), db: () => ready(db) };
}
