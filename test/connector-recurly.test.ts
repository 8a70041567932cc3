import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recurly as recurlyConnector } from '../activities/connectors/recurly.js';
import { parseConnectorConfig } from '../activities/connectors/registry.js';
import { admitRecovery } from '../api/admit-recovery.js';
import { startRecovery } from '../api/start-recovery.js';
import { RecoveryRequest } from '../domain/recovery-request.js';
import { recoveryInputOf } from '../services/recovery-start.js';
import type { Account } from '../store/accounts.js';
import type { RecoveryDoc } from '../store/recoveries.js';
import { taskQueues } from '../worker/task-queues.js';
import { cardUpdatedSignal } from '../workflows/recovery-definitions.js';
import {
  cardUpdateRecovers,
  collectsWhatIsStillDue,
  paidNoticeLeftSucceeded,
  postWebhook,
  recoveryOfInvoice,
  redeliveryIsDuplicate,
  stoppedPaidElsewhere,
  writtenBack,
} from './support/connectors.js';
import { startRecurlyEmulator, type RecurlyEmulator } from './support/recurly-emulator.js';
import { eventsOf } from './support/events.js';
import { call, startStack, type Stack } from './support/stack.js';

let stack: Stack;
let recurly: RecurlyEmulator;
let n = 0;
const webhookSecret = randomBytes(16).toString('hex');

beforeAll(async () => {
  [stack, recurly] = await Promise.all([startStack(), startRecurlyEmulator()]);
});
afterAll(async () => {
  await stack.close();
  await recurly.close();
});

/** The `recurly-signature` header Recurly sends: `<unix ms>,<hex HMAC-SHA256 of "<unix ms>.<body>">`. */
function signature(body: string, { secret = webhookSecret, at = Date.now() } = {}) {
  const sig = createHmac('sha256', secret).update(`${at}.${body}`).digest('hex');
  return { 'recurly-signature': `${at},${sig}` };
}

/** An account on the test gateway with a Recurly connector whose API is the emulator, and its API key. */
async function connected() {
  const created = await stack.createAccount();
  const input = { webhookSecret, apiKey: recurly.apiKey, apiBase: recurly.url };
  const parsed = parseConnectorConfig('recurly', input, []);
  if (!('config' in parsed)) throw new Error(parsed.problem);
  await stack.stores.accounts.setConnector(created.account.id, 'recurly', parsed.config);
  return created;
}

const connectedAccount = async () => (await connected()).account.id;

/** A JSON notification as Recurly posts it: ids only. */
const notification = (objectType: string, eventType: string, ids: Record<string, string>) =>
  JSON.stringify({
    id: randomBytes(6).toString('hex'),
    object_type: objectType,
    site_id: 'qc326l1hl8k9',
    event_type: eventType,
    event_time: new Date().toISOString(),
    ...ids,
  });

/** Recurly's renewal of a $49.00 invoice declined (`try_again` unless told) on `token`; its `payment.failed` notification. */
function renewalFailed(token: string, statusCode = 'Try_Again') {
  n += 1;
  const accountCode = `verena-${n}`;
  const { transactionUuid, invoiceId } = recurly.addFailedRenewal({
    accountCode,
    email: `Verena${n}@Example.com`,
    token,
    amount: 49,
    currency: 'USD',
    statusCode,
    firstSix: '411111',
    country: 'de',
  });
  return { accountCode, invoiceId, body: notification('payment', 'failed', { uuid: transactionUuid }) };
}

const post = (accountId: string, body: string, headers: Record<string, string> = signature(body)) =>
  postWebhook(stack, 'recurly', accountId, body, headers);

describe('Recurly connector: authentication', () => {
  it.each([
    ['no signature', () => ({})],
    ['a signature made with another secret', (b: string) => signature(b, { secret: 'not-the-secret' })],
    ['a signature six minutes old', (b: string) => signature(b, { at: Date.now() - 6 * 60_000 })],
    ['a signature of another body', (b: string) => signature(`${b} `)],
  ])('%s is refused with 401 and starts nothing', async (_, headers) => {
    const accountId = await connectedAccount();
    const failed = renewalFailed('tok_visa');
    const res = await post(accountId, failed.body, headers(failed.body));
    expect(res.status).toBe(401);
    expect(await stack.stores.recoveries.findByKey(accountId, failed.invoiceId)).toBeNull();
  });

  it('an unknown client gets 404', async () => {
    const failed = renewalFailed('tok_visa');
    const res = await post('acct_unknown', failed.body);
    expect(res.status).toBe(404);
  });

  it('the config needs an API key: the notifications carry ids only', () => {
    const parsed = parseConnectorConfig('recurly', { webhookSecret }, []);
    expect(parsed).toMatchObject({ problem: expect.stringContaining('apiKey') });
  });
});

