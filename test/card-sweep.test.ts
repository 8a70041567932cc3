import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MockActivityEnvironment } from '@temporalio/testing';
import { cardSweepActivities, expiryWarningEventId } from '../activities/card-sweep.js';
import { retentionActivities, type RetentionResult } from '../activities/data-retention.js';
import { cardHealthSweepWorkflowId, dataRetentionWorkflowId } from '../domain/card-health.js';
import { StoredEventSchema } from '../domain/events.js';
import { sha256 } from '../runtime/crypto.js';
import { collections } from '../store/collections.js';
import { verifyWebhookSignature } from '../runtime/webhook-signature.js';
import { ensureDailyWorkflows, runCardSweep } from '../services/card-sweep.js';
import { cardOnFile } from './support/cards.js';
import { cliEnvOf, runCli, type CliRun } from './support/cli.js';
import { eventsOf } from './support/events.js';
import { formTokenOf, getPage, onServer, postForm } from './support/pages.js';
import { poll } from './support/poll.js';
import { activityDeps, call, startStack, type Stack } from './support/stack.js';
import { startBraintreeEmulator, type BraintreeEmulator } from './support/braintree-emulator.js';
import { startStripeEmulator, type StripeEmulator } from './support/stripe-emulator.js';
import { startReceiver, type Receiver } from './support/webhook-receiver.js';

// The card health sweep end to end: cards saved through the hosted page (test gateway) or held by Stripe,
// swept by the operator's `recoup accounts sweep` on the real workers, warned about by a signed webhook
// whose 14-day link opens the card-update page.

