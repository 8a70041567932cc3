import { describe, expect, it } from 'vitest';
import { runCli, type CliRun } from './support/cli.js';

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
