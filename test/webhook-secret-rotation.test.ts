import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { verifyWebhookSignature } from '../runtime/webhook-signature.js';
import { runCli, type CliRun } from './support/cli.js';
import { poll } from './support/poll.js';
import { sampleEvent } from './support/sample-events.js';
import { startStack, type Stack } from './support/stack.js';
import { startReceiver, type Receiver } from './support/webhook-receiver.js';

const hour = 3_600_000;
// A named database and master key, so the real `recoup` executable works on the stack's data.
const dbName = `rot_${randomBytes(4).toString('hex')}`;
const masterKey = randomBytes(32);
let stack: Stack;
const receivers: Receiver[] = [];

const recoup = (...args: string[]): Promise<CliRun> =>
  runCli(args, {
    MONGODB_URI: `${inject('mongoUri')}${dbName}`,
    RECOUP_MASTER_KEY: masterKey.toString('base64'),
  });

beforeAll(async () => {
  stack = await startStack({ dbName, masterKey });
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await stack.close();
});

/** A merchant whose webhooks go to an HTTPS receiver of its own. */
async function merchant() {
  const receiver = await startReceiver();
  receivers.push(receiver);
  const created = await stack.createAccount({ webhookUrl: receiver.url });
  return { receiver, accountId: created.account.id, secret: created.webhookSigningSecret };
}

/** Publishes an event and returns the request the receiver got for it, and whether `secret` signed it. */
async function deliveredWith(accountId: string, receiver: Receiver) {
  const { eventId } = await stack.events.publish(accountId, sampleEvent('recovery.success'));
  const requests = await poll(
    () => receiver.received.filter((r) => r.headers['x-service-event-id'] === eventId),
    (found) => found.length > 0,
  );
  const request = requests[0];
  if (!request) throw new Error(`event ${eventId} was not delivered`);
  return (secret: string) =>
    verifyWebhookSignature(request.raw, request.headers['x-service-signature'] as string, secret);
}

describe('the account store', () => {
  it('signs with the current secret until the rotated one’s time, and with the rotated one from then', async () => {
    const { accountId, secret: old } = await merchant();
    const now = new Date();
    const from = new Date(now.getTime() + 24 * hour);
    const next = await stack.stores.accounts.rotateSigningSecret(accountId, from, now);
    expect(next).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    const at = (ms: number) => stack.stores.accounts.signingSecret(accountId, new Date(ms));
    expect(await at(now.getTime())).toBe(old);
    expect(await at(from.getTime() - 1)).toBe(old);
    expect(await at(from.getTime())).toBe(next);
    expect((await stack.stores.accounts.find(accountId))?.nextSigningSecretFrom).toEqual(from);
  });

  it('switches at once without a grace period, and shows no rotation waiting', async () => {
    const { accountId, secret: old } = await merchant();
    const now = new Date();
    const next = await stack.stores.accounts.rotateSigningSecret(accountId, now, now);
    expect(next).not.toBe(old);
    expect(await stack.stores.accounts.signingSecret(accountId, now)).toBe(next);
    expect(await stack.stores.accounts.signingSecret(accountId, new Date(now.getTime() + 48 * hour))).toBe(
      next,
    );
    expect((await stack.stores.accounts.find(accountId))?.nextSigningSecretFrom).toBeNull();
  });

  it('a second rotation replaces one still waiting, and keeps one whose time has come', async () => {
    const { accountId, secret: old } = await merchant();
    const t0 = Date.now();
    const at = (ms: number) => stack.stores.accounts.signingSecret(accountId, new Date(t0 + ms));
    const rotate = (fromMs: number, nowMs: number) =>
      stack.stores.accounts.rotateSigningSecret(accountId, new Date(t0 + fromMs), new Date(t0 + nowMs));

    const dropped = await rotate(10 * hour, 0);
    const first = await rotate(1 * hour, 0); // replaces `dropped` before it ever signs
    expect(await at(0)).toBe(old);
    expect(await at(1 * hour)).toBe(first);
    expect(await at(10 * hour)).toBe(first);
    const second = await rotate(3 * hour, 2 * hour); // `first` signs by then: it becomes the current one
    expect(await at(2 * hour)).toBe(first);
    expect(await at(3 * hour)).toBe(second);
    expect(new Set([old, dropped, first, second]).size).toBe(4);
  });

  it('answers null for an unknown account', async () => {
    const now = new Date();
    expect(await stack.stores.accounts.rotateSigningSecret(`acct_${randomUUID()}`, now, now)).toBeNull();
  });
});

describe('recoup accounts rotate-webhook-secret', () => {
  it('with --grace-hours 0, the next webhook is signed with the new secret only', async () => {
    const { accountId, receiver, secret: old } = await merchant();
    const run = await recoup('accounts', 'rotate-webhook-secret', accountId, '--grace-hours', '0', '--json');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout) as Record<string, string>;
    expect(Object.keys(out).sort()).toEqual(['clientId', 'signsFrom', 'webhookSigningSecret']);
    expect(out.clientId).toBe(accountId);
    expect(Math.abs(Date.parse(out.signsFrom ?? '') - Date.now())).toBeLessThan(60_000);
    const signedBy = await deliveredWith(accountId, receiver);
    expect(signedBy(out.webhookSigningSecret ?? '')).toBe(true);
    expect(signedBy(old)).toBe(false);
  });

  it('by default the current secret signs for 24 more hours; the account shows when the new one takes over', async () => {
    const { accountId, receiver, secret: old } = await merchant();
    const before = Date.now();
    const run = await recoup('accounts', 'rotate-webhook-secret', accountId, '--json');
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout) as Record<string, string>;
    const from = Date.parse(out.signsFrom ?? '');
    expect(from).toBeGreaterThanOrEqual(before + 24 * hour);
    expect(from).toBeLessThan(Date.now() + 24 * hour + 1);

    const signedBy = await deliveredWith(accountId, receiver);
    expect(signedBy(old)).toBe(true);
    expect(signedBy(out.webhookSigningSecret ?? '')).toBe(false);
    expect(await stack.stores.accounts.signingSecret(accountId, new Date(from))).toBe(
      out.webhookSigningSecret,
    );
    const shown = await recoup('accounts', 'show', accountId, '--json');
    expect(JSON.parse(shown.stdout)).toMatchObject({ nextSigningSecretFrom: out.signsFrom });
    const text = await recoup('accounts', 'rotate-webhook-secret', accountId, '--grace-hours', '2');
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('with the current one until then');
    expect(text.stdout).toMatch(/webhookSigningSecret\s+whsec_/);
  });

  it.each([['-1'], ['721'], ['1.5'], ['soon'], ['']])(
    '--grace-hours %j is a usage error (exit 2) and changes nothing',
    async (value) => {
      const { accountId, secret: old } = await merchant();
      const run = await recoup('accounts', 'rotate-webhook-secret', accountId, `--grace-hours=${value}`);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('--grace-hours must be an integer from 0 to 720');
      expect(await stack.stores.accounts.signingSecret(accountId)).toBe(old);
      expect((await stack.stores.accounts.find(accountId))?.nextSigningSecretFrom).toBeNull();
    },
  );

  it('an unknown client id exits 1; a missing one is a usage error', async () => {
    const unknown = await recoup('accounts', 'rotate-webhook-secret', 'acct_nope');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('acct_nope');
    const missing = await recoup('accounts', 'rotate-webhook-secret');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('missing <clientId>');
  });
});
