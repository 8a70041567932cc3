import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../activities/index.js';
import { admitRecovery } from '../api/admit-recovery.js';
import { RecoveryRequest } from '../domain/recovery-request.js';
import { collections } from '../store/collections.js';
import { newHmacKey, notification, postAdyenWebhook, signedItem } from './support/adyen-webhook.js';
import { cliEnvOf, runCli, type CliRun } from './support/cli.js';
import { activityDeps, call, startStack, type Stack } from './support/stack.js';
import { attemptOf } from './support/attempts.js';

// A named database and master key, so the real `recoup` executable works on the stack's data.
const dbName = `gw_${randomBytes(4).toString('hex')}`;
const masterKey = randomBytes(32);
let stack: Stack;

const recoup = (...args: string[]): Promise<CliRun> => runCli(args, cliEnvOf(stack, masterKey));
const setGateways = (...args: string[]): Promise<CliRun> => recoup('accounts', 'set-gateways', ...args);

beforeAll(async () => {
  stack = await startStack({ dbName, masterKey });
});
afterAll(() => stack.close());

const adyenKey = `AQE${randomBytes(8).toString('hex')}`;
const adyen = (extra: Record<string, string> = {}) =>
  `adyen:${JSON.stringify({ apiKey: adyenKey, environment: 'test', ...extra })}`;

/** The account's gateways as stored: names and kinds, and whether any credential is readable in the clear. */
async function stored(accountId: string) {
  const doc = await stack.stores.db
    .collection<{ _id: string; gateways: Array<{ name: string; kind: string }> }>(collections.accounts)
    .findOne({ _id: accountId });
  return {
    gateways: doc!.gateways.map((g) => `${g.name}:${g.kind}`),
    clear: JSON.stringify(doc).includes(adyenKey),
  };
}