const dbName = `sweep_${randomUUID().slice(0, 8)}`;
const masterKey = randomBytes(32);
let dataDir: string;
let stack: Stack;
let receiver: Receiver;
let stripe: StripeEmulator;
let braintree: BraintreeEmulator;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'recoup-sweep-'));
  stack = await startStack({ dbName, masterKey });
  receiver = await startReceiver();
  stripe = await startStripeEmulator();
  braintree = await startBraintreeEmulator();
});
afterAll(async () => {
  await stripe?.close();
  await braintree?.close();
  await receiver?.close();
  await stack?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const recoup = (...args: string[]): Promise<CliRun> =>
  runCli(args, { ...cliEnvOf(stack, masterKey), DATA_DIR: dataDir });

interface SweepJson {
  clientId: string;
  workflowId: string;
  outcome: string;
  gateway: string;
  cards: number;
  expiringSoon: number;
  warned: number;
}

async function sweep(clientId: string): Promise<SweepJson> {
  const run = await recoup('accounts', 'sweep', clientId, '--json');
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return JSON.parse(run.stdout) as SweepJson;
}

const now = new Date();
/** MM/YY of this month (a card valid to the end of it: at most 30 days left) and of a card good for years. */
const thisMonth = `${String(now.getUTCMonth() + 1).padStart(2, '0')}/${String(now.getUTCFullYear() % 100)}`;
const farAway = { month: 12, year: now.getUTCFullYear() + 3 };

/** Saves a test card through the hosted card-update page, as a customer does; returns its new token. */
async function saveCardOnPage(apiKey: string, expiry: string, customerEmail: string): Promise<string> {
  const link = await call<{ url: string }>(stack.baseUrl, 'POST', '/api/recovery/update-card/generate', {
    key: apiKey,
    body: { paymentMethodToken: `tok_old_${randomUUID().slice(0, 6)}`, customerEmail },
  });
  const url = onServer(stack.baseUrl, link.body.url);
  const page = await getPage(url);
  const saved = await postForm(url, {
    _form: formTokenOf(page.html),
    number: '4242 4242 4242 4242',
    expiry,
    cvc: '123',
  });
  expect(saved.status).toBeLessThan(400);
  const card = await stack.stores.db
    .collection<{ _id: string; customerEmail: string }>('sandboxCards')
    .findOne({ customerEmail });
  return card!._id;
}

type Body = Record<string, unknown>;
const warningsTo = (r: Receiver, token: string) =>
  r.received
    .map((req) => ({ req, body: JSON.parse(req.raw.toString('utf8')) as Body }))
    .filter(({ body }) => body.event === 'card.expiring_soon' && body.paymentMethodToken === token);

const waitFor = <T>(read: () => T[], count: number) => poll(read, (found) => found.length >= count);

describe('the card health sweep of a sandbox account', () => {
  it('warns once about a saved card that expires within daysBeforeExpiry, signed, with a 14-day link to the card-update page', async () => {
    const { account, apiKey, webhookSigningSecret } = await stack.createAccount({
      webhookUrl: receiver.url,
      cardHealthSweep: { enabled: true, daysBeforeExpiry: 30 },
    });
    const expiring = await saveCardOnPage(apiKey, thisMonth, 'ada@example.com');
    const lasting = await saveCardOnPage(
      apiKey,
      `${farAway.month}/${farAway.year % 100}`,
      'grace@example.com',
    );

    const first = await sweep(account.id);
    expect(first).toMatchObject({
      outcome: 'swept',
      gateway: 'test',
      cards: 2,
      expiringSoon: 1,
      warned: 1,
    });
    expect(first.workflowId).toMatch(new RegExp(`^card-sweep-${account.id}-manual-`));

    const [warning, ...more] = await waitFor(() => warningsTo(receiver, expiring), 1);
    expect(more).toHaveLength(0);
    expect(warningsTo(receiver, lasting)).toHaveLength(0);
    const { req, body } = warning!;
    expect(
      verifyWebhookSignature(req.raw, req.headers['x-service-signature'] as string, webhookSigningSecret),
    ).toBe(true);
    expect(StoredEventSchema.safeParse(body).success).toBe(true);
    const lastDay = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 0)).getUTCDate();
    expect(body).toMatchObject({
      event: 'card.expiring_soon',
      clientId: account.id,
      expiryMonth: now.getUTCMonth() + 1,
      expiryYear: now.getUTCFullYear(),
      daysUntilExpiry: lastDay - now.getUTCDate(),
      customerEmail: 'ada@example.com',
      preemptive: true,
      eventId: expiryWarningEventId(account.id, {
        token: expiring,
        expMonth: now.getUTCMonth() + 1,
        expYear: now.getUTCFullYear(),
      }),
    });
    expect(String(body.message)).toMatch(/visa card ending 4242 expires at the end of/);

    // The link is a card-update link valid 14 days, and it opens the hosted page.
    const url = String(body.cardUpdateUrl);
    const token = /\/update-card\/([A-Za-z0-9_-]{43})$/.exec(url)?.[1];
    const link = await stack.stores.db
      .collection<{ _id: string; kind: string; expiresAt: Date; createdAt: Date }>('links')
      .findOne({ _id: sha256(token!) });
    expect(link?.kind).toBe('card_update');
    expect(link!.expiresAt.getTime() - link!.createdAt.getTime()).toBe(14 * 86_400_000);
    expect((await getPage(onServer(stack.baseUrl, url))).status).toBe(200);

    // The next sweep sees the same card and expiry: no second warning.
    expect(await sweep(account.id)).toMatchObject({ cards: 2, expiringSoon: 1, warned: 0 });
    await new Promise((r) => setTimeout(r, 500));
    expect(warningsTo(receiver, expiring)).toHaveLength(1);
  });

  it('keeps the gateway’s email in lower case, so an erasure by the address finds the warning and its link', async () => {
    const { account, apiKey } = await stack.createAccount({
      webhookUrl: receiver.url,
      cardHealthSweep: { enabled: true, daysBeforeExpiry: 30 },
    });
    const token = `tok_mixed_${randomUUID().slice(0, 6)}`;
    await stack.stores.sandbox.saveCard(
      cardOnFile(account.id, token, { now, customerEmail: 'Mia.Mixed@Example.com' }),
    );
    expect(await sweep(account.id)).toMatchObject({ warned: 1 });
    const [warning] = await waitFor(() => warningsTo(receiver, token), 1);
    expect(warning!.body).toMatchObject({ customerEmail: 'mia.mixed@example.com' });
    const linkToken = /\/update-card\/([A-Za-z0-9_-]{43})$/.exec(String(warning!.body.cardUpdateUrl))?.[1];
    const link = await stack.stores.db
      .collection<{ _id: string; data: { customerEmail: string | null } }>('links')
      .findOne({ _id: sha256(linkToken!) });
    expect(link?.data.customerEmail).toBe('mia.mixed@example.com');

    const erase = () =>
      call(stack.baseUrl, 'POST', '/api/customers/erase', {
        key: apiKey,
        body: { customerEmail: 'Mia.Mixed@Example.com' },
      });
    const erased = await poll(erase, (r) => r.status === 200);
    expect(erased.body).toMatchObject({ events: 1, links: 1 });
    expect(await stack.stores.events.list({ accountId: account.id, limit: 10 })).toEqual([]);
  });

  it('warns an erased customer no more: the card still on file gets no second warning and no new link', async () => {
    const { account, apiKey } = await stack.createAccount({
      webhookUrl: receiver.url,
      cardHealthSweep: { enabled: true, daysBeforeExpiry: 30 },
    });
    const token = `tok_erased_${randomUUID().slice(0, 6)}`;
    const email = `erased.${randomUUID().slice(0, 6)}@example.com`;
    await stack.stores.sandbox.saveCard(cardOnFile(account.id, token, { now, customerEmail: email }));
    expect(await sweep(account.id)).toMatchObject({ expiringSoon: 1, warned: 1 });
    await waitFor(() => warningsTo(receiver, token), 1);
    const erase = () =>
      call(stack.baseUrl, 'POST', '/api/customers/erase', { key: apiKey, body: { customerEmail: email } });
    expect((await poll(erase, (r) => r.status === 200)).body).toMatchObject({ events: 1, links: 1 });

    // The gateway still holds the card, and it still expires soon: the sweep sees it and sends nothing.
    expect(await sweep(account.id)).toMatchObject({ cards: 1, expiringSoon: 1, warned: 0 });
    expect(await stack.stores.events.list({ accountId: account.id, limit: 10 })).toEqual([]);
    const links = stack.stores.db.collection<{ accountId: string }>('links');
    expect(await links.countDocuments({ accountId: account.id })).toBe(0);
    await new Promise((r) => setTimeout(r, 500));
    expect(warningsTo(receiver, token)).toHaveLength(1);
    // What keeps it from being warned again names neither the customer nor the card.
    const kept = JSON.stringify(await stack.stores.db.collection('expiryWarnings').find({}).toArray());
    for (const text of [token, email]) expect(kept).not.toContain(text);
  });

  it('the customer saves a new card through the warning’s link: card.updated names the old and the new token', async () => {
    const { account, apiKey } = await stack.createAccount({
      webhookUrl: receiver.url,
      cardHealthSweep: { enabled: true, daysBeforeExpiry: 30 },
    });
    const expiring = await saveCardOnPage(apiKey, thisMonth, 'linus@example.com');
    await sweep(account.id);
    const [warning] = await waitFor(() => warningsTo(receiver, expiring), 1);
    const url = onServer(stack.baseUrl, String(warning!.body.cardUpdateUrl));
    const page = await getPage(url);
    const saved = await postForm(url, {
      _form: formTokenOf(page.html),
      number: '5555 5555 5555 4444',
      expiry: `${farAway.month}/${farAway.year % 100}`,
      cvc: '123',
    });
    expect(saved.status).toBeLessThan(400);
    const events = await eventsOf(stack, account.id, ['card.updated']);
    const updated = events.find((e) => e.type === 'card.updated');
    expect(updated?.payload).toMatchObject({
      oldPaymentMethodToken: expiring,
      newPaymentMethodToken: expect.stringMatching(/^tok_mastercard_/),
    });
  });

  it('sweeps only the account’s own cards', async () => {
    const other = await stack.createAccount({ cardHealthSweep: { enabled: true, daysBeforeExpiry: 90 } });
    expect(await sweep(other.account.id)).toMatchObject({ outcome: 'swept', cards: 0, warned: 0 });
    const text = await recoup('accounts', 'sweep', other.account.id);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`Swept the cards of ${other.account.id} on gateway test.`);
    expect(text.stdout).toMatch(/expiring within 90 days\s+0\n/);
    expect(text.stdout).toMatch(/warned now \(card\.expiring_soon\)\s+0\n/);
  });

  it('refuses to sweep an account whose sweep is disabled, and starts nothing', async () => {
    const { account, apiKey } = await stack.createAccount({ webhookUrl: receiver.url });
    const card = await saveCardOnPage(apiKey, thisMonth, 'off@example.com');
    const run = await recoup('accounts', 'sweep', account.id);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/card health sweep of .* is disabled; enable it with recoup accounts update/);
    const events = await stack.stores.events.list({ accountId: account.id, limit: 10 });
    expect(events.map((e) => e.type)).toEqual(['card.updated']); // the card saved on the page, nothing more
    expect(warningsTo(receiver, card)).toHaveLength(0);
    expect((await recoup('accounts', 'sweep', 'acct_unknown')).code).toBe(1);
  });

  it('stops waiting after --wait-seconds when no worker polls the task queue, exits 1 naming the workflow, which carries on', async () => {
    const { account } = await stack.createAccount({
      cardHealthSweep: { enabled: true, daysBeforeExpiry: 30 },
    });
    const unpolled = `unpolled-${randomUUID().slice(0, 8)}`;
    const run = await runCli(['accounts', 'sweep', account.id, '--wait-seconds', '1'], {
      ...cliEnvOf(stack, masterKey),
      DATA_DIR: dataDir,
      TEMPORAL_TASK_QUEUE: unpolled,
    });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    const [, workflowId] =
      /^recoup: the card health sweep of \S+ did not finish within 1 s \(are workers running\?\); it carries on as workflow (\S+): follow it in the Temporal UI\n$/.exec(
        run.stderr,
      ) ?? [];
    expect(workflowId, run.stderr).toMatch(new RegExp(`^card-sweep-${account.id}-manual-`));
    const handle = stack.temporal.workflow.getHandle(workflowId!);
    const described = await handle.describe();
    expect(described.status.name).toBe('RUNNING');
    expect(described.taskQueue).toBe(`${unpolled}-recovery`);
    await handle.terminate('test done');
  });

  it('gives up at the wait every time, however the server ends the poll for the result', async () => {
    // The server answers a long poll a second before its deadline: with a 1 s wait the poll is repeated
    // until the wait ends it. Given a gRPC deadline, the server at times cut the last poll off first: among
    // 30 sweeps at once, one did in every other run.
    const { account } = await stack.createAccount({
      cardHealthSweep: { enabled: true, daysBeforeExpiry: 30 },
    });
    const unpolled = { ...stack.queues, recovery: `unpolled-${randomUUID().slice(0, 8)}` };
    const runs = await Promise.all(
      Array.from({ length: 30 }, () =>
        runCardSweep(stack.temporal, unpolled, account.id, 1000).catch((error: Error) => error),
      ),
    );
    for (const run of runs)
      if (!(run instanceof Error))
        await stack.temporal.workflow.getHandle(run.workflowId).terminate('test done');
    expect(runs.map((run) => (run instanceof Error ? run.message : run.result))).toEqual(
      runs.map(() => null),
    );
  });

  it('the worker’s daily workflows are one each per deployment, started once however many workers start them', async () => {
    const started = await Promise.all(
      [1, 2, 3].map(() => ensureDailyWorkflows(stack.temporal, stack.queues)),
    );
    const expected = {
      cardHealthSweep: ['cardHealthSweepWorkflow', cardHealthSweepWorkflowId(stack.queues.recovery)],
      dataRetention: ['dataRetentionWorkflow', dataRetentionWorkflowId(stack.queues.recovery)],
    } as const;
    for (const [name, [type, workflowId]] of Object.entries(expected)) {
      expect(new Set(started.map((s) => s[name as keyof typeof expected]))).toEqual(new Set([workflowId]));
      const handle = stack.temporal.workflow.getHandle(workflowId);
      const described = await handle.describe();
      expect(described.type).toBe(type);
      expect(described.status.name).toBe('RUNNING');
      await handle.terminate('test done');
    }
  });
});

