import { createHash, createHmac, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConnectorConfig } from '../activities/connectors/registry.js';
import { postWebhook, writtenBack } from './support/connectors.js';
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

  it('a Stripe payment method on an account whose gateway is the test gateway gets 422, nothing stored', async () => {
    const accountId = await connectedAccount();
    const failed = chargeFailed('pm_123');
    const res = await post(accountId, failed.body);
    expect(res.status).toBe(422);
    expect(JSON.stringify(res.body.details)).toContain('paymentMethodToken');
    expect(await stack.stores.recoveries.findByKey(accountId, failed.chargeId)).toBeNull();
  });

  it('Recharge refusing the API token is a 5xx, so Recharge delivers again', async () => {
    const accountId = await connectedAccount('not-the-token');
    const failed = chargeFailed('tok_visa');
    expect((await post(accountId, failed.body)).status).toBeGreaterThanOrEqual(500);
    expect(await stack.stores.recoveries.findByKey(accountId, failed.chargeId)).toBeNull();
  });
});

describe('Recharge connector: other topics', () => {
  it.each(['charge/paid', 'subscription/created'])('%s is answered 200 and ignored', async (topic) => {
    const accountId = await connectedAccount();
    const failed = chargeFailed('tok_visa');
    const res = await post(accountId, failed.body, signed(failed.body, { topic }));
    expect(res).toMatchObject({ status: 200, body: { received: true, action: 'ignored' } });
    expect(await stack.stores.recoveries.findByKey(accountId, failed.chargeId)).toBeNull();
  });
});
