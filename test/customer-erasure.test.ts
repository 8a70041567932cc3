import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WorkflowNotFoundError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admitRecovery } from '../api/admit-recovery.js';
import { createApp } from '../api/app.js';
import { RecoveryRequest } from '../domain/recovery-request.js';
import { deliveryWorkflowId, webhookWorkflowId } from '../domain/webhooks.js';
import { cardKeyOf } from '../runtime/crypto.js';
import { createLogger } from '../runtime/logger.js';
import { eraseCustomer } from '../services/customer-erasure.js';
import { collections } from '../store/collections.js';
import type { EventRecord } from '../store/events.js';
import type { Stores } from '../store/index.js';
import { cliEnvOf, runCli, type CliRun } from './support/cli.js';
import { onServer, submitPage } from './support/pages.js';
import { poll } from './support/poll.js';
import { call, startStack, type Stack } from './support/stack.js';
import { startReceiver, type Receiver } from './support/webhook-receiver.js';

interface Erased {
  erased: true;
  erasedAt: string;
  recoveries: number;
  pulses: number;
  events: number;
  links: number;
  workflowHistories: number;
}

// A named database and master key, so the real `recoup` executable works on the stack's data.
const dbName = `ce_${randomBytes(4).toString('hex')}`;
const masterKey = randomBytes(32);
let stack: Stack;
let receiver: Receiver;
let clientId: string;
let key: string;

const offers = [{ type: 'pause', months: 2 }];
const goodCard = { number: '4242 4242 4242 4242', expiry: '12/34', cvc: '123' };

const recoup = (...args: string[]): Promise<CliRun> => runCli(args, cliEnvOf(stack, masterKey));

const post = <T = Record<string, unknown>>(path: string, body: unknown, apiKey = key) =>
  call<T>(stack.baseUrl, 'POST', path, { key: apiKey, body });
const erase = (body: unknown, apiKey = key) => post<Erased>('/api/customers/erase', body, apiKey);
/** The account's report over a fixed window: the same question before and after an erasure. */
const window = `?from=${new Date(Date.now() - 86_400_000).toISOString()}&to=${new Date(Date.now() + 3_600_000).toISOString()}`;
const report = async () => (await call(stack.baseUrl, 'GET', `/api/reports/summary${window}`, { key })).body;
const paywall = (email: string) =>
  call(stack.baseUrl, 'GET', `/api/recovery/paywall-status?customerEmail=${encodeURIComponent(email)}`, {
    key,
  });

/** Everything one customer leaves behind: two recoveries, a pulse, a used card-update link and cancel flow. */
async function customer(name: string) {
  const email = `${name}@example.com`;
  const tokens = { card: `tok_${name}_card`, stolen: `tok_${name}_stolen` };
  const recovered = await post('/api/recovery/execute', {
    paymentMethodToken: tokens.card,
    originalDeclineCode: 'try_again_later',
    amount: 2500,
    customerEmail: email,
    idempotencyKey: `${name}-1`,
  });
  const blocked = await post('/api/recovery/execute', {
    paymentMethodToken: tokens.stolen,
    originalDeclineCode: 'stolen_card',
    amount: 1200,
    customerEmail: email,
    idempotencyKey: `${name}-2`,
  });
  expect([recovered.status, blocked.status]).toEqual([200, 403]);
  await post('/api/recovery/pulse', { amount: 900, customerEmail: email, transactionId: `${name}-paid` });
  const cardLink = await post<{ url: string }>('/api/recovery/update-card/generate', {
    paymentMethodToken: tokens.stolen,
    customerEmail: email,
  });
  expect((await submitPage(onServer(stack.baseUrl, cardLink.body.url), goodCard)).status).toBe(200);
  const cancelLink = await post<{ url: string }>('/api/cancel-flow/generate', {
    customerId: `cus_${name}`,
    customerEmail: email,
    amount: 2500,
  });
  expect((await submitPage(onServer(stack.baseUrl, cancelLink.body.url), { choice: 'keep' })).status).toBe(
    200,
  );
  const recoveries = await stack.stores.recoveries.ofCustomer(clientId, {
    emails: [email],
    tokens: [],
    transactionIds: [],
    customerIds: [],
  });
  expect(recoveries).toHaveLength(2);
  return { email, tokens, recoveries, links: [cardLink.body.url, cancelLink.body.url] };
}

type Customer = Awaited<ReturnType<typeof customer>>;

/** The customer's webhook events, once none is being delivered. */
async function deliveredEvents(who: Customer) {
  const refs = {
    emails: [who.email],
    tokens: Object.values(who.tokens),
    transactionIds: who.recoveries.flatMap((r) => [r._id, r.publicId]),
    customerIds: [`cus_${who.email.split('@')[0] ?? ''}`],
  };
  return poll(
    () => stack.stores.events.ofCustomer(clientId, refs),
    (events) => events.length >= 4 && events.every((e) => e.deliveryStatus === 'delivered'),
  );
}

/** The card saved through the customer's card-update link, as its card.updated named it. */
function newCardIn(events: EventRecord[]): string {
  const updated = events.find((e) => e.payload.event === 'card.updated')?.payload;
  return updated?.event === 'card.updated' ? updated.newPaymentMethodToken : '';
}

/** Every document of the database, as text, but the test gateway's own ledger (the gateway's data). */
async function everything(stores: Stores): Promise<string> {
  const names = Object.values(collections).filter((n) => !n.startsWith('sandbox'));
  const docs = await Promise.all(names.map((n) => stores.db.collection(n).find({}).toArray()));
  return JSON.stringify(docs);
}

