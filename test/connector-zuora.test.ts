import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConnectorConfig } from '../activities/connectors/registry.js';
import { zuora as zuoraConnector } from '../activities/connectors/zuora.js';
import { cardUpdatedSignal } from '../workflows/recovery-definitions.js';
import {
  collectsWhatIsStillDue,
  paidNoticeLeftSucceeded,
  postWebhook,
  recoveryOfInvoice,
  redeliveryIsDuplicate,
  stoppedPaidElsewhere,
  writtenBack,
} from './support/connectors.js';
import { call, startStack, type Stack } from './support/stack.js';
import { startZuoraEmulator, type ZuoraEmulator } from './support/zuora-emulator.js';

let stack: Stack;
let zuora: ZuoraEmulator;
let n = 0;
const username = 'recoup-callouts';
const password = randomBytes(12).toString('hex');

beforeAll(async () => {
  [stack, zuora] = await Promise.all([startStack(), startZuoraEmulator()]);
});
afterAll(async () => {
  await stack.close();
  await zuora.close();
});

const basicAuth = (user: string, pass: string) => ({
  authorization: `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`,
});

/** An account on the test gateway with a Zuora connector whose REST API is the emulator, and its API key. */
async function connected() {
  const created = await stack.createAccount();
  const input = {
    username,
    password,
    clientId: zuora.clientId,
    clientSecret: zuora.clientSecret,
    apiBase: zuora.url,
  };
  const parsed = parseConnectorConfig('zuora', input, []);
  if (!('config' in parsed)) throw new Error(parsed.problem);
  await stack.stores.accounts.setConnector(created.account.id, 'zuora', parsed.config);
  return created;
}

const connectedAccount = async () => (await connected()).account.id;

/**
 * Zuora declined the payment of a $49.50 invoice on a card reference payment method (`tokenId` + a
 * customer id); the callout as the documented template renders it, with its notification id header.
 */
function paymentDeclined(tokenId: string, invoiceStatus = 'Posted') {
  n += 1;
  const accountId = `8a8aa0${n}${randomBytes(6).toString('hex')}`;
  const invoiceId = zuora.addInvoice(accountId, 49.5, invoiceStatus);
  const body = JSON.stringify({
    event: 'Payment.Failure',
    paymentId: randomBytes(16).toString('hex'),
    invoiceId,
    accountId,
    paymentMethodId: zuora.addPaymentMethod(tokenId, `cus_${n}`),
    amount: '49.50',
    currency: 'USD',
    gatewayResponseCode: 'processing_error',
    gatewayResponse: 'Your card was declined.',
    bin: '424242',
    email: `Jonas${n}@Example.com`,
  });
  const headers = { 'zuora-notification-id': randomBytes(16).toString('hex') };
  return { accountId, invoiceId, body, headers };
}

/**
 * The customer paid `amount` (major units) of the invoice in Zuora; the Payment Processed callout as the
 * documented template renders it, with its notification id header.
 */
function paymentProcessed(invoice: { accountId: string; invoiceId: string }, amount: number) {
  const body = JSON.stringify({
    event: 'Payment.Success',
    paymentId: zuora.payInvoiceInZuora(invoice.invoiceId, amount),
    invoiceId: invoice.invoiceId,
    accountId: invoice.accountId,
  });
  return { body, headers: { 'zuora-notification-id': randomBytes(16).toString('hex') } };
}

const post = (client: string, body: string, headers: Record<string, string>) =>
  postWebhook(stack, 'zuora', client, body, { ...basicAuth(username, password), ...headers });

describe('Zuora connector: authentication and addressing', () => {
  it.each([
    ['no credentials', {}],
    ['a wrong password', basicAuth(username, `${password}x`)],
    ['another username', basicAuth('someone-else', password)],
    ['a bearer token', { authorization: `Bearer ${password}` }],
  ])('%s is refused with 401 and nothing is stored', async (_, auth: Record<string, string>) => {
    const accountId = await connectedAccount();
    const declined = paymentDeclined('tok_visa');
    const res = await postWebhook(stack, 'zuora', accountId, declined.body, { ...declined.headers, ...auth });
    expect(res).toEqual({ status: 401, body: { error: 'Invalid webhook signature or credentials' } });
    expect(await stack.stores.recoveries.findByKey(accountId, declined.invoiceId)).toBeNull();
    expect(await stack.stores.connectorEvents.latest(accountId, 10)).toEqual([]);
  });

  it('an unknown client gets 404', async () => {
    const declined = paymentDeclined('tok_visa');
    const res = await post('acct_unknown', declined.body, declined.headers);
    expect(res.status).toBe(404);
  });

  it('the config needs the OAuth client and the REST base: the callout names the payment method only', () => {
    const parsed = parseConnectorConfig('zuora', { username, password }, []);
    expect(parsed).toMatchObject({ problem: expect.stringContaining('clientId') });
    expect(parsed).toMatchObject({ problem: expect.stringContaining('apiBase') });
  });
});

