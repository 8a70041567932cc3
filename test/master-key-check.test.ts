import { randomBytes } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { ConfigurationError } from '../runtime/configuration-error.js';
import { seal } from '../runtime/crypto.js';
import { checkMasterKey } from '../store/master-key-check.js';
import { runCli } from './support/cli.js';
import { scratchDb } from './support/scratch-db.js';

// Every API, worker and CLI process checks its master key against the database before it seals or opens
// anything: the first to start records the key's fingerprint, the rest must hold the same key.

const { client } = scratchDb('keycheck');
const freshDb = () => client().db(`t_keycheck_${randomBytes(4).toString('hex')}`);

describe('checkMasterKey', () => {
  it('the first key on a database is recorded; the same key passes again, another is refused', async () => {
    const db = freshDb();
    const [a, b] = [randomBytes(32), randomBytes(32)];
    await checkMasterKey(db, a);
    await checkMasterKey(db, Buffer.from(a));
    await expect(checkMasterKey(db, b)).rejects.toThrow(ConfigurationError);
    await expect(checkMasterKey(db, b)).rejects.toThrow(
      /not the one this database's secrets are sealed with/,
    );
    // Only a fingerprint is stored, never the key.
    const stored = await db.collection('masterKeyCheck').find().toArray();
    expect(stored).toHaveLength(1);
    expect(JSON.stringify(stored)).not.toContain(a.toString('base64'));
    expect(JSON.stringify(stored)).not.toContain(a.toString('hex'));
    await db.dropDatabase();
  });

  it('a database from before the check: a key its secrets do not open with is refused, and not recorded', async () => {
    const db = freshDb();
    const [a, b] = [randomBytes(32), randomBytes(32)];
    await db
      .collection<{ _id: string; signingSecret: string }>('accounts')
      .insertOne({ _id: 'acct_old', signingSecret: seal(a, 'whsec_old') });
    await expect(checkMasterKey(db, b)).rejects.toThrow(ConfigurationError);
    expect(await db.collection('masterKeyCheck').countDocuments()).toBe(0);
    await checkMasterKey(db, a);
    await expect(checkMasterKey(db, b)).rejects.toThrow(ConfigurationError);
    await db.dropDatabase();
  });

  it('two first starts with different keys at once: one key is recorded, the other process is refused', async () => {
    const db = freshDb();
    const results = await Promise.allSettled([
      checkMasterKey(db, randomBytes(32)),
      checkMasterKey(db, randomBytes(32)),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    await db.dropDatabase();
  });
});

describe('the CLI with another master key', () => {
  it('exits 2 naming the mismatch, before it reads or changes anything', async () => {
    const db = freshDb();
    await checkMasterKey(db, randomBytes(32));
    const run = await runCli(
      [
        'accounts',
        'create',
        '--name',
        'Wrong key',
        '--gateway',
        'test',
        '--webhook-url',
        'https://example.com/hooks',
      ],
      {
        MONGODB_URI: `${inject('mongoUri')}${db.databaseName}`,
        RECOUP_MASTER_KEY: randomBytes(32).toString('base64'),
      },
    );
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/not the one this database's secrets are sealed with/);
    expect(await db.collection('accounts').countDocuments()).toBe(0);
    await db.dropDatabase();
  }, 60_000);
});
