import { createHash, createHmac, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConnectorConfig } from '../activities/connectors/registry.js';
import { cardUpdatedSignal } from '../workflows/recovery-definitions.js';
import {
  paidNoticeLeftSucceeded,
  postWebhook,
  recoveryOfInvoice,
  stoppedPaidElsewhere,
  writtenBack,
} from './support/connectors.js';
import { startRechargeEmulator, type RechargeEmulator } from './support/recharge-emulator.js';
import { startStack, type Stack } from './support/stack.js';

let stack: Stack;
let recharge: RechargeEmulator;
let n = 0;
const webhookSecret = randomBytes(16).toString('hex');

beforeAll(async () => {
  [stack, recharge] = await Promise.all([startStack(), startRechargeEmulator()]);
});
afterAll(async () => {
  await stack.close();
  await recharge.close();
});

/** The headers Recharge sends: `X-Recharge-Hmac-Sha256` = hex SHA-256 of the client secret + the body. */
function signed(body: string, { secret = webhookSecret, topic = 'charge/failed' } = {}) {
  const hash = createHash('sha256').update(`${secret}${body}`).digest('hex');
  return { 'x-recharge-hmac-sha256': hash, 'x-recharge-topic': topic };
}

/** An account on the test gateway with a Recharge connector whose API is the emulator. */
async function connectedAccount(apiToken = recharge.apiToken) {
  const created = await stack.createAccount();
  const parsed = parseConnectorConfig(
    'shopify-recharge',
    { webhookSecret, apiToken, apiBase: recharge.url },
    [],
  );
  if (!('config' in parsed)) throw new Error(parsed.problem);
  await stack.stores.accounts.setConnector(created.account.id, 'shopify-recharge', parsed.config);
  return created.account.id;
}

/** A $49.00 renewal charge declined (`processing_error`, retried at once) on `token`. */
function chargeFailed(token: string) {
  n += 1;
  return recharge.addFailedCharge({
    email: `Ottilie${n}@Example.com`,
    token,
    totalPrice: '49.00',
    currency: 'USD',
    errorType: 'processing_error',
    countryCode: 'de',
  });
}

const post = (accountId: string, body: string, headers: Record<string, string> = signed(body)) =>
  postWebhook(stack, 'shopify-recharge', accountId, body, headers);

describe('Recharge connector: authentication', () => {
  it.each([
    ['no signature', () => ({ 'x-recharge-topic': 'charge/failed' })],
    ['a hash made with another secret', (b: string) => signed(b, { secret: 'not-the-secret' })],
    ['a hash of another body', (b: string) => signed(`${b} `)],
    [
      'an HMAC keyed with the secret instead of the plain hash',
      (b: string) => ({
        'x-recharge-hmac-sha256': createHmac('sha256', webhookSecret).update(b).digest('hex'),
      }),
    ],
  ])('%s is refused with 401 and starts nothing', async (_, headers) => {
    const accountId = await connectedAccount();
    const failed = chargeFailed('tok_visa');
    const res = await post(accountId, failed.body, headers(failed.body));
    expect(res.status).toBe(401);
    expect(await stack.stores.recoveries.findByKey(accountId, failed.chargeId)).toBeNull();
  });

  it('an unknown client gets 404', async () => {
    const failed = chargeFailed('tok_visa');
    expect((await post('acct_unknown', failed.body)).status).toBe(404);
  });

  it('the config needs an API token: charges name no card token', () => {
    const parsed = parseConnectorConfig('shopify-recharge', { webhookSecret }, []);
    expect(parsed).toMatchObject({ problem: expect.stringContaining('apiToken') });
  });
});

