import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chargebee as chargebeeConnector } from '../activities/connectors/chargebee.js';
import type { GatewayConfig } from '../domain/settings.js';
import { startBraintreeEmulator, type BraintreeEmulator } from './support/braintree-emulator.js';
import {
  chargebeeEvent as event,
  startChargebeeEmulator,
  type ChargebeeEmulator,
} from './support/chargebee-emulator.js';
import {
  cardUpdateRecovers,
  collectsWhatIsStillDue,
  expiryNoticeForwarded,
  paidNoticeLeftSucceeded,
  postWebhook,
  recoveryOfInvoice,
  redeliveryIsDuplicate,
  stoppedPaidElsewhere,
  writtenBack,
} from './support/connectors.js';
import { poll } from './support/poll.js';
import { call, startStack, type Stack } from './support/stack.js';

let stack: Stack;
let chargebee: ChargebeeEmulator;
let n = 0;
const username = 'recoup-webhooks';
const password = randomBytes(12).toString('hex');

beforeAll(async () => {
  [stack, chargebee] = await Promise.all([startStack(), startChargebeeEmulator()]);
});
afterAll(async () => {
  await stack.close();
  await chargebee.close();
});

const basicAuth = (user: string, pass: string) => ({
  authorization: `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`,
});
const webhookAuth = basicAuth(username, password);

/**
 * An account on the test gateway with a Chargebee connector; with `writeBack`, the emulator's API key.
 * Returns the account id and Recoup API key.
 */
async function connectedAccountWithKey(writeBack = true) {
  const created = await stack.createAccount();
  const api = { site: chargebee.site, apiKey: chargebee.apiKey, apiBase: chargebee.url };
  await stack.stores.accounts.setConnector(created.account.id, 'chargebee', {
    username,
    password,
    ...(writeBack ? api : {}),
  });
  return { id: created.account.id, apiKey: created.apiKey };
}
const connectedAccount = async (writeBack = true) => (await connectedAccountWithKey(writeBack)).id;

/**
 * Chargebee's automatic collection of a new invoice failed on the customer's card `reference`, vaulted in
 * `gateway` (Stripe unless given).
 */
function paymentFailed(
  reference: string,
  opts: { errorCode?: string; locale?: string; gateway?: string } = {},
) {
  n += 1;
  const invoiceId = `inv_${n}_${randomBytes(4).toString('hex')}`;
  const customerId = `AzZcb${n}`;
  const amount = 1900 + n;
  chargebee.addInvoice({
    id: invoiceId,
    customer_id: customerId,
    amount_due: amount,
    currency_code: 'USD',
  });
  const body = event('payment_failed', {
    transaction: {
      id: `txn_${n}`,
      customer_id: customerId,
      payment_source_id: `pm_cb${n}`,
      payment_method: 'card',
      gateway: 'stripe',
      type: 'payment',
      status: 'failure',
      amount,
      currency_code: 'USD',
      error_code: opts.errorCode ?? 'PROCESSING_ERROR',
      error_text: 'The card was declined',
      linked_invoices: [{ invoice_id: invoiceId, applied_amount: 0, invoice_status: 'payment_due' }],
    },
    invoice: {
      id: invoiceId,
      customer_id: customerId,
      status: 'payment_due',
      amount_due: amount,
      currency_code: 'USD',
    },
    customer: {
      id: customerId,
      email: `Payer${n}@Example.com`,
      ...(opts.locale ? { locale: opts.locale } : {}),
      primary_payment_source_id: `pm_cb${n}`,
      payment_method: {
        type: 'card',
        gateway: opts.gateway ?? 'stripe',
        status: 'valid',
        reference_id: reference,
      },
    },
    card: {
      payment_source_id: `pm_cb${n}`,
      iin: '42424242',
      last4: '4242',
      issuing_country: 'fr',
      billing_country: 'US',
    },
  });
  return { invoiceId, customerId, amount, body: JSON.stringify(body) };
}

/** The customer saved a new card (`reference`, the gateway's) in Chargebee: its payment_source_updated. */
function sourceUpdated(customerId: string, reference: string, gateway = 'stripe'): string {
  return JSON.stringify(
    event('payment_source_updated', {
      customer: { id: customerId, email: `payer${n}@example.com` },
      payment_source: {
        id: `pm_new${n}`,
        customer_id: customerId,
        type: 'card',
        reference_id: reference,
        status: 'valid',
        gateway,
        deleted: false,
      },
    }),
  );
}