/** Which of `ids` the card-network budgets and the 5-minute duplicate claims still hold. */
async function claimsNaming(ids: string[]): Promise<string[]> {
  const names = [collections.velocity, collections.cardBudgets];
  const docs = await Promise.all(names.map((n) => stack.stores.db.collection(n).find({}).toArray()));
  const text = JSON.stringify(docs);
  return ids.filter((id) => text.includes(id));
}

async function historyGone(workflowId: string): Promise<boolean> {
  try {
    await stack.temporal.workflow.getHandle(workflowId).describe();
    return false;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return true;
    throw error;
  }
}

/**
 * A customer the merchant executed two recoveries for without an email, then minted card-update links for
 * with it: one for the card of the first, one (for a card not charged yet) naming the second recovery.
 */
async function customerNamedOnlyByLinks(name: string) {
  const email = `${name}@example.com`;
  const cards = { charged: `tok_${name}_card`, other: `tok_${name}_other`, offered: `tok_${name}_new` };
  const execute = (paymentMethodToken: string) =>
    post<{ transactionId: string }>('/api/recovery/execute', {
      paymentMethodToken,
      originalDeclineCode: 'try_again_later',
      amount: 1100,
      binPrefix: '424242',
    });
  const onCard = await execute(cards.charged);
  const named = await execute(cards.other);
  expect([onCard.status, named.status]).toEqual([200, 200]);
  const mint = (body: Record<string, unknown>) =>
    post('/api/recovery/update-card/generate', { customerEmail: email, ...body });
  const minted = [
    await mint({ paymentMethodToken: cards.charged }),
    await mint({ paymentMethodToken: cards.offered, transactionId: named.body.transactionId }),
  ];
  expect(minted.map((m) => m.status)).toEqual([200, 200]);
  return { email, cards, transactionIds: [onCard.body.transactionId, named.body.transactionId] };
}

/**
 * Another API process on the stack's database and Temporal, reading and writing through `stores`; `undeclared`
 * collects its answers that the OpenAPI document does not declare.
 */
