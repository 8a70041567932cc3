import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { sha256 } from '../runtime/crypto.js';
import { collections } from '../store/collections.js';
import { runCli, runCliIntoClosedPipe, type CliRun } from './support/cli.js';
import { call, startStack, type Stack } from './support/stack.js';

const dbName = `cli_${randomUUID().slice(0, 8)}`;
const masterKey = randomBytes(32);
let dataDir: string;
let stack: Stack;

/** The environment that points the real `recoup` at the test database. */
const cliEnv = (): Record<string, string> => ({
  MONGODB_URI: `${inject('mongoUri')}${dbName}`,
  DATA_DIR: dataDir,
  RECOUP_MASTER_KEY: masterKey.toString('base64'),
});
/** The real `recoup` on the test database, with `env` added to its environment. */
const recoupWith = (env: Record<string, string>, ...args: string[]): Promise<CliRun> =>
  runCli(args, { ...cliEnv(), ...env });
const recoup = (...args: string[]): Promise<CliRun> => recoupWith({}, ...args);

interface Created {
  clientId: string;
  apiKey: string;
  publishableKey: string;
  webhookSigningSecret: string;
  testMode: boolean;
  gateways: Array<{ name: string; kind: string; test: boolean }>;
  settings: Record<string, unknown> & { proofMode: { enabled: boolean; controlPercent: number } };
}

async function createAccount(...extra: string[]): Promise<Created> {
  const run = await recoup(
    'accounts',
    'create',
    '--name',
    'Acme Fitness',
    '--webhook-url',
    'https://127.0.0.1:9/hooks',
    '--gateway',
    'test',
    '--json',
    ...extra,
  );
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return JSON.parse(run.stdout) as Created;
}