const post = (accountId: string, body: string, headers: Record<string, string> = webhookAuth) =>
  postWebhook(stack, 'chargebee', accountId, body, headers);

describe('Chargebee connector: payment_failed', () => {
  it('becomes a recovery keyed by the invoice, charged on the card’s gateway token, recorded on the invoice once', async () => {
    const accountId = await connectedAccount();
    const failed = paymentFailed('cus_1/tok_visa');
    const res = await post(accountId, failed.body);
    expect(res).toMatchObject({ status: 200, body: { received: true, action: 'recovery_started' } });

    const doc = await writtenBack(stack, accountId, failed.invoiceId);
    expect(doc).toMatchObject({
      paymentMethodToken: 'tok_visa',
      amount: failed.amount,
      currency: 'USD',
      customerEmail: `payer${n}@example.com`,
      originalDeclineCode: 'processing_error',
      connector: { platform: 'chargebee', invoiceId: failed.invoiceId, customerId: failed.customerId },
    });
    expect(doc?.request).toMatchObject({ binPrefix: '424242', cardOrigin: 'FR' });
    const records = chargebee.recordPayments(failed.invoiceId);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      idempotencyKey: `recoup-write-back/${failed.invoiceId}`,
      form: {
        'transaction[amount]': String(failed.amount),
        'transaction[payment_method]': 'other',
        'transaction[reference_number]': doc?.gatewayTransactionId,
      },
    });
    const date = Number(records[0]?.form['transaction[date]']);
    expect(Math.abs(date - Date.now() / 1000)).toBeLessThan(120);
    expect(chargebee.invoice(failed.invoiceId)).toMatchObject({ status: 'paid', amount_due: 0 });
  });

  it.each([
    ['fr-CA', 'fr'],
    ['pt-BR', 'pt'],
    ['de', 'de'],
    ['ja-JP', undefined],
  ])('the customer’s Chargebee locale %s gives its pages the language %s', async (tag, locale) => {
    const accountId = await connectedAccount();
    const failed = paymentFailed('cus_1/tok_visa', { locale: tag });
    expect((await post(accountId, failed.body)).status).toBe(200);
    const doc = await stack.stores.recoveries.findByKey(accountId, failed.invoiceId);
    expect(doc?.request.locale).toBe(locale);
  });

  it('a redelivery of the event is a duplicate: 200, nothing new', async () => {
    const accountId = await connectedAccount();
    const failed = paymentFailed('cus_1/tok_visa');
    await redeliveryIsDuplicate(stack, accountId, failed.invoiceId, () => post(accountId, failed.body));
    expect(chargebee.recordPayments(failed.invoiceId)).toHaveLength(1);
  });

  it('a Stripe token on an account whose gateway is the test gateway is answered 200 and ignored with why, nothing stored, the event done', async () => {
    const accountId = await connectedAccount();
    const failed = paymentFailed('cus_1/pm_123');
    const res = await post(accountId, failed.body);
    expect(res).toMatchObject({
      status: 200,
      body: {
        received: true,
        action: 'ignored',
        reason: 'The failed payment cannot be recovered through this account',
        details: { paymentMethodToken: [expect.any(String)] },
      },
    });
    expect(await stack.stores.recoveries.findByKey(accountId, failed.invoiceId)).toBeNull();
    // Done: Chargebee's redelivery is a duplicate, not another failure counting towards turning the webhook off.
    expect((await stack.stores.connectorEvents.latest(accountId, 1))[0]).toMatchObject({
      outcome: 'ignored',
      doneAt: expect.any(Date),
    });
    expect((await post(accountId, failed.body)).body).toEqual({
      received: true,
      duplicate: true,
      action: 'ignored',
    });
  });

  it('a configuration without the site and an API key is refused: the invoice could not be read before charging', () => {
    const problem = chargebeeConnector.configProblem?.({ username, password }, []);
    expect(problem).toMatch(/site and apiKey are required/);
    expect(
      chargebeeConnector.configProblem?.({ username, password, site: 'acme', apiKey: 'live_x' }, []),
    ).toBeNull();
  });

  it('with a configuration stored before API credentials were required, a payment_failed after Chargebee reported the invoice paid charges nothing', async () => {
    const accountId = await connectedAccount(false);
    const failed = paymentFailed('cus_1/tok_visa_paid_first');
    // The customer pays, Chargebee says so; its older payment_failed comes after.
    const paid = await post(accountId, chargebee.payInvoiceInChargebee(failed.invoiceId));
    expect(paid.body).toMatchObject({ action: 'ignored' });
    const late = await post(accountId, failed.body);
    expect(late).toEqual({
      status: 200,
      body: {
        received: true,
        action: 'ignored',
        reason: expect.stringMatching(/site and apiKey are required/),
      },
    });
    expect(await stack.stores.recoveries.findByKey(accountId, failed.invoiceId)).toBeNull();
    expect(await stack.stores.sandbox.countForToken('test', 'tok_visa_paid_first')).toBe(0);
  });

  it('an invoice paid in Chargebee while its recovery waited, its payment_succeeded not yet in, is not charged again: the recovery stops', async () => {
    const accountId = await connectedAccount();
    const failed = paymentFailed('cus_1/tok_decline_do_not_honor_x3');
    await post(accountId, failed.body);
    await recoveryOfInvoice(stack, accountId, failed.invoiceId, (d) => d.state === 'queued');
    chargebee.payInvoiceInChargebee(failed.invoiceId);
    // The customer's new card retries the recovery at once; the invoice, read first, is paid.
    const newCard = `tok_visa_paid${n}`;
    const updated = event('payment_source_updated', {
      payment_source: {
        id: `pm_paid${n}`,
        customer_id: failed.customerId,
        type: 'card',
        reference_id: `cus_1/${newCard}`,
        status: 'valid',
        deleted: false,
      },
    });
    expect((await post(accountId, JSON.stringify(updated))).body).toMatchObject({
      action: 'card_updated',
      recoveriesRetried: 1,
    });
    const doc = await recoveryOfInvoice(stack, accountId, failed.invoiceId, (d) => d.endedAt !== undefined);
    expect(doc).toMatchObject({ state: 'stopped', lastDeclineCode: 'invoice_not_owed', nextAttemptAt: null });
    expect(doc).not.toHaveProperty('writeBack');
    expect(await stack.stores.sandbox.countForToken('test', newCard)).toBe(0);
    expect(chargebee.recordPayments(failed.invoiceId)).toEqual([]);
  });

  it('an invoice Chargebee now bills in another currency than the recovery’s is not charged: the new card’s attempt is answered unsent, and the recovery stops as no longer owed', async () => {
    const accountId = await connectedAccount();
    const failed = paymentFailed('cus_1/tok_decline_do_not_honor_x3');
    await post(accountId, failed.body);
    await recoveryOfInvoice(stack, accountId, failed.invoiceId, (d) => d.state === 'queued');
    // Billed again in euros: its amount due, as large as ever, says nothing of the dollars the recovery charges.
    chargebee.addInvoice({
      id: failed.invoiceId,
      customer_id: failed.customerId,
      amount_due: failed.amount,
      currency_code: 'EUR',
    });
    const newCard = `tok_visa_euro${n}`;
    expect((await post(accountId, sourceUpdated(failed.customerId, `cus_1/${newCard}`))).body).toMatchObject({
      action: 'card_updated',
      recoveriesRetried: 1,
    });
    // Nothing sent: the payment in dollars is owed no more (the platform reports its failure in euros as a
    // recovery of its own), and neither card is blamed for it.
    const doc = await recoveryOfInvoice(stack, accountId, failed.invoiceId, (d) => d.endedAt !== undefined);
    expect(doc).toMatchObject({
      state: 'stopped',
      paymentMethodToken: newCard,
      lastDeclineCode: 'invoice_other_currency',
      recommendedAction: 'monitor',
      nextAttemptAt: null,
    });
    expect(doc?.attempts).toHaveLength(2);
    expect(doc?.attempts[1]).toMatchObject({
      declineCode: 'invoice_other_currency',
      gatewayTransactionId: null,
    });
    expect(doc).not.toHaveProperty('writeBack');
    expect(await stack.stores.sandbox.countForToken('test', newCard)).toBe(0);
    expect(chargebee.recordPayments(failed.invoiceId)).toEqual([]);
  });
});