async function startApi(stores: Stores) {
  const undeclared: string[] = [];
  const app = createApp({
    undeclared: (problem) => undeclared.push(problem),
    log: createLogger('silent', 'test-second-api'),
    stores,
    temporal: stack.temporal,
    queues: stack.queues,
    publicBaseUrl: 'http://127.0.0.1',
    clock: () => new Date(),
    events: stack.events,
  });
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    undeclared,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Stops the recovery admitted during an erasure, then erases again until it finishes, erasing that one. */
async function stopThenErase(transactionId: string, email: string) {
  const stop = await post('/api/recovery/stop', { transactionId, reason: 'not_owed' });
  expect(stop.status).toBe(200);
  const erased = await poll(
    () => erase({ customerEmail: email }),
    (r) => r.status === 200,
  );
  expect(erased.body).toMatchObject({ recoveries: 1 });
}

/**
 * A customer (`tok_<name>_first`, recovered at once, its event delivered) and stores whose erasure admits a
 * new failure of hers (`tok_<name>_second`, queued) once it has looked, before it changes anything;
 * `racing()` is that recovery's id once admitted.
 */
async function racingErasure(email: string, name: string, amount: number) {
  const execute = (paymentMethodToken: string, originalDeclineCode: string, charged: number) =>
    post<{ transactionId: string }>('/api/recovery/execute', {
      paymentMethodToken,
      originalDeclineCode,
      amount: charged,
      customerEmail: email,
    });
  const first = await execute(`tok_${name}_first`, 'try_again_later', amount);
  expect(first.status).toBe(200);
  // Its event delivered: only the recovery admitted below is under way.
  const named = { emails: [], tokens: [], transactionIds: [first.body.transactionId], customerIds: [] };
  await poll(
    () => stack.stores.events.ofCustomer(clientId, named),
    (events) => events.length > 0 && events.every((e) => e.deliveryStatus === 'delivered'),
  );
  let racing = '';
  const stores: Stores = {
    ...stack.stores,
    erasures: {
      ...stack.stores.erasures,
      async begin(accountId, customer, earlier, refs, now) {
        const queued = await execute(`tok_${name}_second`, 'insufficient_funds', amount + 100);
        expect(queued.status).toBe(202);
        racing = queued.body.transactionId;
        return stack.stores.erasures.begin(accountId, customer, earlier, refs, now);
      },
    },
  };
  return { first, stores, racing: () => racing };
}

let ann: Customer;
let bob: Customer;

beforeAll(async () => {
  receiver = await startReceiver();
  stack = await startStack({ dbName, masterKey });
  const created = await stack.createAccount({
    webhookUrl: receiver.url,
    cancelFlow: { enabled: true, offers },
  });
  clientId = created.account.id;
  key = created.apiKey;
  ann = await customer('ann');
  bob = await customer('bob');
});
afterAll(async () => {
  await stack.close();
  await receiver.close();
});

interface Export {
  identifiers: { customerEmails: string[]; paymentMethodTokens: string[]; customerIds: string[] };
  recoveries: Array<{ transactionId: string; customerEmail: string; paymentMethodToken: string }>;
  pulses: Array<{ merchantTransactionId: string; amount: number }>;
  events: Array<{ eventId: string; event: string; payload: Record<string, unknown> }>;
  links: Array<{ kind: string; usedAt: string | null; outcome: Record<string, unknown> | null }>;
}
const exportOf = (body: unknown, apiKey = key) => post<Export>('/api/customers/export', body, apiKey);

describe('the OpenAPI document', () => {
  it('lists the export and the erasure with their bodies and answers', async () => {
    const doc = await call<{ paths: Record<string, { post?: Record<string, unknown> }> }>(
      stack.baseUrl,
      'GET',
      '/api/openapi.json',
    );
    for (const path of ['/api/customers/export', '/api/customers/erase'])
      expect(doc.body.paths[path]?.post, path).toMatchObject({
        requestBody: expect.any(Object),
        responses: expect.objectContaining({ 200: expect.any(Object) }),
      });
    expect(doc.body.paths['/api/customers/erase']?.post).toMatchObject({
      responses: expect.objectContaining({ 409: expect.any(Object) }),
    });
  });
});

describe('POST /api/customers/export', () => {
  it('answers everything held about the customer, and nothing about anyone else', async () => {
    const events = await deliveredEvents(ann);
    const res = await exportOf({ customerEmail: ann.email });
    expect(res.status).toBe(200);
    const newCard = newCardIn(events);
    expect(res.body.identifiers).toEqual({
      customerEmails: [ann.email],
      paymentMethodTokens: expect.arrayContaining([ann.tokens.card, ann.tokens.stolen, newCard]),
      customerIds: ['cus_ann'],
    });
    expect(res.body.recoveries.map((r) => [r.transactionId, r.customerEmail, r.paymentMethodToken])).toEqual(
      ann.recoveries.map((r) => [r.publicId, ann.email, r.request.paymentMethodToken]),
    );
    // Logged in test mode (the account's gateway is the sandbox's), naming no failure it pays.
    expect(res.body.pulses).toEqual([
      {
        transactionId: expect.any(String),
        merchantTransactionId: 'ann-paid',
        amount: 900,
        currency: 'USD',
        occurredAt: expect.any(String),
        isSimulated: true,
      },
    ]);
    expect(res.body.events.map((e) => e.eventId).sort()).toEqual(events.map((e) => e._id).sort());
    expect(res.body.links.map((l) => [l.kind, l.outcome?.kind]).sort()).toEqual([
      ['cancel_flow', 'churn'],
      ['card_update', 'card_updated'],
    ]);
    expect(JSON.stringify(res.body)).not.toContain(bob.email);

    // The same through the CLI; another account's key finds nothing of hers.
    const run = await recoup('customers', 'export', clientId, '--email', ann.email);
    expect(run.code).toBe(0);
    expect({ ...(JSON.parse(run.stdout) as Export), exportedAt: 'x' }).toEqual({
      ...res.body,
      exportedAt: 'x',
    });
    const other = await stack.createAccount();
    expect((await exportOf({ customerEmail: ann.email }, other.apiKey)).body).toMatchObject({
      recoveries: [],
      pulses: [],
      events: [],
      links: [],
    });
    expect((await exportOf({})).status).toBe(400);
  });

  it('answers the recoveries its card-update links name: of the card a link was minted for, and the one it names', async () => {
    const lia = await customerNamedOnlyByLinks('lia');
    const res = await exportOf({ customerEmail: lia.email });
    expect(res.status).toBe(200);
    expect(res.body.recoveries.map((r) => r.transactionId).sort()).toEqual(lia.transactionIds.toSorted());
    expect(res.body.identifiers.paymentMethodTokens.toSorted()).toEqual(Object.values(lia.cards).sort());
    expect(res.body.links).toHaveLength(2);
  });
});

describe('POST /api/customers/erase', () => {
  it('erases what names the customer, keeps the books, and touches no other customer', async () => {
    const annEvents = await deliveredEvents(ann);
    const bobEvents = await deliveredEvents(bob);
    const workflowIds = [
      ...ann.recoveries.map((r) => r.workflowId),
      ...annEvents.flatMap((e) => e.deliveries.map((d) => deliveryWorkflowId(e._id, d.deliveryId))),
    ];
    expect(await historyGone(workflowIds[0] ?? '')).toBe(false);
    expect((await paywall(ann.email)).body).toMatchObject({ isPastDue: true, failedPaymentCount: 1 });
    const bobPaywall = (await paywall(bob.email)).body;
    const statuses = await Promise.all(
      ann.recoveries.map((r) => call(stack.baseUrl, 'GET', `/api/recovery/status/${r.publicId}`, { key })),
    );
    const books = await report();
    const annIds = ann.recoveries.flatMap((r) => [r._id, r.workflowId]);
    const bobIds = bob.recoveries.flatMap((r) => [r._id, r.workflowId]);
    expect(await claimsNaming(annIds)).not.toEqual([]);
    const bobClaims = await claimsNaming(bobIds);
    expect(bobClaims).not.toEqual([]);
    const annBudget = await stack.stores.cardBudgets.attemptsSince(
      cardKeyOf(clientId, ann.tokens.card),
      new Date(0),
    );
    expect(annBudget).toHaveLength(1);

    const res = await erase({ customerEmail: 'Ann@Example.com' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      erased: true,
      erasedAt: expect.any(String),
      recoveries: 2,
      pulses: 1,
      events: annEvents.length,
      links: 2,
      workflowHistories: workflowIds.length,
    });

    // Nothing left names Ann: not her email, not one of her cards (the new one saved through the link too).
    const annTokens = [...Object.values(ann.tokens), newCardIn(annEvents)];
    const dump = await everything(stack.stores);
    for (const text of [ann.email, 'cus_ann', ...annTokens]) expect(dump).not.toContain(text);
    // Nor the hashes of her cards in her recoveries, nor her stolen card's block (which still holds).
    const annCards = annTokens.map((t) => cardKeyOf(clientId, t));
    const recoveriesColl = stack.stores.db.collection<{ _id: string }>(collections.recoveries);
    expect(await recoveriesColl.countDocuments({ cardKey: { $in: annCards } })).toBe(0);
    const block = await stack.stores.db
      .collection<{ _id: string }>(collections.blockedCards)
      .findOne({ _id: cardKeyOf(clientId, ann.tokens.stolen) });
    expect(block).toMatchObject({ declineCode: 'stolen_card', transactionId: 'erased' });
    for (const text of [bob.email, 'cus_bob', ...Object.values(bob.tokens)]) expect(dump).toContain(text);
    // Her cards' attempt budgets and duplicate claims still count, but name none of her recoveries.
    expect(await claimsNaming(annIds)).toEqual([]);
    expect(
      await stack.stores.cardBudgets.attemptsSince(cardKeyOf(clientId, ann.tokens.card), new Date(0)),
    ).toEqual(annBudget);
    expect(await claimsNaming(bobIds)).toEqual(bobClaims);
    // Temporal deletes a closed history once its close is acknowledged in the history queue (about 30 s).
    for (const id of workflowIds)
      expect(await poll(() => historyGone(id), Boolean, { timeoutMs: 90_000, everyMs: 1_000 }), id).toBe(
        true,
      );
    for (const url of ann.links) expect((await fetch(onServer(stack.baseUrl, url))).status).toBe(404);
    for (const e of annEvents)
      expect((await call(stack.baseUrl, 'GET', `/api/events/${e._id}`, { key })).status).toBe(404);

    // Her recoveries stay for the books, under one pseudonym with her pulse; reports do not change.
    const kept = await Promise.all(ann.recoveries.map((r) => stack.stores.recoveries.find(clientId, r._id)));
    const pseudonym = kept[0]?.customerEmail ?? '';
    expect(pseudonym).toMatch(/^erased-[0-9a-f-]{36}@erased\.invalid$/);
    for (const doc of kept)
      expect(doc).toMatchObject({
        customerEmail: pseudonym,
        paymentMethodToken: 'erased',
        request: { customerEmail: pseudonym, paymentMethodToken: 'erased' },
      });
    expect(kept.map((d) => d?.request.fallbackPaymentMethodTokens)).toEqual([undefined, undefined]);
    const pulse = await stack.stores.db.collection(collections.pulses).findOne({ customerEmail: pseudonym });
    expect(pulse).toMatchObject({ amount: 900, merchantTransactionId: 'ann-paid' });
    for (const [i, r] of ann.recoveries.entries())
      expect((await call(stack.baseUrl, 'GET', `/api/recovery/status/${r.publicId}`, { key })).body).toEqual(
        statuses[i]?.body,
      );
    expect(await report()).toEqual(books);
    expect((await paywall(ann.email)).body).toMatchObject({ isPastDue: false, failedPaymentCount: 0 });

    // Bob's records are as they were.
    expect((await paywall(bob.email)).body).toEqual(bobPaywall);
    expect((await deliveredEvents(bob)).map((e) => e._id).sort()).toEqual(bobEvents.map((e) => e._id).sort());
    expect(await historyGone(bob.recoveries[0]?.workflowId ?? '')).toBe(false);

    // Nothing left to export under her email, and asked again, nothing left to erase.
    expect((await exportOf({ customerEmail: ann.email })).body).toMatchObject({
      identifiers: { customerEmails: [ann.email], paymentMethodTokens: [], customerIds: [] },
      recoveries: [],
      pulses: [],
      events: [],
      links: [],
    });
    const again = await erase({ customerEmail: ann.email });
    expect(again.body).toMatchObject({ recoveries: 0, pulses: 0, events: 0, links: 0, workflowHistories: 0 });
  }, 150_000);

  it('finds recoveries executed without an email by their tokens', async () => {
    const res = await post('/api/recovery/execute', {
      paymentMethodToken: 'tok_nomail_card',
      fallbackPaymentMethodTokens: ['tok_nomail_backup'],
      originalDeclineCode: 'try_again_later',
      amount: 700,
    });
    expect(res.status).toBe(200);
    const erased = await poll(
      () => erase({ paymentMethodTokens: ['tok_nomail_backup'] }),
      (r) => r.status === 200,
    );
    expect(erased.body).toMatchObject({ recoveries: 1, events: 1 });
    const dump = await everything(stack.stores);
    expect(dump).not.toContain('tok_nomail_card');
    expect(dump).not.toContain('tok_nomail_backup');
  });

  it('erases the recoveries its card-update links name, with their events and the card’s Proof Mode group', async () => {
    const mia = await customerNamedOnlyByLinks('mia');
    const { holdouts } = stack.stores;
    expect(await holdouts.assign(clientId, mia.cards.charged, () => true, new Date())).toBe(true);
    const erased = await poll(
      () => erase({ customerEmail: mia.email }),
      (r) => r.status === 200,
    );
    expect(erased.body).toMatchObject({ recoveries: 2, events: 2, links: 2 });
    const kept = await Promise.all(
      mia.transactionIds.map((id) => stack.stores.recoveries.find(clientId, id)),
    );
    for (const doc of kept)
      expect(doc).toMatchObject({ paymentMethodToken: 'erased', request: { paymentMethodToken: 'erased' } });
    expect(kept.map((d) => d?.request.binPrefix)).toEqual([undefined, undefined]);
    const dump = await everything(stack.stores);
    for (const text of [mia.email, ...Object.values(mia.cards)]) expect(dump).not.toContain(text);
    // The card's next recovery is drawn afresh.
    expect(await holdouts.assign(clientId, mia.cards.charged, () => false, new Date())).toBe(false);
  });

  it('named by one card, finds the recoveries of the same email on another: waits for them, then erases all', async () => {
    const email = 'hal@example.com';
    const execute = (paymentMethodToken: string, originalDeclineCode: string, amount: number) =>
      post<{ transactionId: string }>('/api/recovery/execute', {
        paymentMethodToken,
        originalDeclineCode,
        amount,
        customerEmail: email,
      });
    const recovered = await execute('tok_hal_first', 'try_again_later', 2500);
    const queued = await execute('tok_hal_second', 'insufficient_funds', 3000);
    expect([recovered.status, queued.status]).toEqual([200, 202]);
    const ids = [recovered.body.transactionId, queued.body.transactionId];

    const exported = await exportOf({ paymentMethodTokens: ['tok_hal_first'] });
    expect(exported.body.recoveries.map((r) => r.transactionId).sort()).toEqual(ids.toSorted());
    expect(exported.body.identifiers).toEqual({
      customerEmails: [email],
      paymentMethodTokens: expect.arrayContaining(['tok_hal_first', 'tok_hal_second']),
      customerIds: [],
    });

    const refused = await erase({ paymentMethodTokens: ['tok_hal_first'] });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ transactionIds: [queued.body.transactionId] });
    expect(await stack.stores.recoveries.find(clientId, queued.body.transactionId)).toMatchObject({
      customerEmail: email,
      paymentMethodToken: 'tok_hal_second',
    });
    expect((await paywall(email)).body).toMatchObject({ isPastDue: true });

    const stop = await post('/api/recovery/stop', {
      transactionId: queued.body.transactionId,
      reason: 'not_owed',
    });
    expect(stop.status).toBe(200);
    const erased = await poll(
      () => erase({ paymentMethodTokens: ['tok_hal_first'] }),
      (r) => r.status === 200,
    );
    expect(erased.body).toMatchObject({ recoveries: 2 });
    const kept = await Promise.all(ids.map((id) => stack.stores.recoveries.find(clientId, id)));
    expect(kept[0]?.customerEmail).toMatch(/@erased\.invalid$/);
    expect(kept.map((d) => [d?.customerEmail, d?.paymentMethodToken])).toEqual([
      [kept[0]?.customerEmail, 'erased'],
      [kept[0]?.customerEmail, 'erased'],
    ]);
    const dump = await everything(stack.stores);
    for (const text of [email, 'tok_hal_first', 'tok_hal_second']) expect(dump).not.toContain(text);
  });

  it('is refused with 409 while a recovery of the customer is under way, and changes nothing', async () => {
    const email = 'carl@example.com';
    const queued = await post<{ transactionId: string }>('/api/recovery/execute', {
      paymentMethodToken: 'tok_carl_card',
      originalDeclineCode: 'insufficient_funds',
      amount: 3000,
      customerEmail: email,
    });
    expect(queued.status).toBe(202);
    const refused = await erase({ customerEmail: email });
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({
      error: 'Customer has work under way',
      message: expect.stringContaining('/api/recovery/stop'),
      transactionIds: [queued.body.transactionId],
      eventIds: [],
      erasedSoFar: false,
    });
    expect(await stack.stores.recoveries.find(clientId, queued.body.transactionId)).toMatchObject({
      customerEmail: email,
      paymentMethodToken: 'tok_carl_card',
    });
    expect(await stack.stores.db.collection(collections.erasures).countDocuments()).toBe(0);

    const stop = await post('/api/recovery/stop', {
      transactionId: queued.body.transactionId,
      reason: 'not_owed',
    });
    expect(stop.status).toBe(200);
    const erased = await erase({ customerEmail: email });
    expect(erased.status).toBe(200);
    expect(erased.body).toMatchObject({ recoveries: 1, workflowHistories: 1 });
  });

  it('is refused with 409 while a recovery is stored but its workflow never started, which a retry of the request then resumes', async () => {
    const { account, apiKey } = await stack.createAccount({ webhookUrl: receiver.url });
    const email = 'nia@example.com';
    const body = {
      paymentMethodToken: 'tok_nia_card',
      originalDeclineCode: 'try_again_later',
      amount: 2700,
      customerEmail: email,
      idempotencyKey: 'nia-1',
    };
    // Stored two minutes ago by an intake that died before it started the workflow: Temporal has none.
    const admitted = await admitRecovery(
      stack.stores,
      account,
      RecoveryRequest.parse(body),
      new Date(Date.now() - 120_000),
    );
    if (admitted.kind !== 'admitted') throw new Error('not admitted');
    const transactionId = admitted.doc.publicId;
    const stored = await stack.stores.recoveries.find(account.id, transactionId);
    expect(stored).toMatchObject({ state: 'processing', customerEmail: email });

    const refused = await erase({ customerEmail: email }, apiKey);
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({
      error: 'Customer has work under way',
      message: expect.stringContaining('Nothing was changed.'),
      transactionIds: [transactionId],
      eventIds: [],
      erasedSoFar: false,
    });
    expect(await stack.stores.recoveries.find(account.id, transactionId)).toEqual(stored);
    expect(await stack.stores.db.collection(collections.erasures).countDocuments()).toBe(0);

    // The merchant's retry of the request resumes it under its own id; then the erasure goes ahead.
    const resumed = await post('/api/recovery/execute', body, apiKey);
    expect(resumed.status).toBe(200);
    expect(resumed.body).toMatchObject({ success: true, transactionId });
    const erased = await poll(
      () => erase({ customerEmail: email }, apiKey),
      (r) => r.status === 200,
    );
    expect(erased.body).toMatchObject({ recoveries: 1 });
    expect((await stack.stores.recoveries.find(account.id, transactionId))?.customerEmail).toMatch(
      /@erased\.invalid$/,
    );
  });

  it('spares a recovery admitted while it runs, answers it as under way, and finishes once it has ended', async () => {
    const email = 'kim@example.com';
    const { first, stores, racing } = await racingErasure(email, 'kim', 2500);
    const deps = { stores, temporal: stack.temporal, clock: () => new Date() };
    const outcome = await eraseCustomer(deps, clientId, { customerEmail: email });
    expect(outcome).toEqual({ kind: 'in_flight', transactionIds: [racing()], eventIds: [], partly: true });

    // What the erasure found is erased; the new recovery is untouched and the paywall still reads it.
    const pseudonymised = await stack.stores.recoveries.find(clientId, first.body.transactionId);
    expect(pseudonymised?.customerEmail).toMatch(/@erased\.invalid$/);
    expect(await stack.stores.recoveries.find(clientId, racing())).toMatchObject({
      customerEmail: email,
      paymentMethodToken: 'tok_kim_second',
    });
    expect((await stack.stores.recoveries.forCustomer(clientId, email)).map((r) => r._id)).toEqual([
      racing(),
    ]);
    expect((await paywall(email)).body).toMatchObject({ isPastDue: true, failedPaymentCount: 1 });

    // Once it has ended, the same request finishes the erasure under the same pseudonym.
    await stopThenErase(racing(), email);
    expect((await stack.stores.recoveries.find(clientId, racing()))?.customerEmail).toBe(
      pseudonymised?.customerEmail,
    );
    expect(await everything(stack.stores)).not.toContain(email);
    expect(await stack.stores.db.collection(collections.erasures).countDocuments()).toBe(0);
  });

  it('answers erasedSoFar true over HTTP when a recovery admitted while it ran leaves it unfinished', async () => {
    const email = 'ora@example.com';
    const { first, stores, racing } = await racingErasure(email, 'ora', 2600);
    const api = await startApi(stores);
    try {
      const refused = await call(api.baseUrl, 'POST', '/api/customers/erase', {
        key,
        body: { customerEmail: email },
      });
      expect(refused.status).toBe(409);
      expect(refused.body).toEqual({
        error: 'Customer has work under way',
        message: expect.stringContaining(
          'These were admitted or published while the erasure ran: what it found before them is erased, and erasing again finishes it.',
        ),
        transactionIds: [racing()],
        eventIds: [],
        erasedSoFar: true,
      });
      expect(refused.body.message).not.toContain('Nothing was changed');
      expect(api.undeclared).toEqual([]);
    } finally {
      await api.close();
    }
    expect((await stack.stores.recoveries.find(clientId, first.body.transactionId))?.customerEmail).toMatch(
      /@erased\.invalid$/,
    );

    // Once the new recovery has ended, the same request finishes the erasure.
    await stopThenErase(racing(), email);
    expect(await stack.stores.db.collection(collections.erasures).countDocuments()).toBe(0);
  });

  it('waits for a webhook delivery under way, but not for one that will never finish', async () => {
    // The default endpoint of a test account refuses connections: its deliveries are retried for a day.
    const { account, apiKey } = await stack.createAccount();
    const email = 'gus@example.com';
    const res = await post(
      '/api/recovery/execute',
      {
        paymentMethodToken: 'tok_gus_card',
        originalDeclineCode: 'try_again_later',
        amount: 2500,
        customerEmail: email,
      },
      apiKey,
    );
    expect(res.status).toBe(200);
    const [event] = await stack.stores.events.list({ accountId: account.id });
    const refused = await poll(
      () => erase({ customerEmail: email }, apiKey),
      (r) =>
        r.status === 409 && (r.body as unknown as { transactionIds: string[] }).transactionIds.length === 0,
    );
    expect(refused.body).toMatchObject({ transactionIds: [], eventIds: [event?._id] });

    // Its delivery is ended from outside, and another event's never started: neither is under way.
    await stack.temporal.workflow.getHandle(webhookWorkflowId(event?._id ?? '')).terminate('test');
    const longAgo = new Date(Date.now() - 120_000);
    await stack.stores.db
      .collection<{ _id: string }>(collections.events)
      .updateOne({ _id: event?._id ?? '' }, { $set: { 'deliveries.0.startedAt': longAgo } });
    await stack.stores.events.insert({
      ...event!,
      _id: 'never-started',
      createdAt: longAgo,
      deliveries: [{ deliveryId: 'initial', startedAt: longAgo, attempts: [] }],
    });
    const erased = await erase({ customerEmail: email }, apiKey);
    expect(erased.status).toBe(200);
    expect(erased.body).toMatchObject({ recoveries: 1, events: 2 });
  });

  it('waits for a resend of a delivered event, which stays delivered while it runs', async () => {
    let failing = false;
    const flaky = await startReceiver({ answer: () => ({ status: failing ? 500 : 200 }) });
    try {
      const { account, apiKey } = await stack.createAccount({ webhookUrl: flaky.url });
      const email = 'ivy@example.com';
      const res = await post(
        '/api/recovery/execute',
        {
          paymentMethodToken: 'tok_ivy_card',
          originalDeclineCode: 'try_again_later',
          amount: 2500,
          customerEmail: email,
        },
        apiKey,
      );
      expect(res.status).toBe(200);
      const [event] = await poll(
        () => stack.stores.events.list({ accountId: account.id }),
        (events) => events.length > 0 && events.every((e) => e.deliveryStatus === 'delivered'),
      );
      const eventId = event?._id ?? '';

      // The endpoint fails now: the resend's delivery is retried on its schedule, the event stays delivered.
      failing = true;
      const resent = await call(stack.baseUrl, 'POST', `/api/events/${eventId}/resend`, {
        key: apiKey,
        body: {},
      });
      expect(resent.status).toBe(202);
      const retrying = await poll(
        () => stack.stores.events.get(eventId),
        (e) => (e?.deliveries[1]?.attempts.length ?? 0) > 0,
      );
      expect(retrying).toMatchObject({ deliveryStatus: 'delivered' });
      // Past the grace a delivery just recorded gets: only its running workflow holds the erasure up.
      await stack.stores.db
        .collection<{ _id: string }>(collections.events)
        .updateOne({ _id: eventId }, { $set: { 'deliveries.1.startedAt': new Date(Date.now() - 120_000) } });
      const refused = await erase({ customerEmail: email }, apiKey);
      expect(refused.status).toBe(409);
      expect(refused.body).toMatchObject({ transactionIds: [], eventIds: [eventId] });

      await stack.temporal.workflow.getHandle(webhookWorkflowId(eventId, 1)).terminate('test');
      const erased = await erase({ customerEmail: email }, apiKey);
      expect(erased.status).toBe(200);
      expect(erased.body).toMatchObject({ recoveries: 1, events: 1 });
    } finally {
      await flaky.close();
    }
  });

  it('an interrupted erasure finishes when run again, with the same pseudonym throughout', async () => {
    const dana = await customer('dana');
    await deliveredEvents(dana);
    let failed = false;
    const stores: Stores = {
      ...stack.stores,
      recoveries: {
        ...stack.stores.recoveries,
        async pseudonymise(doc, pseudonym, now) {
          // The process dies after the first recovery.
          if (failed) throw new Error('process died');
          failed = true;
          await stack.stores.recoveries.pseudonymise(doc, pseudonym, now);
        },
      },
    };
    const deps = { stores, temporal: stack.temporal, clock: () => new Date() };
    await expect(eraseCustomer(deps, clientId, { customerEmail: dana.email })).rejects.toThrow(
      'process died',
    );
    const finished = await eraseCustomer({ ...deps, stores: stack.stores }, clientId, {
      customerEmail: dana.email,
    });
    expect(finished).toMatchObject({ kind: 'erased', recoveries: 1 });
    const kept = await Promise.all(dana.recoveries.map((r) => stack.stores.recoveries.find(clientId, r._id)));
    const pulse = await stack.stores.db
      .collection(collections.pulses)
      .findOne({ merchantTransactionId: 'dana-paid' });
    const pseudonyms = new Set([...kept.map((d) => d?.customerEmail), pulse?.customerEmail]);
    expect(pseudonyms.size).toBe(1);
    expect(await everything(stack.stores)).not.toContain(dana.email);
    expect(await stack.stores.db.collection(collections.erasures).countDocuments()).toBe(0);
  });

  it('interrupted after the recovery that led to another address, still erases that address when run again', async () => {
    // Eve's card was also charged for a recovery under her work address: named by one, both are hers.
    const execute = (customerEmail: string, amount: number) =>
      post<{ transactionId: string }>('/api/recovery/execute', {
        paymentMethodToken: 'tok_eve_card',
        originalDeclineCode: 'try_again_later',
        amount,
        customerEmail,
      });
    const home = await execute('eve@example.com', 1500);
    const work = await execute('eve.work@example.com', 1600);
    expect([home.status, work.status]).toEqual([200, 200]);
    let died = false;
    const stores: Stores = {
      ...stack.stores,
      recoveries: {
        ...stack.stores.recoveries,
        async pseudonymise(doc, pseudonym, now) {
          // The process dies once the home address's recovery, which led to the card, is pseudonymised.
          if (doc._id !== home.body.transactionId) {
            const first = await stack.stores.recoveries.find(clientId, home.body.transactionId);
            if (first) await stack.stores.recoveries.pseudonymise(first, pseudonym, now);
            died = true;
            throw new Error('process died');
          }
          await stack.stores.recoveries.pseudonymise(doc, pseudonym, now);
        },
      },
    };
    const deps = { stores, temporal: stack.temporal, clock: () => new Date() };
    const named = { customerEmail: 'eve@example.com' };
    await poll(
      () => eraseCustomer(deps, clientId, named).catch((error: unknown) => error),
      () => died,
    );
    expect((await stack.stores.recoveries.find(clientId, work.body.transactionId))?.customerEmail).toBe(
      'eve.work@example.com',
    );

    const finished = await eraseCustomer({ ...deps, stores: stack.stores }, clientId, named);
    expect(finished).toMatchObject({ kind: 'erased', recoveries: 1 });
    const kept = await Promise.all(
      [home, work].map((r) => stack.stores.recoveries.find(clientId, r.body.transactionId)),
    );
    expect(new Set(kept.map((d) => d?.customerEmail)).size).toBe(1);
    expect(kept[0]?.customerEmail).toMatch(/@erased\.invalid$/);
    const dump = await everything(stack.stores);
    for (const text of ['eve@example.com', 'eve.work@example.com', 'tok_eve_card'])
      expect(dump).not.toContain(text);
    expect(await stack.stores.db.collection(collections.erasures).countDocuments()).toBe(0);
  });

  it('leaves no recovery in the customer index, including one data retention deleted', async () => {
    const other = await stack.createAccount();
    const email = 'leo@example.com';
    const res = await post<{ transactionId: string }>(
      '/api/recovery/execute',
      {
        paymentMethodToken: 'tok_leo_card',
        originalDeclineCode: 'try_again_later',
        amount: 2500,
        customerEmail: email,
      },
      other.apiKey,
    );
    expect(res.status).toBe(200);
    const index = stack.stores.db.collection(collections.customerRecoveries);
    const naming = () => index.countDocuments({ transactionId: res.body.transactionId });
    expect(await naming()).toBe(1);
    expect(
      await stack.stores.recoveries.purgeSettledBefore(other.account.id, new Date(Date.now() + 1000)),
    ).toBe(1);
    expect((await erase({ customerEmail: email }, other.apiKey)).body).toMatchObject({ recoveries: 0 });
    expect(await naming()).toBe(0);
  });

  it('forgets proactive-retention notices and Proof Mode groups of the customer', async () => {
    const { retentionNotices, holdouts, db } = stack.stores;
    const now = new Date();
    const day = 86_400_000;
    expect(await retentionNotices.claim(clientId, 'fay@example.com', 'evt-1', now, 30 * day)).toBe(true);
    expect(await retentionNotices.claim(clientId, 'fay@example.com', 'evt-2', now, 30 * day)).toBe(false);
    // And the one made while the account integrated in test mode.
    const sandbox = { simulated: true };
    expect(await retentionNotices.claim(clientId, 'fay@example.com', 'evt-s1', now, 30 * day, sandbox)).toBe(
      true,
    );
    expect(await holdouts.assign(clientId, 'fay@example.com', () => true, now)).toBe(true);
    expect((await erase({ customerEmail: 'fay@example.com' })).status).toBe(200);
    const notices = db.collection(collections.retentionNotices);
    expect(await notices.countDocuments({ eventId: { $in: ['evt-1', 'evt-s1'] } })).toBe(0);
    // A later failure of the same address is a new customer: offered again, and drawn again.
    expect(await retentionNotices.claim(clientId, 'fay@example.com', 'evt-3', now, 30 * day)).toBe(true);
    expect(await retentionNotices.claim(clientId, 'fay@example.com', 'evt-s2', now, 30 * day, sandbox)).toBe(
      true,
    );
    expect(await holdouts.assign(clientId, 'fay@example.com', () => false, now)).toBe(false);
  });

  it('erases nothing of another account’s customer', async () => {
    await deliveredEvents(bob);
    const other = await stack.createAccount();
    const res = await erase({ customerEmail: bob.email }, other.apiKey);
    expect(res.body).toMatchObject({ recoveries: 0, pulses: 0, events: 0, links: 0, workflowHistories: 0 });
    expect(await everything(stack.stores)).toContain(bob.email);
  });

  it.each([
    [{}, 'customerEmail'],
    [{ customerEmail: 'not-an-email' }, 'customerEmail'],
    [{ customerId: '' }, 'customerId'],
    [{ paymentMethodTokens: [] }, 'paymentMethodTokens'],
    [{ paymentMethodTokens: Array.from({ length: 21 }, (_, i) => `tok_${i}`) }, 'paymentMethodTokens'],
    [{ customerEmail: 'ann@example.com', name: 'Ann' }, 'name'],
  ])('%j is a 400 naming %s', async (body, field) => {
    const res = await erase(body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'Validation failed', details: { [field]: expect.any(Array) } });
  });

  it('needs the secret key', async () => {
    const res = await call(stack.baseUrl, 'POST', '/api/customers/erase', {
      body: { customerEmail: bob.email },
    });
    expect(res.status).toBe(401);
  });
});

