import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { platformCardSettleMs } from '../api/connector-intake.js';
import {
  chargebeeEvent as event,
  startChargebeeEmulator,
  type ChargebeeEmulator,
} from './support/chargebee-emulator.js';
import { chargebeePaymentFailed } from './support/chargebee-payment-failed.js';
import { postWebhook, recoveryOfInvoice } from './support/connectors.js';
import type { Stack } from './support/stack.js';
import { stackOnTimeSkipping, startTimeSkipping } from './support/time-skipping.js';

// A card the customer saved on the billing platform may be what the platform is collecting the invoice with
// right now (a card saved while paying on its own page is told before the payment): the recovery lets it
// settle (2 minutes, production's setting) before charging it. On the time-skipping server, so the wait is
// the workflow's own timer.

let env: TestWorkflowEnvironment;
let stack: Stack;
let chargebee: ChargebeeEmulator;
let n = 0;
const auth = { username: 'recoup-webhooks', password: 'settle-test' };
const headers = {
  authorization: `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`,
};

beforeAll(async () => {
  env = await startTimeSkipping();
  stack = await stackOnTimeSkipping(env, { platformCardSettleMs });
  chargebee = await startChargebeeEmulator();
});
afterAll(async () => {
  await chargebee?.close();
  await stack?.close();
  await env?.teardown();
});

/** A Chargebee invoice whose failure was declined again by Recoup and waits, queued, for its next attempt. */
async function queuedInvoice() {
  n += 1;
  const { account } = await stack.createAccount();
  await stack.stores.accounts.setConnector(account.id, 'chargebee', {
    ...auth,
    site: chargebee.site,
    apiKey: chargebee.apiKey,
    apiBase: chargebee.url,
  });
  const invoice = { id: `inv_settle_${n}`, customerId: `cus_settle_${n}`, amount: 2400 + n };
  chargebee.addInvoice({
    id: invoice.id,
    customer_id: invoice.customerId,
    amount_due: invoice.amount,
    currency_code: 'USD',
  });
  const failed = chargebeePaymentFailed({
    ...invoice,
    referenceId: `${invoice.customerId}/tok_decline_do_not_honor_x${10 + n}`,
    errorCode: 'PROCESSING_ERROR',
  });
  expect((await postWebhook(stack, 'chargebee', account.id, failed, headers)).body).toMatchObject({
    action: 'recovery_started',
  });
  const queued = await recoveryOfInvoice(stack, account.id, invoice.id, (d) => d.state === 'queued');
  expect(queued).toMatchObject({ state: 'queued' });
  return { accountId: account.id, invoice, doc: queued! };
}

/** The customer saved `token` in Chargebee: its payment_source_updated, answered card_updated. */
async function savedInChargebee(accountId: string, customerId: string, token: string) {
  const body = event('payment_source_updated', {
    payment_source: {
      id: `pm_settle_${n}`,
      customer_id: customerId,
      type: 'card',
      reference_id: `${customerId}/${token}`,
      status: 'valid',
      deleted: false,
    },
  });
  expect(
    (await postWebhook(stack, 'chargebee', accountId, JSON.stringify(body), headers)).body,
  ).toMatchObject({ action: 'card_updated', recoveriesRetried: 1 });
}

describe('a new card the billing platform reports', () => {
  it('is not charged while the platform collects the invoice with it: its payment notice stops the recovery first', async () => {
    const { accountId, invoice, doc } = await queuedInvoice();
    const newCard = `tok_visa_settle${n}`;
    await savedInChargebee(accountId, invoice.customerId, newCard);
    // Chargebee charges the invoice with the new card; its notice comes a second later.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await stack.stores.sandbox.countForToken('test', newCard)).toBe(0);
    const paid = chargebee.payInvoiceInChargebee(invoice.id);
    expect((await postWebhook(stack, 'chargebee', accountId, paid, headers)).body).toMatchObject({
      action: 'paid_elsewhere',
    });
    await env.client.workflow.getHandle(doc.workflowId).result();
    const final = await stack.stores.recoveries.find(accountId, doc._id);
    expect(final).toMatchObject({ state: 'paid_elsewhere', attempts: doc.attempts });
    expect(await stack.stores.sandbox.countForToken('test', newCard)).toBe(0);
  });

  it('a newer card reported while the first settles settles in its turn; the first is never charged', async () => {
    const { accountId, invoice, doc } = await queuedInvoice();
    const [first, newer] = [`tok_visa_first${n}`, `tok_visa_newer${n}`];
    await savedInChargebee(accountId, invoice.customerId, first);
    await env.sleep(90_000);
    const newerAt = await env.currentTimeMs();
    await savedInChargebee(accountId, invoice.customerId, newer);
    await env.client.workflow.getHandle(doc.workflowId).result();
    const final = (await stack.stores.recoveries.find(accountId, doc._id))!;
    expect(final).toMatchObject({ state: 'succeeded', paymentMethodToken: newer });
    expect(final.attempts.at(-1)!.at.getTime() - newerAt).toBeGreaterThanOrEqual(platformCardSettleMs);
    expect(await stack.stores.sandbox.countForToken('test', first)).toBe(0);
    expect(await stack.stores.sandbox.countForToken('test', newer)).toBe(1);
  });

  it('is charged once it has settled, the status showing when meanwhile, when the invoice is still owed', async () => {
    const { accountId, invoice, doc } = await queuedInvoice();
    const newCard = `tok_visa_settle${n}`;
    const toldAt = await env.currentTimeMs();
    await savedInChargebee(accountId, invoice.customerId, newCard);
    const settling = await recoveryOfInvoice(
      stack,
      accountId,
      invoice.id,
      (d) => d.nextAttemptAt !== null && d.nextAttemptAt.getTime() < doc.nextAttemptAt!.getTime(),
    );
    expect(settling!.nextAttemptAt!.getTime() - toldAt).toBeGreaterThanOrEqual(platformCardSettleMs);
    await env.client.workflow.getHandle(doc.workflowId).result();
    const final = (await stack.stores.recoveries.find(accountId, doc._id))!;
    expect(final).toMatchObject({ state: 'succeeded', paymentMethodToken: newCard });
    expect(final.attempts.at(-1)!.at.getTime() - toldAt).toBeGreaterThanOrEqual(platformCardSettleMs);
    expect(await stack.stores.sandbox.countForToken('test', newCard)).toBe(1);
  });
});