describe('the card health sweep of a Stripe account', () => {
  it('pages through the customers and warns about default cards that expire soon, with the customer’s email', async () => {
    const expiringCard = `pm_${randomUUID().slice(0, 12)}`;
    stripe.addCustomer({
      email: 'stripe.customer@example.com',
      card: {
        id: expiringCard,
        brand: 'mastercard',
        last4: '4444',
        expMonth: now.getUTCMonth() + 1,
        expYear: now.getUTCFullYear(),
      },
    });
    stripe.addCustomer({ email: 'nocard@example.com' });
    // More than one page (100 customers): the sweep has to follow the cursor.
    for (let i = 0; i < 120; i += 1)
      stripe.addCustomer({
        email: `long.${i}@example.com`,
        card: {
          id: `pm_long_${i}`,
          brand: 'visa',
          last4: '4242',
          expMonth: farAway.month,
          expYear: farAway.year,
        },
      });
    const { account } = await stack.createAccount(
      { webhookUrl: receiver.url, cardHealthSweep: { enabled: true, daysBeforeExpiry: 31 } },
      [
        {
          name: 'stripe',
          kind: 'stripe',
          test: false,
          credentials: { secretKey: stripe.secretKey, apiBase: stripe.url },
        },
      ],
    );
    expect(await sweep(account.id)).toMatchObject({
      outcome: 'swept',
      gateway: 'stripe',
      cards: 121,
      expiringSoon: 1,
      warned: 1,
    });
    const [warning] = await waitFor(() => warningsTo(receiver, expiringCard), 1);
    expect(warning!.body).toMatchObject({
      customerEmail: 'stripe.customer@example.com',
      expiryMonth: now.getUTCMonth() + 1,
      preemptive: true,
    });
    expect(String(warning!.body.message)).toMatch(/mastercard card ending 4444/);
  });
});