describe('recoup customers erase', () => {
  it('erases as the API does and prints what it did', async () => {
    await deliveredEvents(bob);
    const run = await recoup('customers', 'erase', clientId, '--email', bob.email, '--json');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ erased: true, recoveries: 2, pulses: 1, links: 2 });
    expect(await everything(stack.stores)).not.toContain(bob.email);
    const again = await recoup('customers', 'erase', clientId, '--customer-id', 'cus_bob');
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('0 recoveries');
  });

  it('refuses a customer with a recovery under way (exit 1), and bad usage (exit 2)', async () => {
    const queued = await post<{ transactionId: string }>('/api/recovery/execute', {
      paymentMethodToken: 'tok_erin_card',
      originalDeclineCode: 'insufficient_funds',
      amount: 3000,
      customerEmail: 'erin@example.com',
    });
    const busy = await recoup('customers', 'erase', clientId, '--email', 'erin@example.com');
    expect(busy.code).toBe(1);
    expect(busy.stderr).toContain(`recovery ${queued.body.transactionId}`);
    const unnamed = await recoup('customers', 'erase', clientId);
    expect(unnamed.code).toBe(2);
    expect(unnamed.stderr).toContain('name the customer');
    const unknown = await recoup('customers', 'erase', 'acct_nobody', '--email', 'erin@example.com');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('acct_nobody');
  });
});
