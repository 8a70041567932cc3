import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runCli, type CliRun } from './support/cli.js';
import { call, startStack, type Stack } from './support/stack.js';

interface StatusView {
  transactionId: string;
  status: string;
  state: string;
  amount: number;
}
interface Page {
  data: StatusView[];
  hasMore: boolean;
}

// A named database and master key, so the real `recoup` executable works on the stack's data.
const dbName = `rl_${randomBytes(4).toString('hex')}`;
const masterKey = randomBytes(32);
let stack: Stack;
let clientId: string;
let key: string;
/** The recoveries made, newest last: succeeded, queued, blocked, queued. */
const made: Array<{ id: string; state: string }> = [];

const recoup = (...args: string[]): Promise<CliRun> =>
  runCli(args, {
    MONGODB_URI: `${inject('mongoUri')}${dbName}`,
    RECOUP_MASTER_KEY: masterKey.toString('base64'),
  });

const list = (query = '', apiKey = key) =>
  call<Page>(stack.baseUrl, 'GET', `/api/recoveries${query}`, { key: apiKey });

beforeAll(async () => {
  stack = await startStack({ dbName, masterKey });
  const created = await stack.createAccount();
  clientId = created.account.id;
  key = created.apiKey;
  const cases = [
    ['tok_visa', 'try_again_later', 'succeeded'],
    ['tok_visa', 'insufficient_funds', 'queued'],
    ['tok_visa', 'fraudulent', 'blocked'],
    ['tok_mastercard', 'do_not_honor', 'queued'],
  ] as const;
  for (const [i, [token, code, state]] of cases.entries()) {
    const idempotencyKey = `list-${i}`;
    const res = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key,
      body: { paymentMethodToken: token, originalDeclineCode: code, amount: 1000 + i, idempotencyKey },
    });
    const doc = await stack.stores.recoveries.findByKey(clientId, idempotencyKey);
    expect(doc?.state, `${code}: ${JSON.stringify(res.body)}`).toBe(state);
    made.push({ id: doc?.publicId ?? '', state });
  }
});
afterAll(() => stack.close());

const newestFirst = () => [...made].reverse();

describe('GET /api/recoveries', () => {
  it('lists the account’s recoveries newest first as status records', async () => {
    const res = await list();
    expect(res.status).toBe(200);
    expect(res.body.hasMore).toBe(false);
    expect(res.body.data.map((r) => [r.transactionId, r.state])).toEqual(
      newestFirst().map((m) => [m.id, m.state]),
    );
    const one = await call(stack.baseUrl, 'GET', `/api/recovery/status/${made[1]?.id ?? ''}`, { key });
    expect(res.body.data[2]).toEqual(one.body);
  });

  it.each([
    ['?status=unknown', ['queued', 'queued']],
    ['?status=succeeded', ['succeeded']],
    ['?state=blocked', ['blocked']],
    ['?status=failed', []],
    ['?status=unknown&state=blocked', []],
  ])('%s → %j', async (query, states) => {
    const res = await list(query);
    expect(res.status).toBe(200);
    expect(res.body.data.map((r) => r.state)).toEqual(states);
  });

  it('pages with before, each recovery exactly once', async () => {
    const seen: string[] = [];
    let before = '';
    for (const more of [true, true, true, false]) {
      const res = await list(`?limit=1${before ? `&before=${before}` : ''}`);
      expect(res.body.data).toHaveLength(1);
      expect(res.body.hasMore).toBe(more);
      before = res.body.data[0]?.transactionId ?? '';
      seen.push(before);
    }
    expect(seen).toEqual(newestFirst().map((m) => m.id));
  });

  it('shows nothing of another account, nor pages from one of its recoveries', async () => {
    const other = await stack.createAccount();
    expect((await list('', other.apiKey)).body).toEqual({ data: [], hasMore: false });
    const res = await list(`?before=${made[0]?.id ?? ''}`, other.apiKey);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ details: { before: [expect.any(String)] } });
  });

  it.each([
    ['?status=lost', 'status'],
    ['?state=waiting', 'state'],
    ['?limit=0', 'limit'],
    ['?limit=500', 'limit'],
    ['?customerEmail=a-b.co', 'customerEmail'],
    ['?email=a@b.co', 'email'],
  ])('%s is a 400 naming %s', async (query, field) => {
    const res = await list(query);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ details: { [field]: expect.any(Array) } });
  });

  it('answers 20 recoveries a page when no limit is given', async () => {
    const other = await stack.createAccount();
    for (let i = 0; i < 21; i += 1) {
      const res = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
        key: other.apiKey,
        body: {
          paymentMethodToken: `tok_page_${i}`,
          originalDeclineCode: 'try_again_later',
          amount: 5000 + i,
        },
      });
      expect(res).toMatchObject({ status: 200, body: { success: true } });
    }
    const res = await list('', other.apiKey);
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(20);
    expect(res.body.hasMore).toBe(true);
    expect(res.body.data.map((r) => r.amount)).toEqual(Array.from({ length: 20 }, (_, i) => 5020 - i));
  });

  it('needs the secret key', async () => {
    expect((await call(stack.baseUrl, 'GET', '/api/recoveries')).status).toBe(401);
  });
});