describe('Zuora connector: Payment Declined callout', () => {
  it('becomes a recovery of the invoice on the card’s gateway token, recorded once as an External payment', async () => {
    const accountId = await connectedAccount();
    const declined = paymentDeclined('tok_visa');
    const res = await post(accountId, declined.body, declined.headers);
    expect(res).toMatchObject({ status: 200, body: { received: true, action: 'recovery_started' } });

    const doc = await writtenBack(stack, accountId, declined.invoiceId);
    expect(doc).toMatchObject({
      paymentMethodToken: 'tok_visa',
      amount: 4950,
      currency: 'USD',
      customerEmail: `jonas${n}@example.com`,
      originalDeclineCode: 'processing_error',
      connector: { platform: 'zuora', invoiceId: declined.invoiceId, customerId: declined.accountId },
    });
    expect(doc.request).toMatchObject({ binPrefix: '424242' });
    const payments = zuora.payments().filter((p) => p.idempotencyKey?.endsWith(declined.invoiceId));
    expect(payments).toEqual([
      {
        idempotencyKey: `recoup-write-back/${declined.invoiceId}`,
        body: expect.objectContaining({
          type: 'External',
          paymentMethodType: 'CreditCard',
          accountId: declined.accountId,
          amount: '49.50',
          currency: 'USD',
          effectiveDate: new Date().toISOString().slice(0, 10),
          invoices: [{ invoiceId: declined.invoiceId, amount: '49.50' }],
          referenceId: doc.gatewayTransactionId,
        }),
      },
    ]);
  });

  it('a redelivery of the callout is a duplicate: 200, one recovery, one payment', async () => {
    const accountId = await connectedAccount();
    const declined = paymentDeclined('tok_visa');
    await redeliveryIsDuplicate(stack, accountId, declined.invoiceId, () =>
      post(accountId, declined.body, declined.headers),
    );
    expect(zuora.payments().filter((p) => p.idempotencyKey?.endsWith(declined.invoiceId))).toHaveLength(1);
  });

  it('a Stripe card on an account whose gateway is the test gateway is answered 200 and ignored with why, nothing stored', async () => {
    const accountId = await connectedAccount();
    const declined = paymentDeclined('pm_1Nabc');
    const res = await post(accountId, declined.body, declined.headers);
    expect(res).toMatchObject({
      status: 200,
      body: {
        action: 'ignored',
        reason: 'The failed payment cannot be recovered through this account',
        details: { paymentMethodToken: [expect.any(String)] },
      },
    });
    expect(await stack.stores.recoveries.findByKey(accountId, declined.invoiceId)).toBeNull();
  });

  it('a body not in the template’s shape is answered 200 and ignored, with the reason', async () => {
    const accountId = await connectedAccount();
    for (const body of [
      '{"PaymentId":"2c92c0f8"}',
      'Payment <Payment.Id> declined',
      '{"event":"Payment.Failure"}',
    ]) {
      const res = await post(accountId, body, { 'zuora-notification-id': randomBytes(8).toString('hex') });
      expect(res.status, body).toBe(200);
      expect(res.body).toMatchObject({
        received: true,
        action: 'ignored',
        reason: expect.stringContaining('template'),
      });
    }
  });
});

/** The `POST /v1/payments` calls of write-backs to the invoice. */
const paymentsOf = (invoiceId: string) =>
  zuora.payments().filter((p) => p.idempotencyKey?.endsWith(invoiceId));