describe('the card health sweep of a Braintree account', () => {
  const braintreeAccount = (settings: Record<string, unknown>) =>
    stack.createAccount(
      { webhookUrl: receiver.url, cardHealthSweep: { enabled: true, daysBeforeExpiry: 31 }, ...settings },
      [{ name: 'braintree', kind: 'braintree', test: false, credentials: braintree.credentials }],
    );

  it("warns about default cards expiring soon, found by Braintree's customer search, with a link to the merchant's card form", async () => {
    const id = randomUUID().slice(0, 8);
    braintree.addCustomer({
      id: `bt_${id}`,
      email: 'bt.customer@example.com',
      cards: [
        {
          token: `card_${id}`,
          cardType: 'Visa',
          last4: '1881',
          expMonth: now.getUTCMonth() + 1,
          expYear: now.getUTCFullYear(),
          default: true,
        },
      ],
    });
    const { account } = await braintreeAccount({ cardFormUrl: 'https://acme.example/card' });
    expect(await sweep(account.id)).toMatchObject({ outcome: 'swept', gateway: 'braintree', warned: 1 });
    const [warning] = await waitFor(() => warningsTo(receiver, `card_${id}|bt_${id}`), 1);
    expect(warning!.body).toMatchObject({ customerEmail: 'bt.customer@example.com', preemptive: true });
    const page = await getPage(onServer(stack.baseUrl, String(warning!.body.cardUpdateUrl)));
    expect(page.status).toBe(303);
    expect(page.headers.get('location')).toMatch(/^https:\/\/acme\.example\/card\?recoup_link=/);
  });

  it("without the merchant's card form a warning could only lead to a 501 page: unsupported, nothing sent", async () => {
    const { account } = await braintreeAccount({});
    expect(await sweep(account.id)).toMatchObject({ outcome: 'unsupported', warned: 0 });
    // The operator is told what to set, not only that the gateway cannot list cards.
    const run = await recoup('accounts', 'sweep', account.id);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(
      `recoup accounts update ${account.id} --settings '{"cardFormUrl":"https://…"}'`,
    );
    expect(run.stdout).toContain(`primary gateway braintree of ${account.id}`);
  });
});