describe('recoup recoveries list', () => {
  it('--json prints what the API answers', async () => {
    const run = await recoup('recoveries', 'list', clientId, '--status', 'unknown', '--json');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual((await list('?status=unknown')).body);
  });

  it('prints a table, and how to get the next page', async () => {
    const run = await recoup('recoveries', 'list', clientId, '--limit', '2');
    expect(run.code).toBe(0);
    const [header, ...rows] = run.stdout.trim().split('\n');
    expect(header).toMatch(
      /^TRANSACTION ID\s+CREATED\s+STATE\s+AMOUNT\s+ATTEMPTS\s+NEXT ATTEMPT\s+LAST DECLINE/,
    );
    expect(rows[0]).toContain(made[3]?.id);
    expect(rows[0]).toContain('queued');
    expect(rows[0]).toContain('$10.03');
    expect(rows[1]).toContain(made[2]?.id);
    expect(rows[2]).toBe(`More: recoup recoveries list ${clientId} --limit 2 --before ${made[2]?.id ?? ''}`);
  });

  it.each([
    [['--state', 'waiting'], 2, '--state must be one of'],
    [['--limit', '0'], 2, '--limit must be an integer from 1 to 100'],
    [['--before', 'nope'], 1, 'no recovery nope'],
  ])('%j exits %i', async (args, code, message) => {
    const run = await recoup('recoveries', 'list', clientId, ...args);
    expect(run.code).toBe(code);
    expect(run.stderr).toContain(message);
  });

  it('an unknown account exits 1', async () => {
    const run = await recoup('recoveries', 'list', 'acct_nope');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('acct_nope');
  });
});

describe('recoup recoveries show', () => {
  const status = (id: string) => call(stack.baseUrl, 'GET', `/api/recovery/status/${id}`, { key });

  it('--json prints the status record the API answers, found by either id or the idempotency key', async () => {
    const succeeded = made[0]?.id ?? '';
    const expected = (await status(succeeded)).body;
    expect(expected).toMatchObject({ state: 'succeeded', attempts: [{ attempt: 1, outcome: 'approved' }] });
    for (const ref of [
      ['--transaction-id', succeeded],
      ['--idempotency-key', 'list-0'],
    ]) {
      const run = await recoup('recoveries', 'show', clientId, ...ref, '--json');
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout)).toEqual(expected);
    }
  });

  it('prints the record, the workflow to open in the Temporal UI and a table of the charges', async () => {
    const run = await recoup('recoveries', 'show', clientId, '--idempotency-key', 'list-0');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/state\s+succeeded/);
    expect(run.stdout).toMatch(new RegExp(`workflowId\\s+recovery/${clientId}/list-0`));
    expect(run.stdout).toMatch(
      /^#\s+AT\s+GATEWAY\s+ROLE\s+OUTCOME\s+DECLINE CODE\s+GATEWAY TRANSACTION ID$/m,
    );
    expect(run.stdout).toMatch(/^1\s+\S+\s+test\s+primary\s+approved\s+-\s+\S+$/m);
    const blocked = await recoup('recoveries', 'show', clientId, '--transaction-id', made[2]?.id ?? '');
    expect(blocked.stdout).toContain('No charges.');
  });

  it.each([
    [[], 2, 'give exactly one of --transaction-id and --idempotency-key'],
    [['--transaction-id', 'a', '--idempotency-key', 'b'], 2, 'give exactly one'],
    [['--idempotency-key', 'list-unknown'], 1, 'no recovery'],
  ])('%j exits %i', async (args, code, message) => {
    const run = await recoup('recoveries', 'show', clientId, ...args);
    expect(run.code).toBe(code);
    expect(run.stderr).toContain(message);
  });
});

describe('one customer’s recoveries: GET /api/recoveries?customerEmail= and --customer-email', () => {
  it('lists only theirs, newest first, by status, a page at a time, through the customer index', async () => {
    const ids: string[] = [];
    for (const [i, [email, token, code]] of [
      ['Alice@Example.com', 'tok_alice_1', 'insufficient_funds'],
      ['bob@example.com', 'tok_bob', 'insufficient_funds'],
      ['alice@example.com', 'tok_alice_2', 'try_again_later'],
      ['alice@example.com', 'tok_alice_3', 'do_not_honor'],
    ].entries()) {
      const res = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
        key,
        body: {
          paymentMethodToken: token,
          originalDeclineCode: code,
          amount: 2000 + i,
          customerEmail: email,
        },
      });
      ids.push(String(res.body.transactionId));
    }
    const alice = [ids[3], ids[2], ids[0]];
    const all = await list('?customerEmail=ALICE%40example.com');
    expect(all.status).toBe(200);
    expect(all.body.data.map((r) => r.transactionId)).toEqual(alice);
    expect(all.body.hasMore).toBe(false);
    // By status: the one recovered at once is not under way.
    const open = await list('?customerEmail=alice%40example.com&status=unknown');
    expect(open.body.data.map((r) => r.transactionId)).toEqual([ids[3], ids[0]]);
    // Page by page.
    const first = await list('?customerEmail=alice%40example.com&limit=2');
    expect(first.body).toMatchObject({ hasMore: true });
    const second = await list(`?customerEmail=alice%40example.com&limit=2&before=${alice[1]}`);
    expect(second.body.data.map((r) => r.transactionId)).toEqual([alice[2]]);
    expect(second.body.hasMore).toBe(false);
    expect((await list('?customerEmail=nobody%40example.com')).body).toEqual({ data: [], hasMore: false });

    const alicesPages = [
      'recoveries',
      'list',
      clientId,
      '--customer-email',
      'alice@example.com',
      '--limit',
      '2',
    ];
    const run = await recoup(...alicesPages, '--json');
    expect(JSON.parse(run.stdout)).toEqual(first.body);
    const table = await recoup(...alicesPages);
    expect(table.stdout).toContain(
      `More: recoup recoveries list ${clientId} --customer-email alice@example.com --limit 2 --before ${alice[1]}`,
    );
    const bad = await recoup('recoveries', 'list', clientId, '--customer-email', 'nope');
    expect(bad.code).toBe(2);
  });
});