describe('recoup accounts set-gateways', () => {
  it("replaces an account's gateways, sealed, and the API takes them at once: an Adyen gateway given its webhook HMAC key", async () => {
    const { account } = await stack.createAccount({}, [
      {
        name: 'adyen',
        kind: 'adyen',
        test: false,
        credentials: { apiKey: adyenKey, environment: 'test' },
      },
    ]);
    const key = newHmacKey();
    const body = notification(
      signedItem(
        { pspReference: 'PSP1', merchantReference: `recovery/${account.id}/k/1`, success: true },
        key,
      ),
    );
    expect((await postAdyenWebhook(stack, account.id, body)).status).toBe(404);

    const run = await setGateways(
      account.id,
      '--gateway',
      adyen({ hmacKey: key }),
      '--backup-gateway',
      'test',
      '--json',
    );
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(run.stdout)).toMatchObject({
      clientId: account.id,
      gateways: [
        { name: 'adyen', kind: 'adyen', test: false },
        { name: 'test', kind: 'test', test: true },
      ],
    });
    expect(await stored(account.id)).toEqual({ gateways: ['adyen:adyen', 'test:test'], clear: false });
    expect(await postAdyenWebhook(stack, account.id, body)).toEqual({ status: 200, text: '[accepted]' });
  });

  it('a gateway keeps its name wherever it now stands: a backup promoted is still the gateway its recoveries name', async () => {
    const stripe = (key: string) => ({
      name: '',
      kind: 'stripe' as const,
      test: false,
      credentials: { secretKey: key },
    });
    const { account } = await stack.createAccount({}, [
      { ...stripe('sk_test_A'), name: 'stripe' },
      { ...stripe('sk_test_B'), name: 'stripe-2' },
    ]);
    const spec = (key: string) => `stripe:${JSON.stringify({ secretKey: key })}`;
    const promoted = await setGateways(
      account.id,
      '--gateway',
      spec('sk_test_B'),
      '--backup-gateway',
      spec('sk_test_A'),
    );
    expect(promoted.code).toBe(0);
    expect((await stored(account.id)).gateways).toEqual(['stripe-2:stripe', 'stripe:stripe']);
    // A rotated key (new credentials) takes the name its kind has left, in order; a new gateway a new name.
    const rotated = await setGateways(
      account.id,
      '--gateway',
      spec('sk_test_B'),
      '--backup-gateway',
      spec('sk_test_A2'),
      '--backup-gateway',
      spec('sk_test_C'),
    );
    expect(rotated.code).toBe(0);
    expect((await stored(account.id)).gateways).toEqual([
      'stripe-2:stripe',
      'stripe:stripe',
      'stripe-3:stripe',
    ]);
    const loaded = await stack.stores.accounts.withGateways(account.id);
    expect(loaded!.gateways.map((g) => [g.name, g.credentials.secretKey])).toEqual([
      ['stripe-2', 'sk_test_B'],
      ['stripe', 'sk_test_A2'],
      ['stripe-3', 'sk_test_C'],
    ]);
  });

  it('refuses to remove a gateway while a recovery is under way (exit 1, nothing changed), and removes it once none is', async () => {
    const { account, apiKey } = await stack.createAccount({}, [
      { name: 'test', kind: 'test', test: true, credentials: {} },
      { name: 'test-2', kind: 'test', test: true, credentials: {} },
    ]);
    const queued = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: apiKey,
      body: { amount: 2500, paymentMethodToken: 'tok_visa', originalDeclineCode: 'insufficient_funds' },
    });
    expect(queued.body).toMatchObject({ status: 'queued' });

    const refused = await setGateways(account.id, '--gateway', 'test');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/unchanged: 1 recoveries under way may still charge through test-2/);
    expect((await stored(account.id)).gateways).toEqual(['test:test', 'test-2:test']);
    // Rotating a kept gateway's credentials is no removal: allowed while the recovery waits.
    const kept = await setGateways(account.id, '--gateway', 'test', '--backup-gateway', 'test');
    expect(kept.code).toBe(0);

    const stop = await call(stack.baseUrl, 'POST', '/api/recovery/stop', {
      key: apiKey,
      body: { transactionId: queued.body.transactionId, reason: 'not_owed' },
    });
    expect(stop.status).toBe(200);
    const removed = await setGateways(account.id, '--gateway', 'test');
    expect(removed.code).toBe(0);
    expect((await stored(account.id)).gateways).toEqual(['test:test']);
  });

  it('an attempt planned on a gateway removed since (the seconds the command takes) sends nothing and is not retried there', async () => {
    const { account } = await stack.createAccount();
    const sales = () => stack.stores.db.collection('sandboxCharges').countDocuments({ token: 'tok_removed' });
    const result = await createActivities(activityDeps(stack)).attemptCharge(
      attemptOf(account.id, { gateway: 'test-2', token: 'tok_removed', role: 'backup_gateway' }),
    );
    expect(result).toEqual({
      kind: 'not_allowed',
      reason: `Account ${account.id} has no gateway test-2 any more`,
      retryAt: null,
    });
    expect(await sales()).toBe(0);
  });

  it('an attempt sent to a gateway before it was removed is not let go when retried, and the updater there gives no token', async () => {
    const { account } = await stack.createAccount();
    const attempt = attemptOf(account.id, { gateway: 'test-2', token: 'tok_sent', role: 'backup_gateway' });
    await stack.stores.attemptSends.firstSent(account.id, attempt.attemptKey, new Date(attempt.now));
    const activities = createActivities(activityDeps(stack));
    await expect(activities.attemptCharge(attempt)).rejects.toThrow(
      `attempt ${attempt.attemptKey} was sent to it; add it back to settle it`,
    );
    expect(
      await activities.refreshCard({ accountId: account.id, gateway: 'test-2', token: 'tok_sent' }),
    ).toBeNull();
  });

  it('refuses other credentials for a kept gateway while a recovery is confirming a charge there; its webhook key alone may change', async () => {
    const { account } = await stack.createAccount({}, [
      {
        name: 'adyen',
        kind: 'adyen',
        test: false,
        credentials: { apiKey: adyenKey, environment: 'test' },
      },
    ]);
    // A recovery whose charge at Adyen is being confirmed (the state its workflow records then).
    const request = RecoveryRequest.parse({
      amount: 2700,
      paymentMethodToken: 'Shop|8415718415172200|shopper-1',
      originalDeclineCode: 'try_again_later',
    });
    const admitted = await admitRecovery(stack.stores, account, request, new Date());
    if (admitted.kind !== 'admitted') throw new Error('not admitted');
    await stack.stores.recoveries.update(admitted.doc._id, { state: 'reconciling' }, new Date());

    const rotated = `AQE${randomBytes(8).toString('hex')}`;
    const other = await setGateways(
      account.id,
      '--gateway',
      `adyen:${JSON.stringify({ apiKey: rotated, environment: 'test' })}`,
    );
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(
      /1 recoveries are confirming a charge at the gateways \(reconciling\), and adyen would answer/,
    );
    const webhookKey = await setGateways(account.id, '--gateway', adyen({ hmacKey: newHmacKey() }));
    expect(webhookKey.code).toBe(0);
  });

  it('refuses gateways a configured connector cannot work with: Stripe Billing without a Stripe key of its own', async () => {
    const { account } = await stack.createAccount({}, [
      { name: 'stripe', kind: 'stripe', test: false, credentials: { secretKey: 'sk_test_abc' } },
    ]);
    await stack.stores.accounts.setConnector(account.id, 'stripe-billing', { webhookSecret: 'whsec_abc' });
    const run = await setGateways(account.id, '--gateway', 'test');
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/the stripe-billing connector would no longer work: apiKey is required/);
    expect((await stored(account.id)).gateways).toEqual(['stripe:stripe']);
  });

  it.each([
    [['--gateway', 'stripe:{"secretKey":"nope"}'], 2, /secretKey: must be a Stripe secret key/],
    [['--gateway', 'paypal'], 2, /a paypal gateway needs credentials/],
    [[], 2, /--gateway is required/],
  ])('refuses %j with exit %i and changes nothing', async (args, code, message) => {
    const { account } = await stack.createAccount();
    const run = await setGateways(account.id, ...args);
    expect(run.code).toBe(code);
    expect(run.stderr).toMatch(message);
    expect((await stored(account.id)).gateways).toEqual(['test:test']);
  });

  it('takes credentials from a file (@<path>), so they stay out of the process list and the shell history', async () => {
    const { account } = await stack.createAccount();
    const dir = mkdtempSync(join(tmpdir(), 'recoup-gw-'));
    try {
      const file = join(dir, 'adyen.json');
      writeFileSync(file, JSON.stringify({ apiKey: adyenKey, environment: 'test', hmacKey: newHmacKey() }), {
        mode: 0o600,
      });
      const run = await setGateways(account.id, '--gateway', `adyen:@${file}`);
      expect(run.code).toBe(0);
      expect((await stored(account.id)).gateways).toEqual(['adyen:adyen']);
      const missing = await setGateways(account.id, '--gateway', `adyen:@${dir}/none.json`);
      expect(missing).toMatchObject({
        code: 2,
        stderr: expect.stringMatching(/--gateway: cannot read .*none\.json \(ENOENT\)/),
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('takes the countries a gateway acquires locally (geographic routing), and refuses what is not a country code', async () => {
    const { account } = await stack.createAccount();
    const run = await setGateways(
      account.id,
      '--gateway',
      'test',
      '--backup-gateway',
      'test@de,AT',
      '--json',
    );
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(run.stdout)).toMatchObject({
      gateways: [{ name: 'test' }, { name: 'test-2', countries: ['DE', 'AT'] }],
    });
    const printed = JSON.parse(run.stdout) as { gateways: Array<Record<string, unknown>> };
    expect(printed.gateways[0]).not.toHaveProperty('countries');
    const shown = await recoup('accounts', 'show', account.id);
    expect(shown.stdout).toMatch(
      /gateways +test \(test, sandbox\), test-2 \(test, sandbox, local to DE AT\)/,
    );
    const refused = await setGateways(account.id, '--gateway', 'test@Germany');
    expect(refused).toMatchObject({ code: 2 });
    expect(refused.stderr).toContain('--gateway: countries must be 2-letter ISO country codes');
    expect((await stack.stores.accounts.withGateways(account.id))?.gateways[1]?.countries).toEqual([
      'DE',
      'AT',
    ]);
  });

  it('answers exit 1 for an unknown client', async () => {
    const run = await setGateways(`acct_${randomUUID()}`, '--gateway', 'test');
    expect(run).toMatchObject({ code: 1, stderr: expect.stringMatching(/no account with clientId/) });
  });
});