describe('Chargebee connector: a payment_failed event that arrives late', () => {
  it('an event delivered after the customer paid the invoice in Chargebee is ignored: nothing charged, nothing recorded', async () => {
    const accountId = await connectedAccount();
    const failed = paymentFailed('cus_1/tok_visa');
    chargebee.payInvoiceInChargebee(failed.invoiceId);
    const res = await post(accountId, failed.body);
    expect(res).toEqual({
      status: 200,
      body: {
        received: true,
        action: 'ignored',
        reason: 'The invoice is paid at Chargebee, nothing is owed',
      },
    });
    expect(await stack.stores.recoveries.findByKey(accountId, failed.invoiceId)).toBeNull();
    expect(chargebee.recordPayments(failed.invoiceId)).toEqual([]);
  });

  it('an invoice partly paid in Chargebee since the event is recovered for what it still owes', async () => {
    const accountId = await connectedAccount();
    const failed = paymentFailed('cus_1/tok_visa');
    chargebee.payInvoiceInChargebee(failed.invoiceId, 500);
    const res = await post(accountId, failed.body);
    expect(res.body).toMatchObject({ action: 'recovery_started' });
    const doc = await writtenBack(stack, accountId, failed.invoiceId);
    expect(doc.amount).toBe(failed.amount - 500);
    expect(chargebee.recordPayments(failed.invoiceId)).toEqual([
      expect.objectContaining({
        form: expect.objectContaining({ 'transaction[amount]': String(failed.amount - 500) }),
      }),
    ]);
  });

  it('Chargebee failing to answer the invoice read is a 5xx that starts nothing, so Chargebee resends', async () => {
    const accountId = await connectedAccount();
    const failed = paymentFailed('cus_1/tok_visa');
    chargebee.outage(true);
    try {
      expect((await post(accountId, failed.body)).status).toBeGreaterThanOrEqual(500);
    } finally {
      chargebee.outage(false);
    }
    expect(await stack.stores.recoveries.findByKey(accountId, failed.invoiceId)).toBeNull();
    expect((await post(accountId, failed.body)).body).toMatchObject({ action: 'recovery_started' });
    expect(await writtenBack(stack, accountId, failed.invoiceId)).toMatchObject({ amount: failed.amount });
  });
});