describe('Recharge connector: charge/failed', () => {
  it('becomes a recovery of the charge on the default payment method, with no write-back', async () => {
    const accountId = await connectedAccount();
    const failed = chargeFailed('tok_visa');
    const res = await post(accountId, failed.body);
    expect(res).toMatchObject({ status: 200, body: { received: true, action: 'recovery_started' } });

    // Recharge has no call that marks a charge paid elsewhere: the outcome says so.
    const doc = await writtenBack(stack, accountId, failed.chargeId, 'not_configured');
    expect(doc).toMatchObject({
      paymentMethodToken: 'tok_visa',
      amount: 4900,
      currency: 'USD',
      customerEmail: `ottilie${n}@example.com`,
      originalDeclineCode: 'processing_error',
      connector: { platform: 'shopify-recharge', invoiceId: failed.chargeId, customerId: failed.customerId },
    });
    expect(doc.request).toMatchObject({ cardOrigin: 'DE' });
  });

  it('a redelivery is a duplicate: 200, one recovery', async () => {
    const accountId = await connectedAccount();
    const failed = chargeFailed('tok_visa');
    const first = await post(accountId, failed.body);
    const again = await post(accountId, failed.body);
    expect(again).toEqual({
      status: 200,
      body: { received: true, duplicate: true, action: 'recovery_started' },
    });
    const doc = await writtenBack(stack, accountId, failed.chargeId, 'not_configured');
    expect(doc._id).toBe(first.body.transactionId);
  });

  it('a charge Recharge collected before the webhook is read is ignored', async () => {
    const accountId = await connectedAccount();
    const failed = chargeFailed('tok_visa');
    recharge.setChargeStatus(failed.chargeId, 'success');
    const res = await post(accountId, failed.body);
    expect(res).toMatchObject({ status: 200, body: { action: 'ignored' } });
    expect(await stack.stores.recoveries.findByKey(accountId, failed.chargeId)).toBeNull();
  });

  it('a Stripe payment method on an account whose gateway is the test gateway is answered 200 and ignored with why (Recharge deletes a webhook that keeps failing), nothing stored', async () => {
    const accountId = await connectedAccount();
    const failed = chargeFailed('pm_123');
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
    expect(await stack.stores.recoveries.findByKey(accountId, failed.chargeId)).toBeNull();
    expect((await stack.stores.connectorEvents.latest(accountId, 1))[0]).toMatchObject({
      outcome: 'ignored',
      doneAt: expect.any(Date),
    });
  });

  it('Recharge refusing the API token is a 5xx, so Recharge delivers again', async () => {
    const accountId = await connectedAccount('not-the-token');
    const failed = chargeFailed('tok_visa');
    expect((await post(accountId, failed.body)).status).toBeGreaterThanOrEqual(500);
    expect(await stack.stores.recoveries.findByKey(accountId, failed.chargeId)).toBeNull();
  });
});

/**
 * A Recharge failure is declined and queued; Recharge then collects the charge, and its charge/paid body
 * (`paidBody`, sent with `headers`) stops the queued recovery as paid elsewhere, nothing more charged.
 * Returns the body sent.
 */
async function paidStopsQueued(
  accountId: string,
  paidBody: (chargeId: string) => string,
  headers: (body: string) => Record<string, string>,
): Promise<string> {
  const token = `tok_decline_do_not_honor_x${200 + n}`;
  const failed = chargeFailed(token);
  await post(accountId, failed.body);
  const queued = await recoveryOfInvoice(stack, accountId, failed.chargeId, (d) => d.state === 'queued');
  expect(queued).toMatchObject({ state: 'queued', nextAttemptAt: expect.any(Date) });
  const charged = await stack.stores.sandbox.countForToken('test', token);
  expect(charged).toBeGreaterThan(0);
  const paid = paidBody(failed.chargeId);
  expect(await post(accountId, paid, headers(paid))).toEqual({
    status: 200,
    body: { received: true, action: 'paid_elsewhere', transactionId: queued!.publicId },
  });
  await stoppedPaidElsewhere(stack, accountId, failed.chargeId, {
    token,
    charged,
    attempts: queued!.attempts.length,
  });
  return paid;
}