describe('Recurly connector: payment.failed', () => {
  it('becomes a recovery of the invoice on the card’s gateway token, and the invoice is marked paid once', async () => {
    const accountId = await connectedAccount();
    const failed = renewalFailed('tok_visa');
    const res = await post(accountId, failed.body);
    expect(res).toMatchObject({ status: 200, body: { received: true, action: 'recovery_started' } });

    const doc = await writtenBack(stack, accountId, failed.invoiceId);
    expect(doc).toMatchObject({
      paymentMethodToken: 'tok_visa',
      amount: 4900,
      currency: 'USD',
      customerEmail: `verena${n}@example.com`,
      // Recurly's try_again is Recoup's try_again_later: a technical decline, charged again at once.
      originalDeclineCode: 'try_again_later',
      connector: { platform: 'recurly', invoiceId: failed.invoiceId, customerId: failed.accountCode },
    });
    expect(doc?.request).toMatchObject({ binPrefix: '411111', cardOrigin: 'DE' });
    expect(recurly.markedSuccessful().filter((id) => id === failed.invoiceId)).toHaveLength(1);
  });

  it.each([
    ['fraud_stolen_card', 'stolen_card'],
    ['fraud_gateway', 'fraudulent'],
    ['cardholder_requested_stop', 'stop_payment_order'],
  ])('a renewal Recurly declined with %s is blocked as %s: the card is not charged', async (status, code) => {
    const accountId = await connectedAccount();
    const token = `tok_recurly_${status}_${n}`;
    const failed = renewalFailed(token, status);
    const res = await post(accountId, failed.body);
    expect(res).toMatchObject({ status: 200, body: { received: true, action: 'recovery_started' } });
    const doc = await recoveryOfInvoice(stack, accountId, failed.invoiceId, (d) => d.state === 'blocked');
    expect(doc).toMatchObject({ state: 'blocked', originalDeclineCode: code });
    expect(await stack.stores.sandbox.countForToken('test', token)).toBe(0);
  });

  it('a redelivery of the notification is a duplicate: 200, one recovery, one write-back', async () => {
    const accountId = await connectedAccount();
    const failed = renewalFailed('tok_visa');
    await redeliveryIsDuplicate(stack, accountId, failed.invoiceId, () => post(accountId, failed.body));
    expect(recurly.markedSuccessful().filter((id) => id === failed.invoiceId)).toHaveLength(1);
  });

  it('an invoice paid in Recurly before the notification is read is ignored', async () => {
    const accountId = await connectedAccount();
    const failed = renewalFailed('tok_visa');
    recurly.setInvoiceState(failed.invoiceId, 'paid');
    const res = await post(accountId, failed.body);
    expect(res).toMatchObject({ status: 200, body: { action: 'ignored' } });
    expect(await stack.stores.recoveries.findByKey(accountId, failed.invoiceId)).toBeNull();
  });
});

describe('Recurly connector: a failure that ends at intake', () => {
  it('keeps the id the intake answered with: the recovery.failed webhook and status lookups carry it bare', async () => {
    const { account, apiKey } = await connected();
    const failed = renewalFailed('tok_decline_expired_card', 'expired_card');
    const res = await post(account.id, failed.body);
    expect(res).toMatchObject({ status: 200, body: { received: true, action: 'recovery_started' } });
    const id = String(res.body.transactionId);
    expect(id).toMatch(/^[0-9a-f-]{36}$/);

    const doc = await recoveryOfInvoice(stack, account.id, failed.invoiceId, (d) => d.state === 'failed');
    expect(doc).toMatchObject({ state: 'failed', publicId: id, recommendedAction: 'request_card_update' });
    const events = await eventsOf(stack, account.id, ['recovery.failed']);
    const webhook = events.find((e) => e.type === 'recovery.failed')?.payload;
    expect(webhook).toMatchObject({ event: 'recovery.failed', serviceTransactionId: id });
    for (const path of [
      `/api/recovery/status/${id}`,
      `/api/recovery/status?idempotencyKey=${failed.invoiceId}`,
    ]) {
      const status = await call(stack.baseUrl, 'GET', path, { key: apiKey });
      expect(status.body).toMatchObject({ transactionId: id, status: 'failed' });
    }
  });
});