describe('Chargebee connector: payment_succeeded (paid elsewhere)', () => {
  it('an invoice the customer pays in Chargebee stops its queued recovery: paid_elsewhere, the workflow ends, nothing more charged', async () => {
    const account = await connectedAccountWithKey();
    const token = `tok_decline_do_not_honor_x${200 + n}`;
    const failed = paymentFailed(`cus_1/${token}`);
    await post(account.id, failed.body);
    const queued = await recoveryOfInvoice(stack, account.id, failed.invoiceId, (d) => d.state === 'queued');
    expect(queued).toMatchObject({ state: 'queued', nextAttemptAt: expect.any(Date) });
    const charged = await stack.stores.sandbox.countForToken('test', token);
    expect(charged).toBeGreaterThan(0);

    const paid = chargebee.payInvoiceInChargebee(failed.invoiceId);
    const res = await post(account.id, paid);
    expect(res).toEqual({
      status: 200,
      body: { received: true, action: 'paid_elsewhere', transactionId: queued!.publicId },
    });
    await stoppedPaidElsewhere(stack, account.id, failed.invoiceId, {
      token,
      charged,
      attempts: queued!.attempts.length,
    });
    const status = await call(
      stack.baseUrl,
      'GET',
      `/api/recovery/status?idempotencyKey=${failed.invoiceId}`,
      { key: account.apiKey },
    );
    expect(status.body).toMatchObject({ status: 'succeeded', state: 'paid_elsewhere', recovered: false });
    // Chargebee collected it: nothing is recorded on the invoice.
    expect(chargebee.recordPayments(failed.invoiceId)).toEqual([]);

    expect(await post(account.id, paid)).toEqual({
      status: 200,
      body: { received: true, duplicate: true, action: 'paid_elsewhere' },
    });
  });

  /**
   * A Chargebee failure whose first charge — its last, for this decline — is out for `latencyMs`: resolves
   * once the gateway has it, with the account and the failure.
   */
  async function lastChargeUnderWay(latencyMs: number) {
    const created = await stack.createAccount({}, [
      { name: 'test', kind: 'test', test: true, credentials: { latencyMs: String(latencyMs) } },
    ]);
    const api = { site: chargebee.site, apiKey: chargebee.apiKey, apiBase: chargebee.url };
    await stack.stores.accounts.setConnector(created.account.id, 'chargebee', { username, password, ...api });
    const token = `tok_decline_incorrect_number_x${300 + n}`;
    const failed = paymentFailed(`cus_1/${token}`);
    expect((await post(created.account.id, failed.body)).body).toMatchObject({ action: 'recovery_started' });
    await poll(
      () => stack.stores.sandbox.countForToken('test', token),
      (count) => count > 0,
    );
    return { created, token, failed };
  }

  /** The recovery ended as its declined charge left it, settled as paid by the customer, charged once. */
  async function failedButPaid(accountId: string, invoiceId: string, token: string) {
    const settled = await recoveryOfInvoice(
      stack,
      accountId,
      invoiceId,
      (d) => d.paidOnTheirOwnAt !== undefined,
      30_000,
    );
    expect(settled).toMatchObject({ state: 'failed', paidOnTheirOwnAt: expect.any(Date) });
    expect(await stack.stores.sandbox.countForToken('test', token)).toBe(1);
  }

  it('paid in Chargebee while the last attempt is under way, which is declined: the failure stands, recorded as paid by the customer', async () => {
    const { created, token, failed } = await lastChargeUnderWay(3_000);
    const res = await post(created.account.id, chargebee.payInvoiceInChargebee(failed.invoiceId));
    expect(res.body).toMatchObject({ action: 'paid_elsewhere' });
    await failedButPaid(created.account.id, failed.invoiceId, token);
  });

  it('stopped through the API while the last attempt is under way (202: it outlives the stop’s wait), which is declined: settled as the stop said', async () => {
    const { created, token, failed } = await lastChargeUnderWay(8_000);
    const stopped = await call(stack.baseUrl, 'POST', '/api/recovery/stop', {
      key: created.apiKey,
      body: { idempotencyKey: failed.invoiceId, reason: 'paid_elsewhere' },
    });
    expect(stopped).toMatchObject({ status: 202, body: { status: 'unknown' } });
    await failedButPaid(created.account.id, failed.invoiceId, token);
  });

  it('a payment of an invoice Recoup holds no recovery of is ignored', async () => {
    const accountId = await connectedAccount();
    chargebee.addInvoice({
      id: 'inv_never_failed',
      customer_id: 'AzZpaid',
      amount_due: 900,
      currency_code: 'USD',
    });
    const res = await post(accountId, chargebee.payInvoiceInChargebee('inv_never_failed'));
    expect(res).toEqual({
      status: 200,
      body: { received: true, action: 'ignored', reason: 'Recoup holds no recovery of this invoice' },
    });
    expect(await stack.stores.recoveries.findByKey(accountId, 'inv_never_failed')).toBeNull();
  });

  it('the payment Recoup’s write-back recorded, reported back as payment_succeeded, leaves the recovery as it is', async () => {
    const accountId = await connectedAccount();
    const failed = paymentFailed('cus_1/tok_visa');
    await post(accountId, failed.body);
    const recovered = await writtenBack(stack, accountId, failed.invoiceId);
    const own = chargebee.paymentSucceededEvent(failed.invoiceId);
    expect(JSON.parse(own)).toMatchObject({
      source: 'api',
      content: { transaction: { reference_number: recovered.gatewayTransactionId, status: 'success' } },
    });

    await paidNoticeLeftSucceeded(stack, accountId, failed.invoiceId, await post(accountId, own), {
      writeBack: 'recorded',
    });
  });

  it('a payment of part of the invoice lowers its queued recovery: the new card is charged what is still due, and that is recorded', async () => {
    const accountId = await connectedAccount();
    const failed = paymentFailed(`cus_1/tok_decline_do_not_honor_x${200 + n + 1}`);
    await post(accountId, failed.body);
    // Paid once the recovery is queued: an attempt that read the invoice partly paid would collect no more.
    let partial = '';
    await collectsWhatIsStillDue(stack, accountId, failed.invoiceId, {
      sendPartial: () => post(accountId, (partial = chargebee.payInvoiceInChargebee(failed.invoiceId, 500))),
      sendUpdate: () => post(accountId, sourceUpdated(failed.customerId, 'cus_1/tok_mastercard')),
      newToken: 'tok_mastercard',
      amountDue: failed.amount - 500,
    });
    const [record] = chargebee.recordPayments(failed.invoiceId);
    expect(record?.form).toMatchObject({ 'transaction[amount]': String(failed.amount - 500) });
    // A redelivery after the recovery ended changes nothing.
    await stack.stores.db
      .collection('connectorEvents')
      .updateMany({ accountId }, { $set: { doneAt: null, outcome: null } });
    expect((await post(accountId, partial)).body).toMatchObject({
      action: 'ignored',
      reason: "The invoice's recovery has ended (succeeded)",
    });
  });

  it('a partial payment that leaves more due than the recovery collects changes nothing', async () => {
    const accountId = await connectedAccount();
    const failed = paymentFailed(`cus_1/tok_decline_do_not_honor_x${200 + n + 1}`);
    await post(accountId, failed.body);
    const queued = await recoveryOfInvoice(stack, accountId, failed.invoiceId, (d) => d.state === 'queued');
    // The recovery already collects less than the invoice still owes (it started from a later read).
    await stack.stores.recoveries.update(queued!._id, { amount: 1000 }, new Date());
    const res = await post(accountId, chargebee.payInvoiceInChargebee(failed.invoiceId, 500));
    expect(res.body).toEqual({
      received: true,
      action: 'ignored',
      reason: 'The recovery collects 1000, no more than is due',
    });
    expect(await stack.stores.recoveries.findByKey(accountId, failed.invoiceId)).toMatchObject({
      state: 'queued',
      amount: 1000,
    });
  });
});