describe('Zuora connector: a callout that arrives late', () => {
  it('a callout delivered after the customer paid the invoice in Zuora is ignored: nothing charged, nothing recorded', async () => {
    const accountId = await connectedAccount();
    const declined = paymentDeclined('tok_visa');
    zuora.payInvoiceInZuora(declined.invoiceId, 49.5);
    const res = await post(accountId, declined.body, declined.headers);
    expect(res).toEqual({
      status: 200,
      body: { received: true, action: 'ignored', reason: 'The invoice is paid at Zuora, nothing is owed' },
    });
    expect(await stack.stores.recoveries.findByKey(accountId, declined.invoiceId)).toBeNull();
    expect(paymentsOf(declined.invoiceId)).toEqual([]);
  });

  it('a canceled invoice is ignored with its status', async () => {
    const accountId = await connectedAccount();
    const declined = paymentDeclined('tok_visa', 'Canceled');
    const res = await post(accountId, declined.body, declined.headers);
    expect(res.body).toMatchObject({
      action: 'ignored',
      reason: 'The invoice is Canceled at Zuora, no longer due for collection',
    });
    expect(await stack.stores.recoveries.findByKey(accountId, declined.invoiceId)).toBeNull();
  });

  it('an invoice partly paid in Zuora since the decline is recovered for its balance, not the callout’s amount', async () => {
    const accountId = await connectedAccount();
    const declined = paymentDeclined('tok_visa');
    zuora.payInvoiceInZuora(declined.invoiceId, 20);
    const res = await post(accountId, declined.body, declined.headers);
    expect(res.body).toMatchObject({ action: 'recovery_started' });
    const doc = await writtenBack(stack, accountId, declined.invoiceId);
    expect(doc.amount).toBe(2950);
    expect(paymentsOf(declined.invoiceId)).toEqual([
      expect.objectContaining({ body: expect.objectContaining({ amount: '29.50' }) }),
    ]);
  });

  it('Zuora failing to answer the invoice read is a 5xx that starts nothing, so Zuora calls again', async () => {
    const accountId = await connectedAccount();
    const declined = paymentDeclined('tok_visa');
    zuora.invoiceOutage(true);
    try {
      const res = await post(accountId, declined.body, declined.headers);
      expect(res.status).toBeGreaterThanOrEqual(500);
    } finally {
      zuora.invoiceOutage(false);
    }
    expect(await stack.stores.recoveries.findByKey(accountId, declined.invoiceId)).toBeNull();
    const again = await post(accountId, declined.body, declined.headers);
    expect(again.body).toMatchObject({ action: 'recovery_started' });
    expect(await writtenBack(stack, accountId, declined.invoiceId)).toMatchObject({ amount: 4950 });
  });
});