describe('the card health sweep of a gateway that cannot list its cards', () => {
  it('is unsupported, and the operator is told so, even with a card form set', async () => {
    const { account } = await stack.createAccount(
      {
        webhookUrl: receiver.url,
        cardHealthSweep: { enabled: true, daysBeforeExpiry: 31 },
        cardFormUrl: 'https://acme.example/card',
      },
      [
        {
          name: 'adyen',
          kind: 'adyen',
          test: false,
          // Never called: the sweep asks only whether the gateway lists cards.
          credentials: { apiKey: 'unused', environment: 'test' },
        },
      ],
    );
    const run = await recoup('accounts', 'sweep', account.id);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(
      `Nothing to sweep: the primary gateway adyen of ${account.id} cannot list its cards.`,
    );
    expect(run.stdout).not.toContain('cardFormUrl');
  });
});

describe('a sweep retried after its worker died', () => {
  it('goes on from the last page its heartbeat reported, without listing the earlier cards again', async () => {
    const own = await startStripeEmulator();
    try {
      const ids = Array.from({ length: 130 }, (_, i) =>
        own.addCustomer({
          email: `c${i}@example.com`,
          card: {
            id: `pm_resume_${i}`,
            brand: 'visa',
            last4: '4242',
            // The first page's cards expire this month: a sweep that started over would warn about them.
            expMonth: i < 100 ? now.getUTCMonth() + 1 : farAway.month,
            expYear: i < 100 ? now.getUTCFullYear() : farAway.year,
          },
        }),
      );
      const { account } = await stack.createAccount(
        { webhookUrl: receiver.url, cardHealthSweep: { enabled: true, daysBeforeExpiry: 31 } },
        [
          {
            name: 'stripe',
            kind: 'stripe',
            test: false,
            credentials: { secretKey: own.secretKey, apiBase: own.url },
          },
        ],
      );
      const activities = cardSweepActivities(activityDeps(stack));
      // The first attempt had swept the first page (100 cards, 100 warnings) and said so before dying.
      const reported = { after: ids[99], done: false, cards: 100, expiringSoon: 100, warned: 100 };
      const env = new MockActivityEnvironment({ heartbeatDetails: reported });
      const beats: unknown[] = [];
      env.on('heartbeat', (d: unknown) => beats.push(d));
      const result = await env.run(
        (input: { accountId: string; asOf: number }) => activities.sweepAccountCards(input),
        { accountId: account.id, asOf: Date.now() },
      );
      expect(result).toMatchObject({ outcome: 'swept', cards: 130, expiringSoon: 100, warned: 100 });
      expect(beats.at(-1)).toMatchObject({ done: true, cards: 130 });
      expect(await stack.stores.events.list({ accountId: account.id, limit: 10 })).toHaveLength(0);
    } finally {
      await own.close();
    }
  });
});