describe('Chargebee connector: a write-back retried', () => {
  /** The write-back activity's call for a payment Recoup recovered on the invoice. */
  const writeBack = (failed: ReturnType<typeof paymentFailed>) =>
    chargebeeConnector.writeBack!(
      { username, password, site: chargebee.site, apiKey: chargebee.apiKey, apiBase: chargebee.url },
      {
        invoiceId: failed.invoiceId,
        amount: failed.amount,
        currency: 'USD',
        gatewayTransactionId: 'ch_recovered',
        recoveredAt: Date.now(),
      },
      { gateways: [] },
    );

  it('after Recoup’s own record was made but its answer was lost, is recorded, not already_paid', async () => {
    const failed = paymentFailed('cus_1/tok_visa');
    chargebee.loseRecordPaymentAnswers(true);
    try {
      await expect(writeBack(failed)).rejects.toThrow();
    } finally {
      chargebee.loseRecordPaymentAnswers(false);
    }
    expect(chargebee.invoice(failed.invoiceId)).toMatchObject({ status: 'paid' });
    // The activity's retry finds the invoice paid by the payment whose reference is the recovered charge.
    expect(await writeBack(failed)).toBe('recorded');
    expect(chargebee.recordPayments(failed.invoiceId)).toHaveLength(1);
  });

  it('after the customer paid the invoice in Chargebee, is already_paid: the platform collected it too', async () => {
    const failed = paymentFailed('cus_1/tok_visa');
    chargebee.payInvoiceInChargebee(failed.invoiceId);
    expect(await writeBack(failed)).toBe('already_paid');
    expect(chargebee.recordPayments(failed.invoiceId)).toEqual([]);
  });

  it('of a charge that collected while part of the invoice was paid in Chargebee, records no more than was due', async () => {
    const failed = paymentFailed('cus_1/tok_visa');
    chargebee.payInvoiceInChargebee(failed.invoiceId, 500);
    expect(await writeBack(failed)).toBe('recorded');
    const [record] = chargebee.recordPayments(failed.invoiceId);
    expect(record?.form).toMatchObject({ 'transaction[amount]': String(failed.amount - 500) });
    expect(chargebee.invoice(failed.invoiceId)).toMatchObject({ status: 'paid', amount_due: 0 });
  });
});

