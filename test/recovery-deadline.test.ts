import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admitRecovery } from '../api/admit-recovery.js';
import { launchRecovery } from '../api/launch-recovery.js';
import { startRecovery } from '../api/start-recovery.js';
import { RecoveryRequest } from '../domain/recovery-request.js';
import { recoveryInputOf } from '../services/recovery-start.js';
import { paidElsewhereSignal } from '../workflows/recovery-definitions.js';
import { eventsOf } from './support/events.js';
import { call, startStack, type Stack } from './support/stack.js';

// Execute waits this long for the first phase (25 s in service); each charge takes longer.
const deadlineMs = 1_000;
const gatewayLatencyMs = 5_000;

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ firstPhaseDeadlineMs: deadlineMs });
});
afterAll(() => stack.close());

describe('execute when the first phase outlives its wait', () => {
  it('tells the workflow so: the id the merchant is given is the one its webhook and status carry', async () => {
    const account = await stack.createAccount({}, [
      { name: 'test', kind: 'test', test: true, credentials: { latencyMs: String(gatewayLatencyMs) } },
    ]);
    // A trial conversion is charged at once; all three cards turn out invalid: a final failure, 15 s on.
    const startedAt = Date.now();
    const res = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: account.apiKey,
      body: {
        amount: 4200,
        paymentMethodToken: 'tok_decline_incorrect_number',
        fallbackPaymentMethodTokens: ['tok_decline_invalid_number', 'tok_decline_incorrect_cvc'],
        originalDeclineCode: 'insufficient_funds',
        isTrialConversion: true,
      },
    });
    // A charge (a local activity) holds the workflow task; the note reaches the workflow when the task ends,
    // before the next charge is sent (each attempt is decided in a task of its own): the answer is 202 under
    // the bare id, well before the failure, which then carries the same id.
    expect(Date.now() - startedAt).toBeLessThan(2 * gatewayLatencyMs);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({
      status: 'unknown',
      transactionId: expect.not.stringMatching(/^FAILED_API_/),
    });
    const given = res.body.transactionId as string;

    const [failed] = (await eventsOf(stack, account.account.id, ['recovery.failed'])).map((e) => e.payload);
    expect(failed).toMatchObject({ event: 'recovery.failed', serviceTransactionId: given });
    const status = await call(stack.baseUrl, 'GET', `/api/recovery/status/${given}`, { key: account.apiKey });
    expect(status.body).toMatchObject({ transactionId: given, status: 'failed' });
  });

  it('a note whose answer comes back too late is settled in the store: the 202’s bare id is the webhook’s too', async () => {
    // A charge of 20 s holds the workflow's task past the wait and the 15 s the note is given.
    const account = await stack.createAccount({}, [
      { name: 'test', kind: 'test', test: true, credentials: { latencyMs: '20000' } },
    ]);
    const res = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: account.apiKey,
      body: {
        amount: 4400,
        paymentMethodToken: 'tok_decline_incorrect_number',
        originalDeclineCode: 'insufficient_funds',
        isTrialConversion: true,
      },
    });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({
      status: 'unknown',
      transactionId: expect.not.stringMatching(/^FAILED_API_/),
    });
    const given = res.body.transactionId as string;
    expect(await stack.stores.recoveries.answerClaimOf(given)).toBe('processing');

    // The failure ends the first phase afterwards, and keeps the id the merchant was given.
    const [failed] = (await eventsOf(stack, account.account.id, ['recovery.failed'], 30_000)).map(
      (e) => e.payload,
    );
    expect(failed).toMatchObject({ event: 'recovery.failed', serviceTransactionId: given });
    const status = await call(stack.baseUrl, 'GET', `/api/recovery/status/${given}`, { key: account.apiKey });
    expect(status.body).toMatchObject({ transactionId: given, status: 'failed' });
  }, 90_000);

  it('a first phase failing after execute claimed its 202 keeps the bare id: the store decides, not the note', async () => {
    const { account } = await stack.createAccount();
    const request = RecoveryRequest.parse({
      amount: 4500,
      paymentMethodToken: 'tok_decline_incorrect_number',
      originalDeclineCode: 'insufficient_funds',
      isTrialConversion: true,
    });
    const admitted = await admitRecovery(stack.stores, account, request, new Date());
    if (admitted.kind !== 'admitted') throw new Error('not admitted');
    const { doc } = admitted;
    // What execute does when the note that it answered 202 has not reached the workflow in time.
    expect(await stack.stores.recoveries.claimAnswer(account.id, doc._id, 'processing')).toBe(true);
    await startRecovery(stack.temporal, stack.queues, doc.workflowId, recoveryInputOf(doc), {
      wait: true,
      claimProcessing: () => Promise.resolve(true),
    });

    const [failed] = (await eventsOf(stack, account.id, ['recovery.failed'])).map((e) => e.payload);
    expect(failed).toMatchObject({ event: 'recovery.failed', serviceTransactionId: doc._id });
    expect(await stack.stores.recoveries.find(account.id, doc._id)).toMatchObject({
      state: 'failed',
      publicId: doc._id,
    });
    expect(await stack.stores.recoveries.answerClaimOf(doc._id)).toBe('processing');
  });

  it('gives the outcome itself when the first phase ends within the wait', async () => {
    // Its one attempt declined (an ending that asks for no new card, so one workflow task): a final failure.
    const account = await stack.createAccount({ retryPolicy: { maxAttempts: 1, maxDays: 21 } });
    const res = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: account.apiKey,
      body: {
        amount: 4300,
        paymentMethodToken: 'tok_decline_do_not_honor',
        originalDeclineCode: 'insufficient_funds',
        isTrialConversion: true,
      },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: false, transactionId: expect.stringMatching(/^FAILED_API_/) });
  });
});