describe('an account being closed', () => {
  it('is swept no more: nothing is warned about', async () => {
    const { account } = await stack.createAccount({
      webhookUrl: receiver.url,
      cardHealthSweep: { enabled: true, daysBeforeExpiry: 30 },
    });
    const token = `tok_visa_closing_${randomUUID().slice(0, 8)}`;
    await stack.stores.sandbox.saveCard(
      cardOnFile(account.id, token, { expires: { expMonth: 12, expYear: 2026 } }),
    );
    await stack.stores.accounts.shut(account.id);
    const activities = cardSweepActivities(activityDeps(stack));
    const result = await new MockActivityEnvironment().run(
      (input: { accountId: string; asOf: number }) => activities.sweepAccountCards(input),
      { accountId: account.id, asOf: Date.parse('2026-12-20T12:00:00Z') },
    );
    expect(result).toMatchObject({ outcome: 'disabled', warned: 0 });
    expect(await stack.stores.events.list({ accountId: account.id, limit: 10 })).toHaveLength(0);
  });
});

describe('the record that a card was warned about', () => {
  it('is deleted by the daily data retention once the card has expired in every time zone, in every account', async () => {
    const sweepOf = (accountId: string, at: string) => {
      const activities = cardSweepActivities(activityDeps(stack));
      return new MockActivityEnvironment().run(
        (input: { accountId: string; asOf: number }) => activities.sweepAccountCards(input),
        { accountId, asOf: Date.parse(at) },
      );
    };
    // Returns how many it deleted, and how many there were to delete (the other tests' too).
    const purgeAt = async (at: string) => {
      const asOf = Date.parse(at);
      const expired = await stack.stores.db
        .collection(collections.expiryWarnings)
        .countDocuments({ expiresAt: { $lt: new Date(asOf) } });
      const activities = retentionActivities(activityDeps(stack));
      const purge = (input: { asOf: number }) => activities.purgeExpiredData(input);
      const result = await new MockActivityEnvironment().run<
        [{ asOf: number }],
        RetentionResult,
        typeof purge
      >(purge, { asOf });
      return { deleted: result.expiryWarnings, expired };
    };
    // Two accounts without a dataRetentionDays: one card valid through December 2026, one through January.
    const warnedOf = async (expMonth: number, expYear: number) => {
      const { account } = await stack.createAccount({
        webhookUrl: receiver.url,
        cardHealthSweep: { enabled: true, daysBeforeExpiry: 60 },
      });
      const token = `tok_visa_remembered_${randomUUID().slice(0, 8)}`;
      const expires = { expMonth, expYear };
      await stack.stores.sandbox.saveCard(cardOnFile(account.id, token, { expires }));
      expect(await sweepOf(account.id, '2026-12-20T12:00:00Z')).toMatchObject({ warned: 1 });
      const eventId = expiryWarningEventId(account.id, { token, ...expires });
      return { account, sent: () => stack.stores.expiryWarnings.sent(account.id, eventId) };
    };
    const december = await warnedOf(12, 2026);
    const january = await warnedOf(1, 2027);
    // Still 31 December at UTC-12 (Baker Island): kept while the card may be valid somewhere.
    const early = await purgeAt('2027-01-01T11:00:00Z');
    expect(early.deleted).toBe(early.expired);
    expect(await december.sent()).toBe(true);
    expect(await sweepOf(december.account.id, '2027-01-01T11:00:00Z')).toMatchObject({ warned: 0 });
    const late = await purgeAt('2027-01-02T06:00:00Z');
    expect(late.deleted).toBe(late.expired);
    expect(late.deleted).toBeGreaterThanOrEqual(1);
    expect([await december.sent(), await january.sent()]).toEqual([false, true]);
    // The card expired, no later sweep finds it expiring soon: the record is not needed again.
    expect(await sweepOf(december.account.id, '2027-01-02T06:00:00Z')).toMatchObject({
      expiringSoon: 0,
      warned: 0,
    });
  });
});