describe('Chargebee connector: payment_source_expiring', () => {
  it('forwards Chargebee’s notice as one card.expiring_soon with expMonth/expYear, the gateway token and the email in lower case', async () => {
    const accountId = await connectedAccount(false);
    const notice = event('payment_source_expiring', {
      customer: { id: 'AzZexpiring', email: 'Expiring@Example.com' },
      payment_source: {
        id: 'pm_AzZexpiring',
        customer_id: 'AzZexpiring',
        type: 'card',
        status: 'expiring',
        gateway: 'stripe',
        reference_id: 'cus_Exp/card_expiring1',
        card: {
          brand: 'visa',
          last4: '1111',
          iin: '411111',
          funding_type: 'credit',
          expiry_month: 1,
          expiry_year: 2031,
        },
      },
    });
    const payload = await expiryNoticeForwarded(
      stack,
      accountId,
      () => postWebhook(stack, 'chargebee', accountId, JSON.stringify(notice), webhookAuth),
      {
        paymentMethodToken: 'card_expiring1',
        expMonth: 1,
        expYear: 2031,
        customerEmail: 'expiring@example.com',
        daysUntilExpiry: expect.any(Number),
      },
    );
    expect(payload.message).toMatch(
      /^chargebee reports that the visa card ending 1111 expires at the end of 01\/2031/,
    );
  });

  it('ignores a notice that names no card expiry', async () => {
    const accountId = await connectedAccount(false);
    const notice = event('payment_source_expiring', {
      payment_source: { id: 'pm_x', customer_id: 'c', type: 'direct_debit', reference_id: 'md_1' },
    });
    const res = await postWebhook(stack, 'chargebee', accountId, JSON.stringify(notice), webhookAuth);
    expect(res.body).toMatchObject({
      action: 'ignored',
      reason: expect.stringMatching(/no card with its expiry/),
    });
  });
});

