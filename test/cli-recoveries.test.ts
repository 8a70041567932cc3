import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnvOf, runCli, type CliRun } from './support/cli.js';
import { call, startStack, type Stack } from './support/stack.js';

// A named database and master key, so the real `recoup` executable works on the stack's data.
const dbName = `clr_${randomBytes(4).toString('hex')}`;
const masterKey = randomBytes(32);
let stack: Stack;
let clientId: string;
/** Two recoveries of a customer whose address has a quote in it, oldest first. */
const theirs: string[] = [];
const email = "o'brien&co@example.com";

const recoup = (...args: string[]): Promise<CliRun> => runCli(args, cliEnvOf(stack, masterKey));

beforeAll(async () => {
  stack = await startStack({ dbName, masterKey });
  const created = await stack.createAccount();
  clientId = created.account.id;
  for (const amount of [4999, 1000]) {
    const res = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: created.apiKey,
      body: {
        paymentMethodToken: `tok_visa_${amount}`,
        originalDeclineCode: 'insufficient_funds',
        amount,
        currency: 'USD',
        customerEmail: email,
      },
    });
    theirs.push(String(res.body.transactionId));
  }
});
afterAll(() => stack.close());

/** The words a POSIX shell makes of a command line. */
const shellWords = (line: string): string[] =>
  execFileSync('sh', ['-c', `set -- ${line}; printf '%s\\n' "$@"`], { encoding: 'utf8' })
    .split('\n')
    .slice(0, -1);

describe('recoup recoveries', () => {
  it('show prints the amount as list does, in the currency’s units', async () => {
    const run = await recoup('recoveries', 'show', clientId, '--transaction-id', theirs[0] ?? '');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^amount\s+\$49\.99$/m);
    expect(run.stdout).toMatch(/^currency\s+USD$/m);
    const listed = await recoup('recoveries', 'list', clientId, '--customer-email', email);
    expect(listed.stdout.split('\n').find((l) => l.startsWith(theirs[0] ?? ''))).toContain('$49.99');
  });

  it('the next-page command it prints survives a shell, quotes and all', async () => {
    const run = await recoup('recoveries', 'list', clientId, '--customer-email', email, '--limit', '1');
    expect(run.code).toBe(0);
    const more = run.stdout.split('\n').find((l) => l.startsWith('More: '));
    expect(more).toBe(
      `More: recoup recoveries list ${clientId} --customer-email 'o'\\''brien&co@example.com' --limit 1 --before ${theirs[1]}`,
    );
    const words = shellWords(more?.slice('More: '.length) ?? '');
    expect(words).toEqual([
      'recoup',
      'recoveries',
      'list',
      clientId,
      '--customer-email',
      email,
      '--limit',
      '1',
      '--before',
      theirs[1],
    ]);
    const next = await recoup(...words.slice(1));
    expect(next.code).toBe(0);
    expect(next.stdout).toContain(theirs[0]);
    expect(next.stdout).not.toContain('More:');
  });

  it('stop, asked twice for a payment made elsewhere (an answer lost), exits 0 both times', async () => {
    const transactionId = theirs[1] ?? '';
    for (const time of ['first', 'again']) {
      const run = await recoup(
        'recoveries',
        'stop',
        clientId,
        '--transaction-id',
        transactionId,
        '--reason',
        'paid_elsewhere',
        '--json',
      );
      expect(run.code, time).toBe(0);
      expect(JSON.parse(run.stdout), time).toEqual({
        transactionId,
        outcome: 'stopped',
        state: 'paid_elsewhere',
      });
    }
  });
});