describe("the sweep counts a card's days in the account's time zone", () => {
  // One card valid through December 2026, swept at an instant whose date differs between UTC and the
  // account's zone: the sweep must count in the zone (as the hosted card form does), never in UTC.
  const cardOf = (accountId: string, token: string) =>
    stack.stores.sandbox.saveCard(cardOnFile(accountId, token, { expires: { expMonth: 12, expYear: 2026 } }));
  const sweepAt = (accountId: string, asOf: number) => {
    const activities = cardSweepActivities(activityDeps(stack));
    return new MockActivityEnvironment().run(
      (input: { accountId: string; asOf: number }) => activities.sweepAccountCards(input),
      { accountId, asOf },
    );
  };

  it.each([
    // Already 1 January 2027 (01:00) in Auckland, still 31 December in UTC: expired there, no warning.
    ['Pacific/Auckland', '2026-12-31T12:00:00Z', { expiringSoon: 0, warned: 0 }, null],
    // Still 31 December 2026 (17:00) in Los Angeles, already January in UTC: its last day there, warned.
    ['America/Los_Angeles', '2027-01-01T01:00:00Z', { expiringSoon: 1, warned: 1 }, 0],
  ])('an account in %s at %s: a card expiring 12/2026', async (timezone, at, counts, daysLeft) => {
    const { account } = await stack.createAccount({
      webhookUrl: receiver.url,
      timezone,
      cardHealthSweep: { enabled: true, daysBeforeExpiry: 30 },
    });
    const token = `tok_visa_zone_${randomUUID().slice(0, 8)}`;
    await cardOf(account.id, token);
    const result = await sweepAt(account.id, Date.parse(at));
    expect(result).toEqual({ outcome: 'swept', gateway: 'test', cards: 1, ...counts });
    const warnings = (await stack.stores.events.list({ accountId: account.id, limit: 10 })).filter(
      (e) => e.type === 'card.expiring_soon',
    );
    expect(warnings.map((e) => (e.payload as { daysUntilExpiry: number }).daysUntilExpiry)).toEqual(
      daysLeft === null ? [] : [daysLeft],
    );
  });
});
