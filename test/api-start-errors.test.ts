import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { checkMasterKey } from '../store/master-key-check.js';
import { scratchDb } from './support/scratch-db.js';

// What an operator sees when `api/main.ts` cannot start: a configuration mistake is one line naming the
// variables to fix; anything unexpected keeps its stack, for whoever has to debug it.

/** Starts the production API entry point with only `env` (and PATH) and waits for it to exit. */
function startApi(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      ['--import', 'tsx', 'api/main.ts'],
      { env: { PATH: process.env.PATH ?? '', ...env } },
      (_error, _stdout, stderr) => resolve({ code: child.exitCode, stderr }),
    );
  });
}

const { db } = scratchDb('apistart');

describe('an API process that cannot start', () => {
  it('prints a configuration error as one line naming every bad variable, without a stack, and exits 1', async () => {
    const run = await startApi({ PORT: '70000', RECOUP_MASTER_KEY: 'c2hvcnQ=' });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /^Invalid configuration: PORT: .+ RECOUP_MASTER_KEY: must be 32 bytes, base64-encoded\n$/,
    );
  });

  it('a master key other than the one the database’s secrets are sealed with: one line, exit 1', async () => {
    await checkMasterKey(db(), randomBytes(32));
    const run = await startApi({
      RECOUP_MASTER_KEY: randomBytes(32).toString('base64'),
      MONGODB_URI: `${inject('mongoUri')}${db().databaseName}`,
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /^The master key is not the one this database's secrets are sealed with: .+\n$/,
    );
  });

  it('a master.key file that does not hold 32 bytes: one line naming the file, exit 1', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'recoup-key-'));
    writeFileSync(join(dataDir, 'master.key'), 'c2hvcnQ=');
    const run = await startApi({ DATA_DIR: dataDir });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`${join(dataDir, 'master.key')} must hold 32 bytes, base64-encoded\n`);
  });

  it('prints any other error with its stack', async () => {
    const key = randomBytes(32).toString('base64');
    const run = await startApi({ RECOUP_MASTER_KEY: key, MONGODB_URI: 'mongodb://' });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/MongoParseError/);
    expect(run.stderr).toMatch(/\n\s+at /);
  });
});