describe('Recharge connector: charge/paid (paid elsewhere)', () => {
  const paidHeaders = (body: string) => signed(body, { topic: 'charge/paid' });

  it('a charge Recharge collects stops its queued recovery: paid_elsewhere, the workflow ends, nothing more charged', async () => {
    const accountId = await connectedAccount();
    const paid = await paidStopsQueued(
      accountId,
      (chargeId) => recharge.payChargeInRecharge(chargeId),
      paidHeaders,
    );
    expect(await post(accountId, paid, paidHeaders(paid))).toEqual({
      status: 200,
      body: { received: true, duplicate: true, action: 'paid_elsewhere' },
    });
  });

  it('a paid charge Recoup holds no recovery of is ignored', async () => {
    const accountId = await connectedAccount();
    const failed = chargeFailed('tok_visa');
    const paid = recharge.payChargeInRecharge(failed.chargeId);
    const res = await post(accountId, paid, paidHeaders(paid));
    expect(res).toEqual({
      status: 200,
      body: { received: true, action: 'ignored', reason: 'Recoup holds no recovery of this invoice' },
    });
    expect(await stack.stores.recoveries.findByKey(accountId, failed.chargeId)).toBeNull();
  });

  it('a charge whose recovery Recoup collected, then reported paid by Recharge, leaves the recovery as it is', async () => {
    const accountId = await connectedAccount();
    const failed = chargeFailed('tok_visa');
    await post(accountId, failed.body);
    await writtenBack(stack, accountId, failed.chargeId, 'not_configured');
    // The merchant settles the charge in Recharge by hand, which reports it paid.
    const paid = recharge.payChargeInRecharge(failed.chargeId);
    const res = await post(accountId, paid, paidHeaders(paid));
    await paidNoticeLeftSucceeded(stack, accountId, failed.chargeId, res);
  });

  it('without the topic header, a charge in success is taken as charge/paid', async () => {
    const accountId = await connectedAccount();
    const failed = chargeFailed(`tok_decline_do_not_honor_x${200 + n}`);
    await post(accountId, failed.body);
    await recoveryOfInvoice(stack, accountId, failed.chargeId, (d) => d.state === 'queued');
    const paid = recharge.payChargeInRecharge(failed.chargeId);
    const { 'x-recharge-topic': _topic, ...bare } = paidHeaders(paid);
    expect((await post(accountId, paid, bare)).body).toMatchObject({ action: 'paid_elsewhere' });
  });
});

describe('Recharge connector: charge/paid in API version 2021-01 (statuses in upper case)', () => {
  /** The charge/paid body as a token defaulting to 2021-01 receives it: `SUCCESS`, not `success`. */
  const upperCase = (paid: string) => paid.replace('"status":"success"', '"status":"SUCCESS"');

  it.each([
    ['with its topic header', (body: string) => signed(body, { topic: 'charge/paid' })],
    ['without it', (body: string) => ({ 'x-recharge-hmac-sha256': signed(body)['x-recharge-hmac-sha256'] })],
  ])('a SUCCESS charge stops its queued recovery as paid elsewhere, %s', async (_, headers) => {
    const paid = await paidStopsQueued(
      await connectedAccount(),
      (chargeId) => upperCase(recharge.payChargeInRecharge(chargeId)),
      headers,
    );
    expect(paid).toContain('"status":"SUCCESS"');
  });
});

describe('Recharge connector: the charge read again before each attempt', () => {
  it('a charge Recharge collected, its charge/paid not yet in, is not charged again: the recovery stops', async () => {
    const accountId = await connectedAccount();
    const token = `tok_decline_do_not_honor_x${200 + n}`;
    const failed = chargeFailed(token);
    await post(accountId, failed.body);
    const queued = await recoveryOfInvoice(stack, accountId, failed.chargeId, (d) => d.state === 'queued');
    const charged = await stack.stores.sandbox.countForToken('test', token);
    recharge.payChargeInRecharge(failed.chargeId);
    // The next attempt, due at once, is brought forward as a new card would.
    await stack.temporal.workflow
      .getHandle(queued!.workflowId)
      .signal(cardUpdatedSignal, { newToken: 'tok_visa_recharge_new', paymentMethodType: 'card' });
    const ended = await recoveryOfInvoice(stack, accountId, failed.chargeId, (d) => d.endedAt !== undefined);
    expect(ended).toMatchObject({ state: 'stopped', lastDeclineCode: 'invoice_not_owed' });
    expect(await stack.stores.sandbox.countForToken('test', token)).toBe(charged);
    expect(await stack.stores.sandbox.countForToken('test', 'tok_visa_recharge_new')).toBe(0);
  });
});

describe('Recharge connector: other topics', () => {
  it.each(['charge/created', 'subscription/created'])('%s is answered 200 and ignored', async (topic) => {
    const accountId = await connectedAccount();
    const failed = chargeFailed('tok_visa');
    const res = await post(accountId, failed.body, signed(failed.body, { topic }));
    expect(res).toMatchObject({ status: 200, body: { received: true, action: 'ignored' } });
    expect(await stack.stores.recoveries.findByKey(accountId, failed.chargeId)).toBeNull();
  });
});
