import { describe, expect, it } from 'vitest';
import { runCli, runCliIntoClosedPipe, type CliRun } from './support/cli.js';

// Nothing listens on port 9: usage and help must come without loading configuration or reaching MongoDB.
const recoup = (...args: string[]): Promise<CliRun> =>
  runCli(args, { MONGODB_URI: 'mongodb://127.0.0.1:9/recoup' });

const groups = ['accounts', 'webhooks', 'connectors', 'recoveries', 'reports', 'customers'];

describe('recoup usage', () => {
  it.each(['help', '--help', '-h', 'accounts --help'])(
    '`recoup %s` prints the usage of every command group to stdout and exits 0',
    async (line) => {
      const run = await recoup(...line.split(' '));
      expect(run).toMatchObject({ code: 0, stderr: '' });
      expect(run.stdout).toMatch(/^recoup: the Recoup operator CLI\..*\n\nUsage:\n/);
      for (const group of groups) expect(run.stdout).toMatch(new RegExp(`^ {2}recoup ${group} \\S`, 'm'));
    },
  );

  it('`recoup help` into a pipe its reader has closed stops quietly and exits 0, without a stack trace', async () => {
    const run = await runCliIntoClosedPipe(['help'], { MONGODB_URI: 'mongodb://127.0.0.1:9/recoup' });
    expect(run).toEqual({ code: 0, stderr: '' });
  });

  it('`recoup` alone prints the same usage to stderr and exits 2', async () => {
    const [bare, help] = await Promise.all([recoup(), recoup('help')]);
    expect(bare).toEqual({ code: 2, stdout: '', stderr: help.stdout });
  });

  it('an unknown command exits 2 and points at `recoup help`', async () => {
    expect(await recoup('frobnicate')).toEqual({
      code: 2,
      stdout: '',
      stderr: 'recoup: unknown command "frobnicate"; run `recoup help`\n',
    });
  });
});

describe('usage errors come before MongoDB is reached', () => {
  // Configuration loads (a master key is given), but nothing listens on port 9: a command that reached for
  // MongoDB would wait out its 10 s connect timeout and exit 1 with "cannot reach MongoDB". (Not timed here:
  // starting the CLI alone can take seconds on a busy machine; the exit code tells the two apart.)
  const offline = (...args: string[]): Promise<CliRun> =>
    runCli(args, {
      MONGODB_URI: 'mongodb://127.0.0.1:9/recoup',
      RECOUP_MASTER_KEY: Buffer.alloc(32, 7).toString('base64'),
    });

  it.each([
    ['accounts show', 'missing <clientId>'],
    ['accounts frobnicate', 'unknown accounts command "frobnicate"'],
    ['webhooks list extra', 'unexpected argument "extra"; usage: recoup webhooks list'],
    ['connectors set acct_x', 'missing <platform>'],
    ['accounts update acct_x --settings [1]', '--settings must be a JSON object'],
  ])('`recoup %s` exits 2 without reaching for MongoDB', async (line, message) => {
    const run = await offline(...line.split(' '));
    expect(run).toMatchObject({ code: 2, stdout: '' });
    expect(run.stderr).toContain(message);
    expect(run.stderr).not.toContain('MongoDB');
  });

  it.each([
    ['webhooks list --limit 5 --limit 6', '--limit is given more than once'],
    ['accounts show acct_x --json --json', '--json is given more than once'],
  ])('a single-value flag given twice is a usage error: `recoup %s`', async (line, message) => {
    const run = await offline(...line.split(' '));
    expect(run).toMatchObject({ code: 2, stdout: '' });
    expect(run.stderr).toContain(message);
  });

  it.each(['0x10', '1e1', ' 7', '+5', '1.0'])('an integer flag takes digits only, not %j', async (value) => {
    const run = await offline('recoveries', 'list', 'acct_x', `--limit=${value}`);
    expect(run).toMatchObject({ code: 2, stdout: '' });
    expect(run.stderr).toContain(`--limit must be an integer from 1 to 100; got "${value}"`);
  });

  it.each([
    ['customers export acct_x', 'recoup: name the customer by --email, --customer-id or --token\n'],
    ['customers export acct_x --email nope', 'recoup: invalid customer: --email: Invalid email address\n'],
    [
      'recoveries list acct_x --customer-email nope',
      'recoup: invalid --customer-email: Invalid email address\n',
    ],
  ])('errors name the flags, not the API fields: `recoup %s`', async (line, message) => {
    const run = await offline(...line.split(' '));
    expect(run).toMatchObject({ code: 2, stdout: '' });
    expect(run.stderr.startsWith(message)).toBe(true);
  });

  it('names the bad token by the flag and its place', async () => {
    const run = await offline('customers', 'erase', 'acct_x', '--token', 'tok_1', '--token', ' ');
    expect(run).toMatchObject({ code: 2, stdout: '' });
    expect(run.stderr).toBe('recoup: invalid customer: --token #2: must not be empty\n');
  });

  it('names a bad report window by its flag', async () => {
    const run = await offline('reports', 'summary', 'acct_x', '--from', '2025-01-01');
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('recoup: invalid report window: --from: Invalid ISO datetime');
  });
});