describe('Chargebee connector: payment_source_updated', () => {
  it('the customer’s new card retries the queued recovery at once with its gateway token', async () => {
    const accountId = await connectedAccount();
    const failed = paymentFailed('cus_1/tok_decline_do_not_honor_x1');
    await post(accountId, failed.body);
    await cardUpdateRecovers(
      stack,
      accountId,
      failed.invoiceId,
      () => post(accountId, sourceUpdated(failed.customerId, 'cus_1/tok_mastercard')),
      'tok_mastercard',
    );
  });
});

describe('Chargebee connector: a new card no gateway of the account can charge', () => {
  it('is ignored, and the queued recovery stays on its card', async () => {
    const accountId = await connectedAccount();
    const failed = paymentFailed('cus_1/tok_decline_do_not_honor_x2');
    await post(accountId, failed.body);
    await recoveryOfInvoice(stack, accountId, failed.invoiceId, (d) => d.state === 'queued');
    const updated = event('payment_source_updated', {
      customer: { id: failed.customerId },
      payment_source: {
        id: `pm_stripe${n}`,
        customer_id: failed.customerId,
        type: 'card',
        // A Stripe payment method, on an account whose only gateway is the test gateway.
        reference_id: 'cus_1/pm_1Nabc',
        status: 'valid',
        deleted: false,
      },
    });
    const res = await post(accountId, JSON.stringify(updated));
    expect(res.body).toMatchObject({
      received: true,
      action: 'ignored',
      reason: expect.stringMatching(/gateways can charge/),
    });
    expect(await stack.stores.recoveries.findByKey(accountId, failed.invoiceId)).toMatchObject({
      state: 'queued',
      paymentMethodToken: 'tok_decline_do_not_honor_x2',
    });
  });
});