describe('Zuora connector: Payment Processed callout', () => {
  /** A decline (do_not_honor, on a token of its own) whose recovery waits for its next attempt. */
  async function queuedRecovery(accountId: string) {
    const token = `tok_decline_do_not_honor_x${100 + n}`;
    const declined = paymentDeclined(token);
    const res = await post(accountId, declined.body, declined.headers);
    expect(res.body).toMatchObject({ action: 'recovery_started' });
    const queued = await recoveryOfInvoice(stack, accountId, declined.invoiceId, (d) => d.state === 'queued');
    expect(queued).toMatchObject({ state: 'queued' });
    return { ...declined, token, queued: queued! };
  }

  it('the customer paying the invoice in Zuora stops its queued recovery: paid elsewhere, nothing more charged, nothing recorded', async () => {
    const { account, apiKey } = await connected();
    const accountId = account.id;
    const declined = await queuedRecovery(accountId);
    const charged = await stack.stores.sandbox.countForToken('test', declined.token);

    const paid = paymentProcessed(declined, 49.5);
    expect(await post(accountId, paid.body, paid.headers)).toEqual({
      status: 200,
      body: { received: true, action: 'paid_elsewhere', transactionId: declined.queued.publicId },
    });
    await stoppedPaidElsewhere(stack, accountId, declined.invoiceId, {
      token: declined.token,
      charged,
      attempts: declined.queued.attempts.length,
    });
    const path = `/api/recovery/status?idempotencyKey=${declined.invoiceId}`;
    const status = await call(stack.baseUrl, 'GET', path, { key: apiKey });
    expect(status.body).toMatchObject({ status: 'succeeded', state: 'paid_elsewhere', recovered: false });
    expect(paymentsOf(declined.invoiceId)).toEqual([]);

    // Zuora calls again with the same notification id: a duplicate, which changes nothing.
    expect(await post(accountId, paid.body, paid.headers)).toEqual({
      status: 200,
      body: { received: true, duplicate: true, action: 'paid_elsewhere' },
    });
    expect(await recoveryOfInvoice(stack, accountId, declined.invoiceId)).toMatchObject({
      state: 'paid_elsewhere',
    });
  });

  it('an invoice paid in Zuora whose Payment Processed callout never came is read before the next attempt and not charged: the recovery stops', async () => {
    const accountId = await connectedAccount();
    const declined = await queuedRecovery(accountId);
    const charged = await stack.stores.sandbox.countForToken('test', declined.token);
    zuora.payInvoiceInZuora(declined.invoiceId, 49.5);
    // The next attempt, brought forward as a new card brings it.
    await stack.temporal.workflow
      .getHandle(declined.queued.workflowId)
      .signal(cardUpdatedSignal, { newToken: 'tok_visa_zuora_new', paymentMethodType: 'card' });
    const ended = await recoveryOfInvoice(
      stack,
      accountId,
      declined.invoiceId,
      (d) => d.endedAt !== undefined,
    );
    expect(ended).toMatchObject({ state: 'stopped', lastDeclineCode: 'invoice_not_owed' });
    expect(await stack.stores.sandbox.countForToken('test', declined.token)).toBe(charged);
    expect(await stack.stores.sandbox.countForToken('test', 'tok_visa_zuora_new')).toBe(0);
    expect(paymentsOf(declined.invoiceId)).toEqual([]);
    // Collected by a payment at Zuora, as its lost callout would have said: paid on the customer's own.
    const settled = await recoveryOfInvoice(
      stack,
      accountId,
      declined.invoiceId,
      (d) => d.paidOnTheirOwnAt !== undefined,
    );
    expect(settled).toMatchObject({ stopAsked: 'paid_elsewhere', paidOnTheirOwnAt: expect.any(Date) });
  });

  it('an invoice Zuora credited to nothing (a credit memo, no payment) is read before the next attempt and not charged: the recovery stops as not owed, not as paid elsewhere', async () => {
    const accountId = await connectedAccount();
    const declined = await queuedRecovery(accountId);
    zuora.creditInvoiceInZuora(declined.invoiceId, 49.5);
    const workflow = stack.temporal.workflow.getHandle(declined.queued.workflowId);
    await workflow.signal(cardUpdatedSignal, {
      newToken: 'tok_visa_zuora_credited',
      paymentMethodType: 'card',
    });
    // Ended and recorded: nothing left that could still settle it.
    await workflow.result();
    const ended = await recoveryOfInvoice(stack, accountId, declined.invoiceId);
    expect(ended).toMatchObject({ state: 'stopped', lastDeclineCode: 'invoice_not_owed' });
    expect(ended?.stopAsked).toBeUndefined();
    expect(ended?.paidOnTheirOwnAt).toBeUndefined();
    expect(await stack.stores.sandbox.countForToken('test', 'tok_visa_zuora_credited')).toBe(0);
    expect(paymentsOf(declined.invoiceId)).toEqual([]);
  });

  it('a payment of part of the invoice lowers its queued recovery to the balance: a new card is charged that, and that is recorded', async () => {
    const { account, apiKey } = await connected();
    const declined = await queuedRecovery(account.id);
    const paid = paymentProcessed(declined, 20);
    await collectsWhatIsStillDue(stack, account.id, declined.invoiceId, {
      sendPartial: () => post(account.id, paid.body, paid.headers),
      // The customer saves a new card through Recoup's card-update link.
      sendUpdate: async () => {
        const link = await call<{ token: string }>(
          stack.baseUrl,
          'POST',
          '/api/recovery/update-card/generate',
          {
            key: apiKey,
            body: { paymentMethodToken: declined.token, transactionId: declined.queued.publicId },
          },
        );
        const done = await call(stack.baseUrl, 'POST', '/api/recovery/update-card/complete', {
          key: apiKey,
          body: { token: link.body.token, newPaymentMethodToken: 'tok_mastercard' },
        });
        expect(done.status).toBe(200);
      },
      newToken: 'tok_mastercard',
      amountDue: 2950,
    });
    expect(paymentsOf(declined.invoiceId)).toMatchObject([{ body: { amount: '29.50' } }]);
    expect(await recoveryOfInvoice(stack, account.id, declined.invoiceId)).toMatchObject({
      writeBack: 'recorded',
    });
  });

  it('a payment of an invoice Recoup holds no recovery of is ignored', async () => {
    const accountId = await connectedAccount();
    const declined = paymentDeclined('tok_visa');
    const paid = paymentProcessed(declined, 49.5);
    expect(await post(accountId, paid.body, paid.headers)).toEqual({
      status: 200,
      body: { received: true, action: 'ignored', reason: 'Recoup holds no recovery of this invoice' },
    });
    expect(await stack.stores.recoveries.findByKey(accountId, declined.invoiceId)).toBeNull();
  });

  it('a callout naming an invoice Recoup recovered and recorded is left as it is', async () => {
    const accountId = await connectedAccount();
    const declined = paymentDeclined('tok_visa');
    await post(accountId, declined.body, declined.headers);
    await writtenBack(stack, accountId, declined.invoiceId);
    // Zuora reports no External payment, but a callout of the paid invoice must do no harm all the same.
    const body = JSON.stringify({
      event: 'Payment.Success',
      paymentId: randomBytes(16).toString('hex'),
      invoiceId: declined.invoiceId,
      accountId: declined.accountId,
    });
    const res = await post(accountId, body, { 'zuora-notification-id': randomBytes(16).toString('hex') });
    await paidNoticeLeftSucceeded(stack, accountId, declined.invoiceId, res, { writeBack: 'recorded' });
    expect(paymentsOf(declined.invoiceId)).toHaveLength(1);
  });
});

