import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localParts } from '../domain/local-time.js';
import { recoveryWorkflowId } from '../domain/recovery.js';
import { searchAttributeKeys } from '../domain/search-attributes.js';
import { paydayPrior } from '../domain/success-model.js';
import { amountDueSignal } from '../workflows/recovery-definitions.js';
import type { EventRecord } from '../store/events.js';
import type { SandboxCharge } from '../store/test-gateway.js';
import { poll } from './support/poll.js';
import { call, type Stack } from './support/stack.js';
import { startAdyenEmulator, type AdyenEmulator } from './support/adyen-emulator.js';
import { startBraintreeEmulator, type BraintreeEmulator } from './support/braintree-emulator.js';
import { startGoCardlessEmulator, type GoCardlessEmulator } from './support/gocardless-emulator.js';
import { startPayPalEmulator, type PayPalEmulator } from './support/paypal-emulator.js';
import { startStripeEmulator, type StripeEmulator } from './support/stripe-emulator.js';
import { skipTo, stackOnTimeSkipping, startTimeSkipping } from './support/time-skipping.js';
import { Registry } from 'prom-client';
import { createWorkerMetrics } from '../activities/metrics.js';
import { RecordingMeter } from './support/recording-meter.js';

// The whole service — HTTP API, workers, real activities, FerretDB — on Temporal's time-skipping server:
// weeks of smart retries run in seconds, and activities read the server's clock, not the wall clock.

let env: TestWorkflowEnvironment;
let stack: Stack;
let stripe: StripeEmulator;
let braintree: BraintreeEmulator;
let adyen: AdyenEmulator;
let gocardless: GoCardlessEmulator;
let paypal: PayPalEmulator;
let n = 0;
/** What the worker counts: a recovery ends once, whatever is recorded after. */
const meter = new RecordingMeter();
const amount = () => 2000 + (n += 1);
const day = 86_400_000;

beforeAll(async () => {
  env = await startTimeSkipping();
  stack = await stackOnTimeSkipping(env, {
    metrics: { api: new Registry(), worker: createWorkerMetrics(meter) },
  });
  stripe = await startStripeEmulator(async () => new Date(await env.currentTimeMs()));
  braintree = await startBraintreeEmulator(async () => new Date(await env.currentTimeMs()));
  adyen = await startAdyenEmulator();
  gocardless = await startGoCardlessEmulator(async () => new Date(await env.currentTimeMs()));
  paypal = await startPayPalEmulator(async () => new Date(await env.currentTimeMs()));
});
afterAll(async () => {
  await stripe?.close();
  await braintree?.close();
  await adyen?.close();
  await gocardless?.close();
  await paypal?.close();
  await stack?.close();
  await env?.teardown();
});

/** Three days before next month's 15th, 10:00 UTC: a payday close enough for insufficient funds to wait for. */
async function skipToBeforePayday() {
  const now = new Date(await env.currentTimeMs());
  await skipTo(env, Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 12, 10));
}

/** Executes a request and lets the recovery run to its end in skipped time; returns the outcome. */
async function runToEnd(apiKey: string, accountId: string, body: Record<string, unknown>) {
  const answer = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
    key: apiKey,
    body: { amount: amount(), ...body },
  });
  const transactionId = String(answer.body.transactionId).replace(/^FAILED_API_/, '');
  const doc = await stack.stores.recoveries.find(accountId, transactionId);
  const handle = env.client.workflow.getHandle(doc!.workflowId);
  await handle.result();
  const startedAt = (await handle.describe()).startTime.getTime();
  const final = (await stack.stores.recoveries.find(accountId, transactionId))!;
  const events = (await stack.stores.events.list({ accountId, limit: 100 })).filter((e: EventRecord) =>
    e.type.startsWith('recovery.'),
  );
  return { answer, final, events, startedAt };
}

