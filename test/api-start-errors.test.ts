import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';

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

describe('an API process that cannot start', () => {
  it('prints a configuration error as one line naming every bad variable, without a stack, and exits 1', async () => {
    const run = await startApi({ PORT: '70000', RECOUP_MASTER_KEY: 'c2hvcnQ=' });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /^Invalid configuration: PORT: .+ RECOUP_MASTER_KEY: must be 32 bytes, base64-encoded\n$/,
    );
  });

  it('prints any other error with its stack', async () => {
    const key = randomBytes(32).toString('base64');
    const run = await startApi({ RECOUP_MASTER_KEY: key, MONGODB_URI: 'mongodb://' });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/MongoParseError/);
    expect(run.stderr).toMatch(/\n\s+at /);
  });
});