describe('Chargebee connector: an account whose gateway is Braintree', () => {
  let braintree: BraintreeEmulator;
  beforeAll(async () => {
    braintree = await startBraintreeEmulator();
  });
  afterAll(() => braintree.close());

  /** An account charging through Braintree (the emulator), with the Chargebee connector and write-back. */
  async function braintreeAccount() {
    const gateway: GatewayConfig = {
      name: 'braintree',
      kind: 'braintree',
      test: false,
      credentials: braintree.credentials,
    };
    const { account } = await stack.createAccount({}, [gateway]);
    await stack.stores.accounts.setConnector(account.id, 'chargebee', {
      username,
      password,
      site: chargebee.site,
      apiKey: chargebee.apiKey,
      apiBase: chargebee.url,
    });
    return account.id;
  }

  it('a card Chargebee names as Braintree customer/token is recovered on token|customer, as Braintree charges it', async () => {
    const accountId = await braintreeAccount();
    braintree.addPaymentMethod('tok_abc', { customerId: 'cust_9', answers: ['approve'] });
    const failed = paymentFailed('cust_9/tok_abc', { gateway: 'braintree' });
    const res = await post(accountId, failed.body);
    expect(res).toMatchObject({ status: 200, body: { received: true, action: 'recovery_started' } });

    const doc = await writtenBack(stack, accountId, failed.invoiceId);
    expect(doc.paymentMethodToken).toBe('tok_abc|cust_9');
    expect(braintree.transactions().filter((t) => t.customerId === 'cust_9')).toEqual([
      expect.objectContaining({ paymentMethodToken: 'tok_abc', status: 'submitted_for_settlement' }),
    ]);
    expect(chargebee.invoice(failed.invoiceId)).toMatchObject({ status: 'paid', amount_due: 0 });
  });

  it('a new Braintree card the customer saves in Chargebee retries the queued recovery on token|customer', async () => {
    const accountId = await braintreeAccount();
    braintree.addPaymentMethod('tok_declined', { customerId: 'cust_10', answers: [{ decline: '2000' }] });
    braintree.addPaymentMethod('tok_new', { customerId: 'cust_10', answers: ['approve'] });
    const failed = paymentFailed('cust_10/tok_declined', { gateway: 'braintree' });
    await post(accountId, failed.body);
    await cardUpdateRecovers(
      stack,
      accountId,
      failed.invoiceId,
      () => post(accountId, sourceUpdated(failed.customerId, 'cust_10/tok_new', 'braintree')),
      'tok_new|cust_10',
    );
  });
});

describe('Chargebee connector: authentication, addressing and other events', () => {
  it('refuses a missing, wrong or non-Basic authorization with 401 and records nothing', async () => {
    const accountId = await connectedAccount();
    const failed = paymentFailed('cus_1/tok_visa');
    for (const headers of [
      {},
      basicAuth(username, `${password}x`),
      basicAuth(username, password.slice(0, -1) + (password.endsWith('0') ? '1' : '0')),
      basicAuth('someone-else', password),
      { authorization: `Bearer ${password}` },
      { authorization: `Basic ${Buffer.from(`${username}${password}`).toString('base64')}` },
    ]) {
      const res = await post(accountId, failed.body, headers);
      expect(res).toEqual({ status: 401, body: { error: 'Invalid webhook signature or credentials' } });
    }
    expect(await stack.stores.recoveries.findByKey(accountId, failed.invoiceId)).toBeNull();
    expect(await stack.stores.connectorEvents.latest(accountId, 10)).toEqual([]);
  });

  it('answers 404 for an unknown client and for an account that has not configured Chargebee', async () => {
    const failed = paymentFailed('cus_1/tok_visa');
    const unconfigured = (await stack.createAccount()).account.id;
    for (const client of ['acct_nobody', unconfigured, `acct_${'x'.repeat(300)}`]) {
      const res = await post(client, failed.body);
      expect(res.status, client).toBe(404);
      expect(res.body.error).toEqual(expect.any(String));
    }
  });

  it('takes an event of up to 1 MiB (whole invoices), and answers 413 over that', async () => {
    const accountId = await connectedAccount();
    const padded = (bytes: number) =>
      JSON.stringify(
        event('subscription_created', { subscription: { id: 'sub_1', notes: 'x'.repeat(bytes) } }),
      );
    expect((await post(accountId, padded(900_000))).body).toMatchObject({
      received: true,
      action: 'ignored',
    });
    const res = await post(accountId, padded(1_100_000));
    expect(res.status).toBe(413);
    expect(res.body.error).toEqual(expect.stringContaining('1024 KiB'));
  });

  it('answers 200 and ignores events it does not act on, and an authenticated body that is no event', async () => {
    const accountId = await connectedAccount();
    const other = event('subscription_created', { subscription: { id: 'sub_1' } });
    const expired = event('payment_source_updated', {
      payment_source: {
        customer_id: 'AzZx',
        reference_id: 'cus_1/tok_old',
        status: 'expired',
        deleted: false,
      },
    });
    for (const body of [JSON.stringify(other), JSON.stringify(expired), '{"not json', '{"hello":"world"}']) {
      const res = await post(accountId, body);
      expect(res.status, body).toBe(200);
      expect(res.body).toMatchObject({ received: true, action: 'ignored', reason: expect.any(String) });
    }
    // The same malformed bytes again are a redelivery.
    expect((await post(accountId, '{"not json')).body).toMatchObject({ duplicate: true, action: 'ignored' });
  });
});
