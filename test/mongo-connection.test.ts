import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { connectMongo, databaseNameOf } from '../store/mongo.js';

describe('the MongoDB URI', () => {
  it.each([
    ['mongodb://h1:27017,h2:27017,h3:27017/recoup_rs?replicaSet=rs0', 'recoup_rs'],
    ['mongodb://user:secret@h1:27017,h2:27017/billing', 'billing'],
    ['mongodb+srv://cluster0.example.net/atlas_db?retryWrites=true&w=majority', 'atlas_db'],
    ['mongodb://[::1]:27017/v6', 'v6'],
    ['mongodb://%2Ftmp%2Fmongodb-27017.sock/on_socket', 'on_socket'],
    ['mongodb://127.0.0.1:27017/my%20db', 'my db'],
    ['mongodb://127.0.0.1:27017/', 'recoup'],
    ['mongodb://127.0.0.1:27017', 'recoup'],
    ['mongodb://127.0.0.1:27017/?replicaSet=rs0', 'recoup'],
  ])('%s names the database %s', (uri, name) => {
    expect(databaseNameOf(uri)).toBe(name);
  });

  it('cannot make reads leave the primary or turn retryable writes off', async () => {
    const name = `t_conn_${randomUUID().slice(0, 8)}`;
    const { client, db } = await connectMongo(
      `${inject('mongoUri')}${name}?readPreference=secondaryPreferred&retryWrites=true`,
    );
    try {
      expect(db.databaseName).toBe(name);
      expect(client.options.readPreference.mode).toBe('primary');
      expect(client.options.retryWrites).toBe(true);
      const probe = db.collection<{ _id: string }>('probe');
      await probe.insertOne({ _id: 'written' });
      expect(await probe.findOne({})).toEqual({ _id: 'written' });
    } finally {
      await client.db(name).dropDatabase();
      await client.close();
    }
  });
});