/** A protected route: answers 404 for an unknown transaction once the caller is authenticated. */
const statusOfUnknown = (headers: Record<string, string>) =>
  call(stack.baseUrl, 'GET', `/api/recovery/status/${randomUUID()}`, { headers });

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'recoup-cli-'));
  // The API works on the very database the CLI writes to, with the same master key.
  stack = await startStack({ worker: false, dbName, masterKey });
});
afterAll(async () => {
  await stack.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('recoup <group> <subcommand>', () => {
  it.each([
    ['accounts', 'create, list, show, update, set-gateways, rotate-key, rotate-webhook-secret, sweep, close'],
    ['webhooks', 'list, show, resend, test, resend-all'],
    ['connectors', 'set, remove, list'],
    ['recoveries', 'list, show, stop'],
    ['customers', 'export, erase'],
    ['reports', 'summary, breakdown'],
  ])('an unknown %s subcommand exits 2 naming the ones there are', async (group, names) => {
    const run = await recoup(group, 'frobnicate');
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`unknown ${group} command "frobnicate" (one of: ${names})`);
  });

  it('refuses to run without the service’s master key rather than make a new one (exit 2)', async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'recoup-cli-nokey-'));
    try {
      const run = await runCli(['accounts', 'list'], {
        MONGODB_URI: `${inject('mongoUri')}${dbName}`,
        DATA_DIR: elsewhere,
      });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('No master key');
      expect(existsSync(join(elsewhere, 'master.key'))).toBe(false);
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it('never repeats a malformed JSON flag, which may hold credentials', async () => {
    const secret = `sk_live_${randomBytes(8).toString('hex')}`;
    const run = await recoup(
      'accounts',
      'create',
      '--name',
      'A',
      '--webhook-url',
      'https://127.0.0.1:9/hooks',
      '--gateway',
      `stripe:{"secretKey":"${secret}"`,
    );
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('must be valid JSON');
    expect(run.stderr).not.toContain(secret);
  });

  it('takes no name of an object’s own machinery for a command', async () => {
    const command = await recoup('constructor');
    expect(command.code).toBe(2);
    expect(command.stderr).toContain('unknown command "constructor"');
    const subcommand = await recoup('webhooks', 'toString');
    expect(subcommand.code).toBe(2);
    expect(subcommand.stderr).toContain('unknown webhooks command "toString"');
  });
});

describe('recoup accounts create', () => {
  it('prints exactly one JSON object with the credentials, test mode and the defaulted settings', async () => {
    const created = await createAccount();
    expect(created.clientId).toMatch(/^acct_/);
    expect(created.apiKey).toMatch(/^sk_[A-Za-z0-9_-]{43}$/);
    expect(created.publishableKey).toMatch(/^pk_[A-Za-z0-9_-]{43}$/);
    expect(created.webhookSigningSecret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(created.testMode).toBe(true);
    expect(created.gateways).toEqual([{ name: 'test', kind: 'test', test: true }]);
    expect(created.settings).toMatchObject({
      webhookUrl: 'https://127.0.0.1:9/hooks',
      dunningEnabled: true,
      timezone: 'UTC',
      riskSkipThreshold: 85,
      rateLimitPerMinute: 60,
    });
  });

  it('keeps API keys only as hashes and the signing secret and gateway credentials sealed', async () => {
    const created = await createAccount('--backup-gateway', 'test:{"declineAll":"sealed_marker_7f3a"}');
    expect(created.gateways.map((g) => g.name)).toEqual(['test', 'test-2']);
    const keys = await stack.stores.db.collection(collections.apiKeys).find({}).toArray();
    expect(keys.map((k) => k._id)).toContain(sha256(created.apiKey));
    const everything = JSON.stringify([
      keys,
      await stack.stores.db.collection(collections.accounts).find({}).toArray(),
    ]);
    for (const secret of [
      created.apiKey,
      created.publishableKey,
      created.webhookSigningSecret,
      'sealed_marker_7f3a',
    ])
      expect(everything).not.toContain(secret);
    const gateways = (await stack.stores.accounts.withGateways(created.clientId))?.gateways;
    expect(gateways?.find((g) => g.name === 'test-2')?.credentials).toEqual({
      declineAll: 'sealed_marker_7f3a',
    });
  });

  it('refuses a bad setting with exit code 2 and a message naming it, and creates nothing', async () => {
    const before = (await stack.stores.accounts.list()).length;
    const tooHigh = await recoup(
      'accounts',
      'create',
      '--name',
      'X',
      '--webhook-url',
      'https://127.0.0.1:9/x',
      '--gateway',
      'test',
      '--settings',
      '{"riskSkipThreshold":101,"retryPolicy":{"maxAttemps":3},"rateLimitPerMinute":59}',
    );
    expect(tooHigh.code).toBe(2);
    expect(tooHigh.stdout).toBe('');
    expect(tooHigh.stderr).toContain('riskSkipThreshold');
    expect(tooHigh.stderr).toContain('retryPolicy.maxAttemps');
    // The spec's 60 executes a minute may be raised for an account, never lowered.
    expect(tooHigh.stderr).toContain('rateLimitPerMinute');
    expect(tooHigh.stderr.trim().split('\n')).toHaveLength(1);

    const plainHttp = await recoup(
      'accounts',
      'create',
      '--name',
      'X',
      '--webhook-url',
      'http://example.com/h',
      '--gateway',
      'test',
    );
    expect(plainHttp.code).toBe(2);
    expect(plainHttp.stderr).toMatch(/webhookUrl: must be an https:\/\/ URL/);

    const unknownKind = await recoup(
      'accounts',
      'create',
      '--name',
      'X',
      '--webhook-url',
      'https://127.0.0.1:9/x',
      '--gateway',
      'square:{}',
    );
    expect(unknownKind.code).toBe(2);
    expect(unknownKind.stderr).toContain('unknown gateway kind "square"');
    expect((await stack.stores.accounts.list()).length).toBe(before);
  });
});

describe('recoup accounts list, show and update', () => {
  it('lists and shows accounts as JSON and as aligned text', async () => {
    const created = await createAccount();
    const listed = await recoup('accounts', 'list', '--json');
    expect(listed.code).toBe(0);
    expect((JSON.parse(listed.stdout) as Array<{ clientId: string }>).map((a) => a.clientId)).toContain(
      created.clientId,
    );
    expect(listed.stdout).not.toContain('sk_');

    const table = await recoup('accounts', 'list');
    const [header, ...rows] = table.stdout.trim().split('\n');
    expect(header).toMatch(/^CLIENT ID\s+NAME\s+TEST MODE\s+GATEWAYS\s+CREATED\s+STATUS$/);
    const row = rows.find((r) => r.startsWith(created.clientId));
    expect(row?.indexOf('Acme Fitness')).toBe(header?.indexOf('NAME'));
    expect(row).toMatch(/\s+open$/);

    const shown = await recoup('accounts', 'show', created.clientId, '--json');
    expect(JSON.parse(shown.stdout)).toMatchObject({
      clientId: created.clientId,
      testMode: true,
      closingAt: null,
    });
    const text = await recoup('accounts', 'show', created.clientId);
    expect(text.stdout).toMatch(/^ {2}proofMode\.controlPercent\s+10$/m);
    expect(text.stdout).toMatch(/^status\s+open$/m);

    const missing = await recoup('accounts', 'show', 'acct_nope');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no account with clientId acct_nope');
  });

  it('`list --json` into a pipe its reader has closed stops quietly and exits 0, without a stack trace', async () => {
    await createAccount();
    expect(await runCliIntoClosedPipe(['accounts', 'list', '--json'], cliEnv())).toEqual({
      code: 0,
      stderr: '',
    });
  });

  it('applies --settings as a merge patch over the current settings, validated as a whole', async () => {
    const created = await createAccount();
    const updated = await recoup(
      'accounts',
      'update',
      created.clientId,
      '--settings',
      '{"proofMode":{"enabled":true},"timezone":"Europe/Berlin","rateLimitPerMinute":600}',
      '--json',
    );
    expect(updated.code).toBe(0);
    const settings = (JSON.parse(updated.stdout) as Created).settings;
    expect(settings).toMatchObject({
      proofMode: { enabled: true, controlPercent: 10 },
      timezone: 'Europe/Berlin',
      rateLimitPerMinute: 600,
      webhookUrl: 'https://127.0.0.1:9/hooks',
    });

    const refused = await recoup(
      'accounts',
      'update',
      created.clientId,
      '--settings',
      '{"proofMode":{"controlPercent":80}}',
    );
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('proofMode.controlPercent');
    expect((await stack.stores.accounts.find(created.clientId))?.settings.proofMode.controlPercent).toBe(10);
  });
});

describe('authentication of a protected route with the keys the CLI issued', () => {
  it('answers 401 without a key, with a wrong key, under another header name and with the publishable key', async () => {
    const created = await createAccount();
    const refused: Array<Record<string, string>> = [
      {},
      { 'X-API-KEY': `sk_${randomBytes(32).toString('base64url')}` },
      { Authorization: `Bearer ${created.apiKey}` },
      { 'X-Api-Token': created.apiKey },
      { 'X-API-KEY': created.publishableKey },
    ];
    for (const headers of refused) {
      const res = await statusOfUnknown(headers);
      expect(res.status, JSON.stringify(headers)).toBe(401);
      expect(res.body).toEqual({ error: 'Missing or invalid API key' });
    }
    const allowed = await statusOfUnknown({ 'X-API-KEY': created.apiKey });
    expect(allowed.status).toBe(404);
  });

  it('rotate-key prints the new keys and the old secret key fails at once', async () => {
    const created = await createAccount();
    expect((await statusOfUnknown({ 'X-API-KEY': created.apiKey })).status).toBe(404);
    const rotated = await recoup('accounts', 'rotate-key', created.clientId, '--json');
    expect(rotated.code).toBe(0);
    const keys = JSON.parse(rotated.stdout) as Record<string, string>;
    expect(Object.keys(keys).sort()).toEqual(['apiKey', 'clientId', 'publishableKey']);
    expect(keys.clientId).toBe(created.clientId);
    expect(keys.apiKey).toMatch(/^sk_/);
    expect(keys.apiKey).not.toBe(created.apiKey);
    expect((await statusOfUnknown({ 'X-API-KEY': created.apiKey })).status).toBe(401);
    expect((await statusOfUnknown({ 'X-API-KEY': keys.apiKey ?? '' })).status).toBe(404);
    // The publishable key is rotated with it (the paywall status takes one).
    const paywall = (key: string) =>
      call(stack.baseUrl, 'GET', '/api/recovery/paywall-status?customerEmail=a%40example.com', { key });
    expect((await paywall(created.publishableKey)).status).toBe(401);
    expect(keys.publishableKey).toMatch(/^pk_/);
    expect((await paywall(keys.publishableKey ?? '')).status).toBe(200);
  });
});

describe('recoup connectors', () => {
  const secret = `whsec_${randomBytes(12).toString('hex')}`;
  const apiKey = `sk_test_${randomBytes(12).toString('hex')}`;
  const publicBase = { PUBLIC_BASE_URL: 'https://recoup.example.com/' };
  /** `recoup connectors set <clientId> <platform> --config <config> …extra`, PUBLIC_BASE_URL set unless `env`. */
  const setConnector = (clientId: string, platform: string, config: unknown, ...extra: string[]) =>
    setConnectorWith(publicBase, clientId, platform, config, ...extra);
  const setConnectorWith = (
    env: Record<string, string>,
    clientId: string,
    platform: string,
    config: unknown,
    ...extra: string[]
  ) =>
    recoupWith(
      env,
      'connectors',
      'set',
      clientId,
      platform,
      '--config',
      typeof config === 'string' ? config : JSON.stringify(config),
      ...extra,
    );

  it('refuses a configuration the platform cannot work with, and stores nothing', async () => {
    const created = await createAccount();
    // A test-gateway account has no Stripe key to read invoices with.
    const noKey = await setConnector(created.clientId, 'stripe-billing', { webhookSecret: secret });
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toMatch(/apiKey is required/);
    const badSecret = await setConnector(created.clientId, 'stripe-billing', '{"webhookSecret":"nope"}');
    expect(badSecret.code).toBe(2);
    expect(badSecret.stderr).toMatch(/webhookSecret: must be a Stripe webhook secret/);
    const nobody = await setConnector('acct_nope', 'stripe-billing', { webhookSecret: secret, apiKey });
    expect(nobody.code).toBe(1);
    expect(nobody.stderr).toContain('no account with clientId acct_nope');
    const unknown = await setConnector(created.clientId, 'paddle', {});
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown platform "paddle"/);
    const shown = await recoup('accounts', 'show', created.clientId, '--json');
    expect((JSON.parse(shown.stdout) as { connectors: string[] }).connectors).toEqual([]);
  });

  it('set seals the secrets, prints the intake URL, and the API then takes the platform’s signed events', async () => {
    const created = await createAccount();
    const set = await setConnector(
      created.clientId,
      'stripe-billing',
      { webhookSecret: secret, apiKey },
      '--json',
    );
    expect(set.stderr).toBe('');
    const out = JSON.parse(set.stdout) as { intakeUrl: string };
    // The service's public address, as the operator gives it to the CLI.
    expect(out.intakeUrl).toBe(
      `https://recoup.example.com/api/connectors/stripe-billing/webhook/${created.clientId}`,
    );
    // At rest the secrets are sealed: neither appears in the account document.
    const raw = JSON.stringify(
      await stack.stores.db
        .collection<{ _id: string }>(collections.accounts)
        .findOne({ _id: created.clientId }),
    );
    expect(raw).not.toContain(secret);
    expect(raw).not.toContain(apiKey);

    const body = JSON.stringify({
      id: 'evt_cli1',
      object: 'event',
      type: 'customer.created',
      data: { object: {} },
    });
    const { default: Stripe } = await import('stripe');
    const res = await fetch(`${stack.baseUrl}/api/connectors/stripe-billing/webhook/${created.clientId}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload: body, secret }),
      },
      body,
    });
    expect(res.status).toBe(200);
    const receipt = (await res.json()) as { action: string; reason: string };
    expect(receipt).toMatchObject({ action: 'ignored', reason: expect.any(String) });

    const list = await recoupWith(publicBase, 'connectors', 'list', created.clientId);
    expect(list).toMatchObject({ code: 0, stderr: '' });
    expect(list.stdout).toContain(out.intakeUrl);
    // Why it was ignored, as the receipt said it.
    expect(list.stdout).toContain(`ignored: ${receipt.reason}`);
    const json = await recoupWith(publicBase, 'connectors', 'list', created.clientId, '--json');
    expect((JSON.parse(json.stdout) as { events: unknown[] }).events).toContainEqual(
      expect.objectContaining({ eventId: 'evt_cli1', outcome: 'ignored', reason: receipt.reason }),
    );
  });

  it('prints an intake URL on this machine (PUBLIC_BASE_URL not set for the CLI) with a warning, not as the URL to paste', async () => {
    const created = await createAccount();
    const json = await setConnectorWith(
      {},
      created.clientId,
      'stripe-billing',
      { webhookSecret: secret, apiKey },
      '--json',
    );
    expect(json.code).toBe(0);
    expect((JSON.parse(json.stdout) as { intakeUrl: string }).intakeUrl).toBe(
      `http://localhost:3000/api/connectors/stripe-billing/webhook/${created.clientId}`,
    );
    const warning =
      'recoup: warning: the intake URL is on http://localhost:3000, which a billing platform cannot reach: PUBLIC_BASE_URL is not set';
    expect(json.stderr).toContain(warning);
    expect(json.stderr).toContain(`run \`recoup connectors list ${created.clientId}\``);

    const text = await setConnectorWith({}, created.clientId, 'stripe-billing', {
      webhookSecret: secret,
      apiKey,
    });
    expect(text.code).toBe(0);
    expect(text.stdout).not.toContain('Paste');
    expect(text.stdout).toContain('on this machine, see the warning');
    expect(text.stderr).toContain(warning);

    const list = await recoup('connectors', 'list', created.clientId);
    expect(list.code).toBe(0);
    expect(list.stderr).toContain(warning);
    const loopback = await recoupWith(
      { PUBLIC_BASE_URL: 'http://127.0.0.1:3000' },
      'connectors',
      'list',
      created.clientId,
    );
    expect(loopback.stderr).toContain('the intake URL is on http://127.0.0.1:3000');
  });

  it('list warns of a connector stored before its platform’s rules changed (Chargebee without API access recovers nothing)', async () => {
    const created = await createAccount();
    // As an earlier version stored it: the basic-auth pair only.
    await stack.stores.accounts.setConnector(created.clientId, 'chargebee', {
      username: 'hooks',
      password: 'secret-pair',
    });
    const list = await recoup('connectors', 'list', created.clientId);
    expect(list.code).toBe(0);
    expect(list.stderr).toContain(
      `recoup: warning: the chargebee connector of ${created.clientId} needs its configuration set again: site and apiKey are required`,
    );
    const json = await recoup('connectors', 'list', created.clientId, '--json');
    expect((JSON.parse(json.stdout) as { connectors: unknown[] }).connectors).toEqual([
      expect.objectContaining({
        platform: 'chargebee',
        problem: expect.stringMatching(/^site and apiKey are required/),
      }),
    ]);
  });

  it('remove turns the intake URL off (404); removing it again is an error', async () => {
    const created = await createAccount();
    await setConnector(created.clientId, 'stripe-billing', { webhookSecret: secret, apiKey });
    const removed = await recoup('connectors', 'remove', created.clientId, 'stripe-billing');
    expect(removed.code).toBe(0);
    const res = await fetch(`${stack.baseUrl}/api/connectors/stripe-billing/webhook/${created.clientId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(404);
    const again = await recoup('connectors', 'remove', created.clientId, 'stripe-billing');
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/has no stripe-billing connector/);
  });
});

describe('an account a first `accounts close` left half way (closing)', () => {
  /** An account as `accounts close` leaves it when recoveries were still finishing: keys and connectors gone. */
  async function halfClosed(): Promise<Created> {
    const created = await createAccount();
    await stack.stores.accounts.shut(created.clientId);
    return created;
  }

  it('shows as closing in show and list, as text and as JSON', async () => {
    const { clientId } = await halfClosed();
    const closingAt = (await stack.stores.accounts.find(clientId))?.closingAt?.toISOString();
    expect(closingAt).toMatch(/^\d{4}-/);

    const shown = await recoup('accounts', 'show', clientId, '--json');
    expect(JSON.parse(shown.stdout)).toMatchObject({ clientId, closingAt });
    const text = await recoup('accounts', 'show', clientId);
    expect(text.stdout.split('\n')[0]).toBe(
      `${clientId} is being closed: it takes nothing new. Finish closing it: recoup accounts close ${clientId} --confirm ${clientId}`,
    );
    expect(text.stdout).toMatch(new RegExp(`^status\\s+closing since ${closingAt}$`, 'm'));

    const listed = await recoup('accounts', 'list', '--json');
    const entry = (JSON.parse(listed.stdout) as Array<{ clientId: string; closingAt: string | null }>).find(
      (a) => a.clientId === clientId,
    );
    expect(entry?.closingAt).toBe(closingAt);
    const table = await recoup('accounts', 'list');
    const row = table.stdout.split('\n').find((r) => r.startsWith(clientId));
    expect(row).toMatch(new RegExp(`\\s+closing since ${closingAt}$`));
  });

  it('refuses every command that would change it or open it again (exit 1), changing nothing', async () => {
    const { clientId } = await halfClosed();
    const before = await stack.stores.accounts.find(clientId);
    const refused = [
      ['accounts', 'rotate-key', clientId],
      ['accounts', 'update', clientId, '--settings', '{"timezone":"Europe/Berlin"}'],
      ['accounts', 'set-gateways', clientId, '--gateway', 'test', '--backup-gateway', 'test'],
      ['accounts', 'rotate-webhook-secret', clientId, '--grace-hours', '0'],
      ['accounts', 'sweep', clientId],
      [
        'connectors',
        'set',
        clientId,
        'stripe-billing',
        '--config',
        JSON.stringify({
          webhookSecret: `whsec_${randomBytes(12).toString('hex')}`,
          apiKey: `sk_test_${randomBytes(12).toString('hex')}`,
        }),
      ],
      ['webhooks', 'test', clientId],
      ['webhooks', 'resend-all', clientId],
    ];
    for (const args of refused) {
      const run = await recoup(...args);
      expect(run.code, args.join(' ')).toBe(1);
      expect(run.stdout, args.join(' ')).toBe('');
      expect(run.stderr, args.join(' ')).toContain(
        `${clientId} is being closed (since ${before?.closingAt?.toISOString() ?? ''}) and takes no changes; finish closing it: recoup accounts close ${clientId} --confirm ${clientId}`,
      );
    }
    const after = await stack.stores.accounts.find(clientId);
    expect(after).toEqual(before);
    expect(
      await stack.stores.db.collection(collections.apiKeys).countDocuments({ accountId: clientId }),
    ).toBe(0);
    expect(await stack.stores.events.list({ accountId: clientId })).toEqual([]);
  });

  it('a key of a closing account does not authenticate, even one issued after the closure began', async () => {
    const { clientId } = await halfClosed();
    // A rotation that raced the closure (or the old CLI's rotate-key, which did not refuse).
    const keys = await stack.stores.accounts.rotateKeys(clientId);
    expect((await statusOfUnknown({ 'X-API-KEY': keys.apiKey })).status).toBe(401);
    expect(await stack.stores.accounts.authenticate(keys.publishableKey)).toBeNull();
  });
});

describe('recoup webhooks list --account', () => {
  it('an unknown client id exits 1 rather than listing no events', async () => {
    const run = await recoup('webhooks', 'list', '--account', 'acct_typo');
    expect(run).toMatchObject({ code: 1, stdout: '' });
    expect(run.stderr).toContain('no account with clientId acct_typo');
    const created = await createAccount();
    const known = await recoup('webhooks', 'list', '--account', created.clientId);
    expect(known).toMatchObject({ code: 0, stdout: 'No events.\n' });
  });
});