describe('Zuora connector: a write-back retried', () => {
  /** The write-back activity's call for a payment Recoup recovered on `invoiceId`. */
  const writeBack = (invoiceId: string) =>
    zuoraConnector.writeBack!(
      { username, password, clientId: zuora.clientId, clientSecret: zuora.clientSecret, apiBase: zuora.url },
      {
        invoiceId,
        amount: 4950,
        currency: 'USD',
        gatewayTransactionId: 'ch_recovered',
        recoveredAt: Date.now(),
      },
      { gateways: [] },
    );

  it('after Recoup’s own payment was applied but its answer was lost, is recorded, not already_paid', async () => {
    const { invoiceId } = paymentDeclined('tok_visa');
    zuora.losePaymentAnswers(true);
    try {
      await expect(writeBack(invoiceId)).rejects.toThrow();
    } finally {
      zuora.losePaymentAnswers(false);
    }
    // The activity's retry finds the invoice paid by the payment whose reference is the recovered charge.
    expect(await writeBack(invoiceId)).toBe('recorded');
    expect(paymentsOf(invoiceId)).toHaveLength(1);
  });

  it('after the customer paid the invoice in Zuora, is already_paid: the platform collected it too', async () => {
    const { invoiceId } = paymentDeclined('tok_visa');
    zuora.payInvoiceInZuora(invoiceId, 49.5);
    expect(await writeBack(invoiceId)).toBe('already_paid');
    expect(paymentsOf(invoiceId)).toEqual([]);
  });

  it('of a charge that collected while part of the invoice was paid in Zuora, applies no more than the balance', async () => {
    const { invoiceId } = paymentDeclined('tok_visa');
    zuora.payInvoiceInZuora(invoiceId, 20);
    expect(await writeBack(invoiceId)).toBe('recorded');
    expect(paymentsOf(invoiceId)).toMatchObject([
      { body: { amount: '29.50', invoices: [{ invoiceId, amount: '29.50' }] } },
    ]);
  });
});

describe('Zuora connector: an OAuth token Zuora no longer takes', () => {
  it('is dropped and a new one fetched: the callout is recovered, not answered 5xx until the cached token expires', async () => {
    const accountId = await connectedAccount();
    const first = paymentDeclined('tok_visa_before_revoke');
    expect((await post(accountId, first.body, first.headers)).body).toMatchObject({
      action: 'recovery_started',
    });
    // Zuora revokes the cached token (the OAuth client's secret rotated, or a token expired early).
    zuora.revokeTokens();
    const issued = zuora.tokensIssued();
    const declined = paymentDeclined('tok_visa_after_revoke');
    const res = await post(accountId, declined.body, declined.headers);
    expect(res).toMatchObject({ status: 200, body: { action: 'recovery_started' } });
    expect(zuora.tokensIssued()).toBe(issued + 1);
    expect(await writtenBack(stack, accountId, declined.invoiceId)).toMatchObject({ amount: 4950 });
  });
});