describe('a stop once the merchant holds "still processing", during the first phase', () => {
  const cards = {
    paymentMethodToken: 'tok_decline_incorrect_number',
    fallbackPaymentMethodTokens: ['tok_decline_invalid_number', 'tok_decline_incorrect_cvc'],
  };
  const lastCardCharges = (gateway: string) =>
    stack.stores.sandbox.countForToken(gateway, 'tok_decline_incorrect_cvc');

  it('after execute’s 202: the cascade of fallback cards stops, no later card is charged, no webhook', async () => {
    const account = await stack.createAccount({}, [
      { name: 'slow', kind: 'test', test: true, credentials: { latencyMs: String(gatewayLatencyMs) } },
    ]);
    // A trial conversion tries its three cards at once, 5 s each: the 202 comes after the first.
    const res = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: account.apiKey,
      body: { amount: 4600, ...cards, originalDeclineCode: 'insufficient_funds', isTrialConversion: true },
    });
    expect(res).toMatchObject({ status: 202, body: { status: 'unknown' } });
    const transactionId = String(res.body.transactionId);

    const stop = await call(stack.baseUrl, 'POST', '/api/recovery/stop', {
      key: account.apiKey,
      body: { transactionId, reason: 'not_owed' },
    });
    expect([200, 202]).toContain(stop.status);
    const doc = await stack.stores.recoveries.find(account.account.id, transactionId);
    await stack.temporal.workflow.getHandle(doc!.workflowId).result();

    expect(await stack.stores.recoveries.find(account.account.id, transactionId)).toMatchObject({
      state: 'stopped',
    });
    expect(await lastCardCharges('slow')).toBe(0);
    expect(await stack.stores.events.list({ accountId: account.account.id, limit: 10 })).toEqual([]);
  }, 60_000);

  it('a platform’s intake (answered at once): its paid notice stops the cascade before the next card', async () => {
    const { account } = await stack.createAccount({}, [
      { name: 'intake', kind: 'test', test: true, credentials: { latencyMs: String(gatewayLatencyMs) } },
    ]);
    const request = RecoveryRequest.parse({
      amount: 4700,
      ...cards,
      originalDeclineCode: 'insufficient_funds',
      isTrialConversion: true,
    });
    const admitted = await admitRecovery(stack.stores, account, request, new Date());
    if (admitted.kind !== 'admitted') throw new Error('not admitted');
    const { doc } = admitted;
    await startRecovery(stack.temporal, stack.queues, doc.workflowId, recoveryInputOf(doc), { wait: false });
    // The notice comes while the first card's charge is under way.
    while ((await stack.stores.sandbox.countForToken('intake', cards.paymentMethodToken)) === 0)
      await new Promise((resolve) => setTimeout(resolve, 50));
    const handle = stack.temporal.workflow.getHandle(doc.workflowId);
    await handle.signal(paidElsewhereSignal);
    await handle.result();

    expect(await stack.stores.recoveries.find(account.id, doc._id)).toMatchObject({
      state: 'paid_elsewhere',
    });
    expect(await stack.stores.sandbox.countForToken('intake', 'tok_decline_invalid_number')).toBe(0);
    expect(await lastCardCharges('intake')).toBe(0);
  }, 60_000);
});

describe('a start that answers with an error though the workflow runs', () => {
  it('answers 202 under the id the first phase’s failure then carries too', async () => {
    const { account } = await stack.createAccount();
    const request = RecoveryRequest.parse({
      amount: 4800,
      paymentMethodToken: 'tok_decline_incorrect_number',
      originalDeclineCode: 'insufficient_funds',
      isTrialConversion: true,
    });
    const admitted = await admitRecovery(stack.stores, account, request, new Date());
    if (admitted.kind !== 'admitted') throw new Error('not admitted');
    // Temporal started the workflow and took the update, but its answer was lost on the way back.
    const workflow = new Proxy(stack.temporal.workflow, {
      get(target, property, receiver) {
        if (property !== 'startUpdateWithStart') return Reflect.get(target, property, receiver) as unknown;
        return async (...args: Parameters<typeof target.startUpdateWithStart>) => {
          await target.startUpdateWithStart(...args);
          throw new Error('connection reset');
        };
      },
    });
    const temporal = new Proxy(stack.temporal, {
      get: (target, property, receiver) =>
        property === 'workflow' ? workflow : (Reflect.get(target, property, receiver) as unknown),
    });
    const deps = { stores: stack.stores, temporal, queues: stack.queues, clock: () => new Date() };
    const answer = await launchRecovery(deps, admitted.doc, 'req-lost-answer');
    expect(answer.status).toBe(202);
    const given = (answer.body as { transactionId: string }).transactionId;

    const [failed] = (await eventsOf(stack, account.id, ['recovery.failed'])).map((e) => e.payload);
    expect(failed).toMatchObject({ event: 'recovery.failed', serviceTransactionId: given });
  });
});