describe('smart retries on the time-skipping server', () => {
  it('an insufficient-funds recovery is queued to a payday window, retried then, and reported by recovery.success', async () => {
    await skipToBeforePayday();
    const { apiKey, account } = await stack.createAccount();
    const out = await runToEnd(apiKey, account.id, {
      paymentMethodToken: 'tok_visa',
      originalDeclineCode: 'insufficient_funds',
    });
    expect(out.answer.status).toBe(202);
    const planned = Date.parse(String(out.answer.body.nextAttemptAt));
    expect(paydayPrior('funds', localParts(planned, 0), null)).toBeGreaterThan(1);
    expect(new Date(planned).getUTCDate()).toBe(15);
    expect(out.final).toMatchObject({ state: 'succeeded', strategyUsed: 'smart_retry' });
    expect(out.final.attempts).toHaveLength(1);
    expect(Math.abs(out.final.attempts[0]!.at.getTime() - planned)).toBeLessThan(5_000);
    expect(out.events.map((e) => e.type)).toEqual(['recovery.success']);
    expect(out.events[0]!.payload).toMatchObject({
      serviceTransactionId: out.answer.body.transactionId,
      strategyUsed: 'smart_retry',
    });
  });

  it('a part of the payment made elsewhere while it waits: the planned retry collects only what is still due', async () => {
    await skipToBeforePayday();
    const { apiKey, account } = await stack.createAccount();
    const answer = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: apiKey,
      body: { amount: 5000, paymentMethodToken: 'tok_visa', originalDeclineCode: 'insufficient_funds' },
    });
    expect(answer.body).toMatchObject({ status: 'queued' });
    const id = String(answer.body.transactionId);
    const handle = env.client.workflow.getHandle(
      (await stack.stores.recoveries.find(account.id, id))!.workflowId,
    );
    // The billing platform reports 3,000 still due; a later, higher figure or a nonsense one changes nothing.
    await handle.signal(amountDueSignal, { amount: 3000 });
    await handle.signal(amountDueSignal, { amount: 4000 });
    await handle.signal(amountDueSignal, { amount: 0 });
    await handle.result();
    const final = (await stack.stores.recoveries.find(account.id, id))!;
    expect(final).toMatchObject({ state: 'succeeded', amount: 3000, request: { amount: 5000 } });
    const charge = await stack.stores.db
      .collection<SandboxCharge>('sandboxCharges')
      .findOne({ transactionId: final.gatewayTransactionId! });
    expect(charge).toMatchObject({ token: 'tok_visa', amount: 3000, approved: true });
    const events = await stack.stores.events.list({ accountId: account.id, limit: 10 });
    expect(events.map((e) => [e.type, e.payload])).toEqual([
      ['recovery.success', expect.objectContaining({ amount: 3000 })],
    ]);
    const status = await call(stack.baseUrl, 'GET', `/api/recovery/status/${id}`, {
      key: apiKey,
    });
    expect(status.body).toMatchObject({ status: 'succeeded', amount: 3000 });
  });

  it('a part of the payment made elsewhere while a charge is being confirmed: the charge collected what it was sent for, and that is what is recorded', async () => {
    const { apiKey, account } = await stack.createAccount();
    // The gateway takes the charge but its answer is lost: the recovery confirms it before anything else.
    const answer = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: apiKey,
      body: { amount: 5000, paymentMethodToken: 'tok_timeout', originalDeclineCode: 'try_again_later' },
    });
    const id = String(answer.body.transactionId);
    const doc = await stack.stores.recoveries.find(account.id, id);
    expect(doc).toMatchObject({ state: 'reconciling' });
    const handle = env.client.workflow.getHandle(doc!.workflowId);
    await handle.signal(amountDueSignal, { amount: 3000 });
    await handle.result();
    const final = (await stack.stores.recoveries.find(account.id, id))!;
    expect(final).toMatchObject({ state: 'succeeded', amount: 5000 });
    const charge = await stack.stores.db
      .collection<SandboxCharge>('sandboxCharges')
      .findOne({ transactionId: final.gatewayTransactionId! });
    expect(charge).toMatchObject({ amount: 5000, approved: true });
    const events = await stack.stores.events.list({ accountId: account.id, limit: 10 });
    expect(events.map((e) => [e.type, e.payload])).toEqual([
      ['recovery.success', expect.objectContaining({ amount: 5000, trigger: 'reconciliation' })],
    ]);
  });

  it('a recovery that keeps failing exhausts its budget on schedule and emits recovery.failed once', async () => {
    const { apiKey, account } = await stack.createAccount({
      retryPolicy: { maxAttempts: 4, maxDays: 21 },
      riskSkipThreshold: 100,
    });
    const out = await runToEnd(apiKey, account.id, {
      paymentMethodToken: 'tok_decline_do_not_honor',
      originalDeclineCode: 'do_not_honor',
    });
    expect(out.answer.status).toBe(202);
    expect(out.final).toMatchObject({
      state: 'failed',
      strategyUsed: 'all_failed',
      recommendedAction: 'retry_later',
    });
    const times = out.final.attempts.map((a) => a.at.getTime());
    expect(times).toHaveLength(4);
    const start = out.startedAt;
    for (const [i, t] of times.entries()) {
      expect(t - start).toBeLessThanOrEqual(21 * day);
      if (i > 0) expect(t - times[i - 1]!).toBeGreaterThanOrEqual(day / 2);
    }
    expect(out.events.filter((e) => e.type === 'recovery.failed')).toHaveLength(1);
    expect(out.events[0]!.payload).toMatchObject({
      event: 'recovery.failed',
      serviceTransactionId: out.answer.body.transactionId,
    });
  });

  it.each([
    ['stolen_card', 'manual_review', []],
    // Stripe's "do not try again": never retried (before 2026-11-26 it was an unknown code, retried).
    ['do_not_try_again', 'request_card_update', []],
    ['authentication_required', 'request_card_update', ['recovery.authentication_required']],
  ])(
    'a queued retry the issuer answers %s ends failed (the 202’s final outcome), not blocked, and the card is not tried again',
    async (code, action, alsoSent) => {
      await skipToBeforePayday();
      const { apiKey, account } = await stack.createAccount();
      const token = `tok_decline_${code}`;
      const out = await runToEnd(apiKey, account.id, {
        paymentMethodToken: token,
        originalDeclineCode: 'insufficient_funds',
      });
      expect(out.answer.status).toBe(202);
      expect(out.final).toMatchObject({
        state: 'failed',
        lastDeclineCode: code,
        recommendedAction: action,
      });
      expect(out.final.attempts).toHaveLength(1);
      expect(out.events.map((e) => e.type).sort()).toEqual([...alsoSent, 'recovery.failed'].sort());
      expect(out.events.find((e) => e.type === 'recovery.failed')!.payload).toMatchObject({
        serviceTransactionId: out.answer.body.transactionId,
        recommendedAction: action,
      });
      const status = await call(stack.baseUrl, 'GET', `/api/recovery/status/${out.final._id}`, {
        key: apiKey,
      });
      expect(status.body).toMatchObject({ status: 'failed', state: 'failed' });
    },
  );

  describe("a planned retry keeps the customer's clock and the account's billing cycle", () => {
    // An issuer decline is retried no sooner than a day after the failure (an issuer that just declined a
    // card rarely changes its mind the same day), and then as soon as the customer's clock is in the late
    // morning, 10:00 to 13:00: the hours issuers approve most.

    /** Next month's 12th, 10:00 UTC. */
    async function skipToMidMonth() {
      const now = new Date(await env.currentTimeMs());
      await skipTo(env, Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 12, 10));
    }
    /** Tokyo keeps no summer time: UTC+9 all year. */
    const tokyoOffset = 9 * 60;

    /** Executes an issuer decline on a card that then charges; returns when its retry is planned. */
    async function queueIssuerDecline(apiKey: string, accountId: string, body: Record<string, unknown> = {}) {
      const answer = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
        key: apiKey,
        body: {
          amount: amount(),
          paymentMethodToken: 'tok_visa',
          originalDeclineCode: 'do_not_honor',
          ...body,
        },
      });
      expect(answer.body).toMatchObject({ status: 'queued' });
      const id = String(answer.body.transactionId);
      const doc = (await stack.stores.recoveries.find(accountId, id))!;
      return {
        accountId,
        id,
        workflowId: doc.workflowId,
        planned: Date.parse(String(answer.body.nextAttemptAt)),
      };
    }

    /** Lets each queued recovery run, one after another, and checks that its one charge came as planned. */
    async function chargedAsPlanned(...queued: Array<Awaited<ReturnType<typeof queueIssuerDecline>>>) {
      for (const q of queued) {
        await env.client.workflow.getHandle(q.workflowId).result();
        const final = (await stack.stores.recoveries.find(q.accountId, q.id))!;
        expect(final.state).toBe('succeeded');
        expect(final.attempts).toHaveLength(1);
        expect(Math.abs(final.attempts[0]!.at.getTime() - q.planned)).toBeLessThan(5_000);
      }
    }

    it('the account’s time zone is its customers’ clock: a Tokyo account’s retry comes at 10:00 in Tokyo, a UTC one’s at 11:00 UTC', async () => {
      await skipToMidMonth();
      const utc = await stack.createAccount({ timezone: 'UTC' });
      const tokyo = await stack.createAccount({ timezone: 'Asia/Tokyo' });
      const inUtc = await queueIssuerDecline(utc.apiKey, utc.account.id);
      const inTokyo = await queueIssuerDecline(tokyo.apiKey, tokyo.account.id);
      // Failed at 10:00 UTC on the 12th (19:00 in Tokyo): a day later is 11:00 UTC, and the evening in Tokyo.
      expect(localParts(inUtc.planned, 0)).toMatchObject({ dayOfMonth: 13, hour: 11 });
      expect(localParts(inTokyo.planned, tokyoOffset)).toMatchObject({ dayOfMonth: 14, hour: 10 });
      await chargedAsPlanned(inUtc, inTokyo);
    });

    it('a card’s issuing country sets the customer’s clock; a country without a zone of its own keeps the account’s', async () => {
      await skipToMidMonth();
      const { apiKey, account } = await stack.createAccount({ timezone: 'UTC' });
      const japanese = await queueIssuerDecline(apiKey, account.id, { cardOrigin: 'JP' });
      const liechtenstein = await queueIssuerDecline(apiKey, account.id, { cardOrigin: 'LI' });
      const unknown = await queueIssuerDecline(apiKey, account.id);
      expect(localParts(japanese.planned, tokyoOffset)).toMatchObject({ dayOfMonth: 14, hour: 10 });
      expect(localParts(liechtenstein.planned, 0)).toMatchObject({ dayOfMonth: 13, hour: 11 });
      expect(unknown.planned).toBe(liechtenstein.planned);
      await chargedAsPlanned(japanese, liechtenstein, unknown);
    });

    it('the account’s billing-cycle day draws a last retry to that day', async () => {
      await skipToMidMonth();
      // One attempt, so no later retry can take the billing day's lift instead; never skipped for risk.
      const settings = {
        timezone: 'UTC',
        retryPolicy: { maxAttempts: 1, maxDays: 21 },
        riskSkipThreshold: 100,
      };
      const plain = await stack.createAccount(settings);
      const cycle = await stack.createAccount({ ...settings, billingCycleDay: 14 });
      const withoutCycle = await queueIssuerDecline(plain.apiKey, plain.account.id);
      const onCycle = await queueIssuerDecline(cycle.apiKey, cycle.account.id);
      expect(localParts(withoutCycle.planned, 0)).toMatchObject({ dayOfMonth: 13, hour: 11 });
      // The billing day's lift is worth waiting most of a day for.
      expect(localParts(onCycle.planned, 0)).toMatchObject({ dayOfMonth: 14, hour: 10 });
      await chargedAsPlanned(withoutCycle, onCycle);
    });
  });

  it('a planned retry reads processing, with no next attempt time, while its charge is under way', async () => {
    await skipToBeforePayday();
    // The gateway takes 1.5 s (wall clock, which the time-skipping server does not skip) to answer.
    const { apiKey, account } = await stack.createAccount({}, [
      { name: 'test', kind: 'test', test: true, credentials: { latencyMs: '1500' } },
    ]);
    const answer = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: apiKey,
      body: { amount: amount(), paymentMethodToken: 'tok_visa', originalDeclineCode: 'insufficient_funds' },
    });
    expect(answer.body).toMatchObject({ status: 'queued' });
    const id = String(answer.body.transactionId);
    const doc = await stack.stores.recoveries.find(account.id, id);
    // What the status record says, in the order it said it, read every 50 ms and once more at the end.
    const seen = new Set<string>();
    const look = async () => {
      const now = await stack.stores.recoveries.find(account.id, id);
      seen.add(`${now!.state} ${now!.nextAttemptAt === null ? 'none' : 'planned'}`);
    };
    let ended = false;
    const watch = (async () => {
      while (!ended) {
        await look();
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    await env.client.workflow.getHandle(doc!.workflowId).result();
    ended = true;
    await watch;
    await look();
    expect([...seen]).toEqual(['queued planned', 'processing none', 'succeeded none']);
  });

  it('a stop that comes while a planned retry is being charged is honoured before the next charge of that retry', async () => {
    await skipToBeforePayday();
    // Each answer takes 1.5 s (wall clock). The fallback card, declined at once, and the primary are both
    // retried at the payday, one after the other.
    const { apiKey, account } = await stack.createAccount({}, [
      { name: 'slot', kind: 'test', test: true, credentials: { latencyMs: '1500' } },
    ]);
    const [primary, fallback] = ['tok_decline_insufficient_funds', 'tok_decline_insufficient_funds_x1'];
    const answer = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: apiKey,
      body: {
        amount: amount(),
        paymentMethodToken: primary,
        fallbackPaymentMethodTokens: [fallback],
        originalDeclineCode: 'insufficient_funds',
      },
    });
    expect(answer.body).toMatchObject({ status: 'queued' });
    const id = String(answer.body.transactionId);
    const doc = await stack.stores.recoveries.find(account.id, id);
    const charged = (token: string) => stack.stores.sandbox.countForToken('slot', token);
    expect([await charged(primary), await charged(fallback)]).toEqual([0, 1]);
    const result = env.client.workflow.getHandle(doc!.workflowId).result();
    // The payday retry's first charge (the primary card) is under way: the merchant stops the recovery.
    while ((await charged(primary)) === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    const stopped = await call(stack.baseUrl, 'POST', '/api/recovery/stop', {
      key: apiKey,
      body: { transactionId: id, reason: 'not_owed' },
    });
    expect([200, 202]).toContain(stopped.status);
    await result;
    expect([await charged(primary), await charged(fallback)]).toEqual([1, 1]);
    expect(await stack.stores.recoveries.find(account.id, id)).toMatchObject({ state: 'stopped' });
  });

  it('a stop recorded on the recovery whose update never reached the workflow is honoured before the next attempt', async () => {
    await skipToBeforePayday();
    const { apiKey, account } = await stack.createAccount({}, [
      { name: 'lost', kind: 'test', test: true, credentials: {} },
    ]);
    const token = 'tok_decline_insufficient_funds';
    const answer = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: apiKey,
      body: { amount: amount(), paymentMethodToken: token, originalDeclineCode: 'insufficient_funds' },
    });
    expect(answer.body).toMatchObject({ status: 'queued' });
    const id = String(answer.body.transactionId);
    const doc = (await stack.stores.recoveries.find(account.id, id))!;
    // The stop API records the stop, then asks the workflow; this ask was lost (no worker took it, and the
    // server forgot it since): only the record says so.
    await stack.stores.recoveries.askStop(doc._id, 'paid_elsewhere', new Date());
    await env.client.workflow.getHandle(doc.workflowId).result();
    expect(await stack.stores.sandbox.countForToken('lost', token)).toBe(0);
    const final = (await stack.stores.recoveries.find(account.id, id))!;
    expect(final).toMatchObject({ state: 'paid_elsewhere', attempts: [] });
  });

  it('an ambiguous attempt is reconciled at the gateway, never charged twice, and reported with trigger reconciliation', async () => {
    const { apiKey, account } = await stack.createAccount();
    const out = await runToEnd(apiKey, account.id, {
      paymentMethodToken: 'tok_timeout',
      originalDeclineCode: 'try_again_later',
    });
    expect(out.answer.body).toMatchObject({ status: 'unknown' });
    expect(out.final.state).toBe('succeeded');
    const charges = { token: 'tok_timeout', amount: out.final.amount };
    expect(await stack.stores.db.collection('sandboxCharges').countDocuments(charges)).toBe(1);
    expect(out.events.map((e) => e.type)).toEqual(['recovery.success']);
    expect(out.events[0]!.payload).toMatchObject({ trigger: 'reconciliation' });
  });

  it("a Stripe charge whose answer is lost is found in Stripe's payments, never charged twice, and reported with trigger reconciliation", async () => {
    stripe.addCard('pm_lost', { customer: 'cus_lost', answers: ['lost'] });
    const { apiKey, account } = await stack.createAccount({}, [
      {
        name: 'stripe',
        kind: 'stripe',
        test: false,
        credentials: { secretKey: stripe.secretKey, apiBase: stripe.url },
      },
    ]);
    const out = await runToEnd(apiKey, account.id, {
      paymentMethodToken: 'pm_lost',
      originalDeclineCode: 'try_again_later',
    });
    expect(out.answer.body).toMatchObject({ status: 'unknown' });
    expect(out.final.state).toBe('succeeded');
    const intents = stripe.intents().filter((i) => i.payment_method === 'pm_lost');
    expect(intents).toHaveLength(1);
    expect(out.final.attempts).toEqual([
      expect.objectContaining({ outcome: 'approved', gatewayTransactionId: intents[0]!.id }),
    ]);
    expect(out.events.map((e) => e.type)).toEqual(['recovery.success']);
    expect(out.events[0]!.payload).toMatchObject({ trigger: 'reconciliation' });
  });

  it("a Braintree sale whose answer is lost is found by its order id once Braintree's search shows it, even a minute late, and never sold twice", async () => {
    braintree.addPaymentMethod('bt_lost', { customerId: 'bt_customer', answers: ['lost'] });
    // Braintree's search shows the sale only a minute after it is made: the first lookup (30 s after the lost
    // answer) finds nothing, and must not take that as "nothing was sold".
    braintree.searchLag(60_000);
    const { apiKey, account } = await stack.createAccount({}, [
      { name: 'braintree', kind: 'braintree', test: false, credentials: braintree.credentials },
    ]);
    const out = await runToEnd(apiKey, account.id, {
      paymentMethodToken: 'bt_lost|bt_customer',
      originalDeclineCode: 'try_again_later',
    });
    braintree.searchLag(0);
    expect(out.answer.body).toMatchObject({ status: 'unknown' });
    expect(out.final.state).toBe('succeeded');
    const sales = braintree.transactions().filter((t) => t.paymentMethodToken === 'bt_lost');
    expect(sales).toHaveLength(1);
    expect(out.final.attempts).toEqual([
      expect.objectContaining({ outcome: 'approved', gatewayTransactionId: sales[0]!.id }),
    ]);
    expect(out.events.map((e) => e.type)).toEqual(['recovery.success']);
    expect(out.events[0]!.payload).toMatchObject({ trigger: 'reconciliation' });
  });

  it('an Adyen payment whose answer is lost is resolved by the same request with the same key: one payment, trigger reconciliation', async () => {
    adyen.addStoredMethod('adyen_lost', {
      merchantAccount: 'AcmeECOM',
      shopperReference: 'shopper_lost',
      answers: ['lost'],
    });
    const { apiKey, account } = await stack.createAccount({}, [
      { name: 'adyen', kind: 'adyen', test: false, credentials: adyen.credentials },
    ]);
    const out = await runToEnd(apiKey, account.id, {
      paymentMethodToken: 'AcmeECOM|adyen_lost|shopper_lost',
      originalDeclineCode: 'try_again_later',
    });
    expect(out.answer.body).toMatchObject({ status: 'unknown' });
    expect(out.final.state).toBe('succeeded');
    const payments = adyen.payments().filter((p) => p.storedPaymentMethodId === 'adyen_lost');
    expect(payments).toHaveLength(1);
    expect(out.final.attempts).toEqual([
      expect.objectContaining({ outcome: 'approved', gatewayTransactionId: payments[0]!.pspReference }),
    ]);
    expect(out.events.map((e) => e.type)).toEqual(['recovery.success']);
    expect(out.events[0]!.payload).toMatchObject({ trigger: 'reconciliation' });
  });

  it.each([
    ['billing-agreement|B-9PENDING0000000', 'an order paid with a billing agreement'],
    ['reference|8PENDINGREF00000', 'a reference transaction'],
  ])(
    'a PayPal payment pending for four days (%s, %s), long after PayPal has forgotten the request’s key, is read by its id until PayPal completes it: one payment, trigger reconciliation',
    async (token) => {
      // PayPal keeps a request id (and the emulator a MSGSUBID) 6 hours: a lookup that sent the request again
      // would meet only its duplicate-invoice block after that. The charge's answer named the payment.
      paypal.settleAfter(4 * day);
      paypal.addSource(token.split('|')[1]!, ['pending']);
      const { apiKey, account } = await stack.createAccount({}, [
        { name: 'paypal', kind: 'paypal', test: false, credentials: paypal.credentials },
      ]);
      const out = await runToEnd(apiKey, account.id, {
        paymentMethodToken: token,
        paymentMethodType: 'paypal',
        originalDeclineCode: 'try_again_later',
      });
      expect(out.answer).toMatchObject({ status: 202, body: { status: 'unknown' } });
      expect(out.final.state).toBe('succeeded');
      const payments = paypal.payments().filter((p) => p.source === token.split('|')[1]);
      expect(payments).toHaveLength(1);
      expect(out.final.attempts).toEqual([
        expect.objectContaining({ outcome: 'approved', gatewayTransactionId: payments[0]!.id }),
      ]);
      expect(out.final.recoveredAt!.getTime() - out.startedAt).toBeGreaterThanOrEqual(4 * day);
      expect(out.events.map((e) => e.type)).toEqual(['recovery.success']);
      expect(out.events[0]!.payload).toMatchObject({ trigger: 'reconciliation' });
    },
  );

  describe("a GoCardless debit, which the payer's bank answers three days after it is created", () => {
    const gocardlessAccount = () =>
      stack.createAccount({}, [
        { name: 'gocardless', kind: 'gocardless', test: false, credentials: gocardless.credentials },
      ]);

    it('is ambiguous until then: the recovery looks it up until the bank has confirmed it, and succeeds with one payment', async () => {
      gocardless.settleAfter(3 * day);
      gocardless.addMandate('MD0001CONFIRM', ['confirm']);
      const { apiKey, account } = await gocardlessAccount();
      const out = await runToEnd(apiKey, account.id, {
        paymentMethodToken: 'MD0001CONFIRM',
        currency: 'GBP',
        originalDeclineCode: 'try_again_later',
      });
      expect(out.answer).toMatchObject({ status: 202, body: { status: 'unknown' } });
      expect(out.final.state).toBe('succeeded');
      const debits = gocardless.payments().filter((p) => p.mandate === 'MD0001CONFIRM');
      expect(debits).toHaveLength(1);
      expect(out.final.attempts).toEqual([
        expect.objectContaining({ outcome: 'approved', gatewayTransactionId: debits[0]!.id }),
      ]);
      // Recovered when the bank confirmed it, not before.
      expect(out.final.recoveredAt!.getTime() - out.startedAt).toBeGreaterThanOrEqual(3 * day);
      expect(out.events.map((e) => e.type)).toEqual(['recovery.success']);
      expect(out.events[0]!.payload).toMatchObject({ trigger: 'reconciliation' });
    });

    it('a debit the bank fails for insufficient funds is retried later as a new payment, which the bank confirms', async () => {
      gocardless.settleAfter(3 * day);
      gocardless.addMandate('MD0002RETRY', [{ fail: 'insufficient_funds' }, 'confirm']);
      const { apiKey, account } = await gocardlessAccount();
      const out = await runToEnd(apiKey, account.id, {
        paymentMethodToken: 'MD0002RETRY',
        currency: 'GBP',
        originalDeclineCode: 'try_again_later',
      });
      expect(out.final.state).toBe('succeeded');
      const debits = gocardless.payments().filter((p) => p.mandate === 'MD0002RETRY');
      expect(debits).toHaveLength(2);
      expect(out.final.attempts).toEqual([
        expect.objectContaining({ outcome: 'declined', declineCode: 'insufficient_funds' }),
        expect.objectContaining({ outcome: 'approved', gatewayTransactionId: debits[1]!.id }),
      ]);
      // The second payment was made only after the bank had failed the first.
      expect(debits[1]!.createdAt.getTime()).toBeGreaterThanOrEqual(debits[0]!.createdAt.getTime() + 3 * day);
    });

    it('stopped as paid elsewhere while a debit that never reached GoCardless (500) is looked up: the lookup only reads, nothing is debited, and the recovery ends paid_elsewhere', async () => {
      gocardless.settleAfter(0);
      const mandate = 'MD0003STOPPED';
      // GoCardless fails: every request to debit the mandate answers 500, nothing created.
      gocardless.addMandate(mandate, ['server_error']);
      const { apiKey, account } = await gocardlessAccount();
      const lookupFailures = () =>
        meter.values('recoup_gateway_requests', {
          gateway_kind: 'gocardless',
          operation: 'lookup',
          outcome: 'error',
        }).length;
      const failedBefore = lookupFailures();
      const answer = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
        key: apiKey,
        body: {
          amount: amount(),
          paymentMethodToken: mandate,
          currency: 'GBP',
          originalDeclineCode: 'try_again_later',
        },
      });
      expect(answer).toMatchObject({ status: 202, body: { status: 'unknown' } });
      const id = String(answer.body.transactionId);
      const doc = await stack.stores.recoveries.find(account.id, id);
      expect(doc).toMatchObject({ state: 'reconciling' });
      // Its lookup 30 s later meets the same failure, and backs off.
      await env.sleep(31_000);
      expect(await poll(lookupFailures, (failed) => failed > failedBefore)).toBeGreaterThan(failedBefore);
      // The merchant stops it: the customer paid elsewhere. The lookup finishes first, so the answer is 202.
      const stopped = await call(stack.baseUrl, 'POST', '/api/recovery/stop', {
        key: apiKey,
        body: { transactionId: id, reason: 'paid_elsewhere' },
      });
      expect(stopped).toMatchObject({ status: 202, body: { status: 'unknown' } });
      // GoCardless answers again: the same request would now make the debit.
      gocardless.addMandate(mandate, ['confirm']);
      await env.client.workflow.getHandle(doc!.workflowId).result();
      expect(gocardless.payments().filter((p) => p.mandate === mandate)).toEqual([]);
      const final = (await stack.stores.recoveries.find(account.id, id))!;
      expect(final).toMatchObject({ state: 'paid_elsewhere', recoveredAt: null });
      expect(final.attempts.map((a) => a.outcome)).toEqual(['not_charged']);
      const events = await stack.stores.events.list({ accountId: account.id, limit: 10 });
      expect(events.map((e) => e.type)).toEqual([]);
    });
  });

  it.each([
    ['down for two hours: the payment is recorded on the invoice once it is back', 2 * 3_600_000, 'recorded'],
    ['down for good: retried for three days, then recorded as failed; the recovery stands', null, 'failed'],
  ] as const)('a write-back to a billing platform that is %s', async (_, outageMs, writeBack) => {
    const { account } = await stack.createAccount({}, [
      {
        name: 'stripe',
        kind: 'stripe',
        test: false,
        credentials: { secretKey: stripe.secretKey, apiBase: stripe.url },
      },
    ]);
    const webhookSecret = 'whsec_schedule';
    await stack.stores.accounts.setConnector(account.id, 'stripe-billing', { webhookSecret });
    const card = `pm_writeback${(n += 1)}`;
    stripe.addCard(card, { customer: `cus_writeback${n}`, answers: ['approve'] });
    const { invoice } = stripe.addFailedInvoice({
      customer: `cus_writeback${n}`,
      email: null,
      amount: amount(),
      currency: 'usd',
      card,
      decline: 'processing_error',
    });
    const now = await env.currentTimeMs();
    stripe.invoiceOutage(outageMs === null ? Number.POSITIVE_INFINITY : now + outageMs);
    const body = JSON.stringify({
      id: `evt_wb${n}`,
      type: 'invoice.payment_failed',
      data: { object: invoice },
    });
    const { default: Stripe } = await import('stripe');
    const signature = Stripe.webhooks.generateTestHeaderString({
      payload: body,
      secret: webhookSecret,
      timestamp: Math.floor(now / 1000),
    });
    const res = await fetch(`${stack.baseUrl}/api/connectors/stripe-billing/webhook/${account.id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'stripe-signature': signature },
      body,
    });
    expect(res.status).toBe(200);
    const ended = () => meter.values('recoup_recoveries_ended', { state: 'succeeded' }).length;
    const endedBefore = ended();
    const doc = await stack.stores.recoveries.findByKey(account.id, invoice.id);
    const handle = env.client.workflow.getHandle(doc!.workflowId);
    await handle.result();
    const { startTime, closeTime } = await handle.describe();
    stripe.invoiceOutage(null);
    const final = await stack.stores.recoveries.findByKey(account.id, invoice.id);
    expect(final).toMatchObject({ state: 'succeeded', writeBack });
    // Recording the failed write-back after the success does not end the recovery a second time.
    expect(ended()).toBe(endedBefore + 1);
    const ran = closeTime!.getTime() - startTime.getTime();
    if (outageMs === null) {
      // Temporal gives up once the next retry would land past the 3-day schedule-to-close timeout.
      expect(ran).toBeGreaterThan(2 * day);
      expect(ran).toBeLessThanOrEqual(3 * day);
      expect(stripe.invoice(invoice.id)).toMatchObject({ status: 'open' });
    } else {
      expect(ran).toBeGreaterThanOrEqual(outageMs);
      expect(ran).toBeLessThan(outageMs + 3_600_000);
      expect(stripe.invoice(invoice.id)).toMatchObject({ status: 'paid', paid_out_of_band: true });
    }
  });

  it('a gateway that never charged (5xx) is confirmed at the gateway before the next attempt', async () => {
    const { apiKey, account } = await stack.createAccount({
      retryPolicy: { maxAttempts: 2, maxDays: 21 },
      riskSkipThreshold: 100,
    });
    const out = await runToEnd(apiKey, account.id, {
      paymentMethodToken: 'tok_server_error',
      originalDeclineCode: 'try_again_later',
    });
    expect(out.final.state).toBe('failed');
    expect(out.final.attempts.map((a) => a.outcome)).toEqual(['not_charged', 'not_charged']);
    expect(out.events.find((e) => e.type === 'recovery.failed')!.payload).toMatchObject({
      trigger: 'reconciliation',
    });
  });

  it('a Visa card never gets more than 15 attempts in any 30 days, across several recoveries', async () => {
    const { apiKey, account } = await stack.createAccount({
      retryPolicy: { maxAttempts: 8, maxDays: 21 },
      riskSkipThreshold: 100,
    });
    const body = {
      paymentMethodToken: 'tok_decline_generic_decline',
      originalDeclineCode: 'generic_decline',
      binPrefix: '424242',
    };
    // One after another: the time-skipping server can expire in-flight tasks when several waiters skip at once.
    const outs = [];
    for (let i = 0; i < 3; i += 1) outs.push(await runToEnd(apiKey, account.id, body));
    const times = outs.flatMap((o) => o.final.attempts.map((a) => a.at.getTime())).sort((a, b) => a - b);
    const charges = await stack.stores.db
      .collection('sandboxCharges')
      .countDocuments({ token: body.paymentMethodToken });
    expect(times).toHaveLength(charges);
    const busiest = Math.max(...times.map((t) => times.filter((u) => u >= t && u < t + 30 * day).length));
    expect(busiest).toBe(15);
    expect(outs.every((o) => o.final.state === 'failed')).toBe(true);
  });

  it('the workflow id is the business key: account and idempotency key', async () => {
    const { apiKey, account } = await stack.createAccount();
    const res = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: apiKey,
      body: {
        paymentMethodToken: 'tok_visa',
        amount: amount(),
        originalDeclineCode: 'try_again_later',
        idempotencyKey: 'inv-42',
      },
    });
    const doc = await stack.stores.recoveries.find(account.id, String(res.body.transactionId));
    expect(doc?.workflowId).toBe(recoveryWorkflowId(account.id, 'inv-42'));
    await env.client.workflow.getHandle(doc!.workflowId).result();
    const described = await env.client.workflow.getHandle(doc!.workflowId).describe();
    expect(described.status.name).toBe('COMPLETED');
    expect(described.taskQueue).toBe(stack.queues.recovery);
    // What operators filter on in the Temporal UI.
    const attributes = described.typedSearchAttributes;
    expect(attributes.get(searchAttributeKeys.accountId)).toBe(account.id);
    expect(attributes.get(searchAttributeKeys.recoveryState)).toBe('succeeded');
    expect(attributes.get(searchAttributeKeys.declineCode)).toBe('try_again_later');
  });

  it('a trial conversion runs on the critical task queue and is queued by its search attributes when it waits', async () => {
    const { apiKey, account } = await stack.createAccount();
    const trial = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: apiKey,
      body: {
        paymentMethodToken: 'tok_visa',
        amount: amount(),
        originalDeclineCode: 'insufficient_funds',
        isTrialConversion: true,
      },
    });
    expect(trial.body).toMatchObject({ success: true });
    const trialDoc = await stack.stores.recoveries.find(account.id, String(trial.body.transactionId));
    expect((await env.client.workflow.getHandle(trialDoc!.workflowId).describe()).taskQueue).toBe(
      stack.queues.critical,
    );

    // Whether insufficient funds waits depends on the date: make it one that waits for a payday.
    await skipToBeforePayday();
    const queued = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: apiKey,
      body: {
        paymentMethodToken: 'tok_mastercard',
        amount: amount(),
        originalDeclineCode: 'insufficient_funds',
      },
    });
    expect(queued.status).toBe(202);
    const queuedDoc = await stack.stores.recoveries.find(account.id, String(queued.body.transactionId));
    const attributes = (await env.client.workflow.getHandle(queuedDoc!.workflowId).describe())
      .typedSearchAttributes;
    expect(attributes.get(searchAttributeKeys.recoveryState)).toBe('queued');
    expect(attributes.get(searchAttributeKeys.nextAttemptAt)?.toISOString()).toBe(queued.body.nextAttemptAt);
    await env.client.workflow.getHandle(queuedDoc!.workflowId).result();
  });
});