describe('Recurly connector: a first attempt the issuer blocks', () => {
  it('ends blocked with recovery.blocked, as at execute: the platform was answered before any attempt', async () => {
    const { account } = await connected();
    const failed = renewalFailed('tok_decline_stolen_card', 'try_again');
    expect((await post(account.id, failed.body)).body).toMatchObject({ action: 'recovery_started' });
    const doc = await recoveryOfInvoice(stack, account.id, failed.invoiceId, (d) => d.state === 'blocked');
    expect(doc).toMatchObject({ state: 'blocked', lastDeclineCode: 'stolen_card' });
    const events = await eventsOf(stack, account.id, ['recovery.blocked']);
    expect(events.map((e) => e.type)).not.toContain('recovery.failed');
  });
});

describe('Recurly connector: a redelivery after the intake died midway', () => {
  const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000);

  it('between claiming the invoice and storing its recovery: the recovery is stored under that claim and recovered', async () => {
    const accountId = await connectedAccount();
    const failed = renewalFailed('tok_visa');
    const claimed = randomUUID();
    await stack.stores.claims.claimKey(accountId, failed.invoiceId, claimed, minutesAgo(2));

    const res = await post(accountId, failed.body);
    expect(res).toEqual({
      status: 200,
      body: { received: true, action: 'recovery_started', transactionId: claimed },
    });
    expect((await writtenBack(stack, accountId, failed.invoiceId))._id).toBe(claimed);
    expect(recurly.markedSuccessful().filter((id) => id === failed.invoiceId)).toHaveLength(1);
  });

  /** The recovery of `failed` as an intake stores it at `at` before starting its workflow (then dies). */
  async function storedUnstarted(
    account: Account,
    failed: ReturnType<typeof renewalFailed>,
    token: string,
    at: Date,
  ): Promise<RecoveryDoc> {
    const request = RecoveryRequest.parse({
      paymentMethodToken: token,
      amount: 4900,
      originalDeclineCode: 'try_again_later',
      idempotencyKey: failed.invoiceId,
    });
    const connector = {
      platform: 'recurly' as const,
      invoiceId: failed.invoiceId,
      customerId: failed.accountCode,
    };
    const admitted = await admitRecovery(stack.stores, account, request, at, connector);
    if (admitted.kind !== 'admitted') throw new Error('not admitted');
    return admitted.doc;
  }

  it('between storing the recovery and starting it: that recovery is started and recovered', async () => {
    const { account } = await connected();
    const failed = renewalFailed('tok_visa');
    const stored = await storedUnstarted(account, failed, 'tok_visa', minutesAgo(2));

    const res = await post(account.id, failed.body);
    expect(res).toEqual({
      status: 200,
      body: { received: true, action: 'recovery_started', transactionId: stored._id },
    });
    expect((await writtenBack(stack, account.id, failed.invoiceId))._id).toBe(stored._id);
    expect(recurly.markedSuccessful().filter((id) => id === failed.invoiceId)).toHaveLength(1);
  });

  it('under a minute after storing the recovery: 503 and the event stays open, until a retry a minute on starts it, charged once', async () => {
    const { account } = await connected();
    const token = `tok_recurly_unstarted_${randomBytes(4).toString('hex')}`;
    const failed = renewalFailed(token);
    const stored = await storedUnstarted(account, failed, token, new Date(Date.now() - 15_000));

    // Retry-After names when a retry may take the recovery over (60 s after it was stored).
    const first = await fetch(`${stack.baseUrl}/api/connectors/recurly/webhook/${account.id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...signature(failed.body) },
      body: failed.body,
    });
    expect(first.status).toBe(503);
    expect(Number(first.headers.get('retry-after'))).toBeGreaterThan(40);
    expect(Number(first.headers.get('retry-after'))).toBeLessThanOrEqual(45);
    expect(await first.json()).toMatchObject({ error: 'Internal error', transactionId: stored._id });
    // Not done: the platform's next delivery is handled again, not answered as a duplicate.
    const again = await post(account.id, failed.body);
    expect(again).toMatchObject({ status: 503, body: { transactionId: stored._id } });
    const [event] = await stack.stores.connectorEvents.latest(account.id, 1);
    expect(event).toMatchObject({
      eventId: (JSON.parse(failed.body) as { id: string }).id,
      doneAt: null,
      outcome: null,
    });
    expect(await stack.stores.recoveries.find(account.id, stored._id)).toMatchObject({
      state: 'processing',
      attempts: [],
    });

    // The platform backs off for minutes: by its next retry the recovery is over a minute old, untouched.
    await stack.stores.db
      .collection<{ _id: string }>('recoveries')
      .updateOne({ _id: stored._id }, { $set: { createdAt: minutesAgo(2), updatedAt: minutesAgo(2) } });
    const later = await post(account.id, failed.body);
    expect(later).toEqual({
      status: 200,
      body: { received: true, action: 'recovery_started', transactionId: stored._id },
    });
    expect((await writtenBack(stack, account.id, failed.invoiceId))._id).toBe(stored._id);
    expect(await stack.stores.sandbox.countForToken('test', token)).toBe(1);
    expect(recurly.markedSuccessful().filter((id) => id === failed.invoiceId)).toHaveLength(1);
    expect((await post(account.id, failed.body)).body).toEqual({
      received: true,
      duplicate: true,
      action: 'recovery_started',
    });
  });

  it('under a minute after storing the recovery whose workflow Temporal has (workers behind): already_received at once', async () => {
    const { account } = await connected();
    const failed = renewalFailed('tok_visa');
    const stored = await storedUnstarted(account, failed, 'tok_visa', new Date(Date.now() - 15_000));
    // Started on a task queue no worker polls: the workflow exists, and has recorded nothing yet.
    await startRecovery(
      stack.temporal,
      taskQueues(`nobody-${n}`),
      stored.workflowId,
      recoveryInputOf(stored),
      {
        wait: false,
      },
    );
    try {
      const res = await post(account.id, failed.body);
      expect(res).toEqual({
        status: 200,
        body: { received: true, action: 'already_received', transactionId: stored.publicId },
      });
      expect((await post(account.id, failed.body)).body).toMatchObject({ duplicate: true });
    } finally {
      await stack.temporal.workflow.getHandle(stored.workflowId).terminate('test over');
    }
  });
});

describe('Recurly connector: the invoice’s next failure while its recovery runs', () => {
  it('is already_received at once, seconds after the recovery started: one recovery', async () => {
    const accountId = await connectedAccount();
    const failed = renewalFailed('tok_decline_do_not_honor');
    const res = await post(accountId, failed.body);
    expect(res.body).toMatchObject({ action: 'recovery_started' });
    await recoveryOfInvoice(stack, accountId, failed.invoiceId, (d) => d.state === 'queued');

    // Recurly's own retry of the invoice failed too: a notification of its own.
    const next = JSON.stringify({ ...JSON.parse(failed.body), id: randomBytes(6).toString('hex') });
    expect(await post(accountId, next)).toEqual({
      status: 200,
      body: { received: true, action: 'already_received', transactionId: res.body.transactionId },
    });
  });
});

describe('Recurly connector: billing_info.updated', () => {
  it('the customer’s new card retries the queued recovery at once, and it succeeds', async () => {
    const accountId = await connectedAccount();
    const failed = renewalFailed('tok_decline_do_not_honor_x1');
    await post(accountId, failed.body);
    const updated = notification('billing_info', 'updated', { account_code: failed.accountCode });
    await cardUpdateRecovers(
      stack,
      accountId,
      failed.invoiceId,
      () => {
        recurly.setCard(failed.accountCode, 'tok_mastercard');
        return post(accountId, updated);
      },
      'tok_mastercard',
    );
  });
});

describe('Recurly connector: payment.succeeded', () => {
  /** A renewal declined do_not_honor (on a token of its own) whose recovery waits for its next attempt. */
  async function queuedRecovery(accountId: string) {
    const token = `tok_decline_do_not_honor_x${100 + n}`;
    const failed = renewalFailed(token);
    expect((await post(accountId, failed.body)).body).toMatchObject({ action: 'recovery_started' });
    const queued = await recoveryOfInvoice(stack, accountId, failed.invoiceId, (d) => d.state === 'queued');
    expect(queued).toMatchObject({ state: 'queued' });
    return { ...failed, token, queued: queued! };
  }

  /** The notification of a payment the customer made on Recurly: the invoice's balance unless told. */
  const paidOnRecurly = (invoiceId: string, amount?: number) =>
    notification('payment', 'succeeded', { uuid: recurly.payOnRecurly(invoiceId, amount) });

  it('the customer paying the invoice on Recurly stops its queued recovery: paid elsewhere, nothing more charged, nothing marked', async () => {
    const { account, apiKey } = await connected();
    const { invoiceId, token, queued } = await queuedRecovery(account.id);
    const charged = await stack.stores.sandbox.countForToken('test', token);

    const paid = paidOnRecurly(invoiceId);
    expect(await post(account.id, paid)).toEqual({
      status: 200,
      body: { received: true, action: 'paid_elsewhere', transactionId: queued.publicId },
    });
    await stoppedPaidElsewhere(stack, account.id, invoiceId, {
      token,
      charged,
      attempts: queued.attempts.length,
    });
    const status = await call(stack.baseUrl, 'GET', `/api/recovery/status?idempotencyKey=${invoiceId}`, {
      key: apiKey,
    });
    expect(status.body).toMatchObject({ status: 'succeeded', state: 'paid_elsewhere', recovered: false });
    expect(recurly.markedSuccessful()).not.toContain(invoiceId);

    // Recurly delivers the notification again: a duplicate, which changes nothing.
    expect(await post(account.id, paid)).toEqual({
      status: 200,
      body: { received: true, duplicate: true, action: 'paid_elsewhere' },
    });
    expect(await recoveryOfInvoice(stack, account.id, invoiceId)).toMatchObject({ state: 'paid_elsewhere' });
  });

  it('an invoice paid on Recurly whose notification never came is read before the next attempt and not charged: the recovery stops', async () => {
    const accountId = await connectedAccount();
    const { invoiceId, token, queued } = await queuedRecovery(accountId);
    const charged = await stack.stores.sandbox.countForToken('test', token);
    recurly.payOnRecurly(invoiceId);
    // The next attempt, brought forward as a new card brings it.
    await stack.temporal.workflow
      .getHandle(queued.workflowId)
      .signal(cardUpdatedSignal, { newToken: 'tok_visa_recurly_new', paymentMethodType: 'card' });
    const ended = await recoveryOfInvoice(stack, accountId, invoiceId, (d) => d.endedAt !== undefined);
    expect(ended).toMatchObject({ state: 'stopped', lastDeclineCode: 'invoice_not_owed' });
    expect(await stack.stores.sandbox.countForToken('test', token)).toBe(charged);
    expect(await stack.stores.sandbox.countForToken('test', 'tok_visa_recurly_new')).toBe(0);
  });

  it('a payment of part of the invoice lowers its queued recovery: the new card is charged the balance left', async () => {
    const accountId = await connectedAccount();
    const { invoiceId, accountCode } = await queuedRecovery(accountId);
    await collectsWhatIsStillDue(stack, accountId, invoiceId, {
      sendPartial: () => post(accountId, paidOnRecurly(invoiceId, 20)),
      sendUpdate: () => {
        recurly.setCard(accountCode, 'tok_mastercard');
        return post(accountId, notification('billing_info', 'updated', { account_code: accountCode }));
      },
      newToken: 'tok_mastercard',
      amountDue: 2900,
    });
    expect(recurly.markedSuccessful()).toContain(invoiceId);
  });

  it('a payment of an invoice Recoup holds no recovery of is ignored', async () => {
    const accountId = await connectedAccount();
    const { invoiceId } = renewalFailed('tok_visa');
    const res = await post(accountId, paidOnRecurly(invoiceId));
    expect(res).toEqual({
      status: 200,
      body: { received: true, action: 'ignored', reason: 'Recoup holds no recovery of this invoice' },
    });
    expect(await stack.stores.recoveries.findByKey(accountId, invoiceId)).toBeNull();
  });

  it('an invoice Recoup recovered and marked successful is left as it is by Recurly’s notices that it is paid', async () => {
    const accountId = await connectedAccount();
    const failed = renewalFailed('tok_visa');
    await post(accountId, failed.body);
    await writtenBack(stack, accountId, failed.invoiceId);

    // mark_successful makes the invoice paid without a transaction: Recurly says so with charge_invoice.paid.
    const marked = await post(accountId, notification('charge_invoice', 'paid', {}));
    expect(marked.body).toEqual({
      received: true,
      action: 'ignored',
      reason: 'Recoup does not act on charge_invoice.paid',
    });
    // A payment notice of the invoice arriving after its recovery succeeded (Recurly's own retry raced it).
    const late = await post(accountId, paidOnRecurly(failed.invoiceId, 49));
    await paidNoticeLeftSucceeded(stack, accountId, failed.invoiceId, late, { writeBack: 'recorded' });
  });
});

describe('Recurly connector: a write-back retried', () => {
  /** The write-back activity's call for the payment Recoup recovered on `invoiceId`, `recoveredAt` now unless told. */
  const writeBack = (invoiceId: string, recoveredAt = Date.now()) =>
    recurlyConnector.writeBack!(
      { webhookSecret, apiKey: recurly.apiKey, apiBase: recurly.url },
      { invoiceId, amount: 4900, currency: 'USD', gatewayTransactionId: 'ch_recovered', recoveredAt },
      { gateways: [] },
    );
  const marks = (invoiceId: string) => recurly.markedSuccessful().filter((id) => id === invoiceId).length;

  /** Recoup marks the invoice successful, but the answer is lost: the write-back fails and is retried. */
  async function markLost(invoiceId: string) {
    recurly.loseMarkAnswers(true);
    try {
      await expect(writeBack(invoiceId)).rejects.toThrow();
    } finally {
      recurly.loseMarkAnswers(false);
    }
  }

  it('after Recoup’s own mark was made but its answer was lost, is recorded, not already_paid', async () => {
    const { invoiceId } = renewalFailed('tok_visa');
    await markLost(invoiceId);
    const marked = marks(invoiceId);
    expect(marked).toBeGreaterThan(0);
    // The activity's retry finds the invoice paid with nothing collected at Recurly, since the recovery succeeded.
    expect(await writeBack(invoiceId)).toBe('recorded');
    expect(marks(invoiceId)).toBe(marked);
  });

  it('after the customer paid part on Recurly and Recoup’s mark of the rest lost its answer, is recorded', async () => {
    const { invoiceId } = renewalFailed('tok_visa');
    recurly.payOnRecurly(invoiceId, 20);
    await markLost(invoiceId);
    expect(await writeBack(invoiceId)).toBe('recorded');
  });

  it('after the customer paid the invoice on Recurly, is already_paid: the platform collected it too', async () => {
    const { invoiceId } = renewalFailed('tok_visa');
    recurly.payOnRecurly(invoiceId);
    expect(await writeBack(invoiceId)).toBe('already_paid');
    expect(marks(invoiceId)).toBe(0);
  });

  it('after the merchant marked the invoice paid before the recovery succeeded, is already_paid', async () => {
    const { invoiceId } = renewalFailed('tok_visa');
    recurly.setInvoiceState(invoiceId, 'paid');
    // The recovery's charge went through an hour after the merchant's mark: the customer paid twice.
    expect(await writeBack(invoiceId, Date.now() + 3_600_000)).toBe('already_paid');
    expect(marks(invoiceId)).toBe(0);
  });
});

describe('Recurly connector: other notifications', () => {
  it('are answered 200 and ignored', async () => {
    const accountId = await connectedAccount();
    const res = await post(accountId, notification('account', 'created', { account_code: 'verena' }));
    expect(res).toMatchObject({ status: 200, body: { received: true, action: 'ignored' } });
  });
});
