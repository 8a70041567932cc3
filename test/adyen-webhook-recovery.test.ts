import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayConfig } from '../domain/settings.js';
import { startAdyenEmulator, type AdyenEmulator } from './support/adyen-emulator.js';
import { newHmacKey, notification, postAdyenWebhook, signedItem } from './support/adyen-webhook.js';
import { call, type Stack } from './support/stack.js';
import { stackOnTimeSkipping, startTimeSkipping } from './support/time-skipping.js';

// The whole service on Temporal's time-skipping server: days of lookups run in seconds.

let env: TestWorkflowEnvironment;
let stack: Stack;
let adyen: AdyenEmulator;

beforeAll(async () => {
  env = await startTimeSkipping();
  stack = await stackOnTimeSkipping(env);
  adyen = await startAdyenEmulator();
});
afterAll(async () => {
  await adyen?.close();
  await stack?.close();
  await env?.teardown();
});

/** The Adyen gateway of an account, pointed at the emulator, with its webhook's HMAC key if given. */
const adyenGateway = (hmacKey?: string): GatewayConfig => ({
  name: 'adyen',
  kind: 'adyen',
  test: false,
  credentials: { ...adyen.credentials, ...(hmacKey ? { hmacKey } : {}) },
});

/** A recovery whose one payment Adyen holds as Received (on the stored card `method`), on a new account. */
async function heldRecovery(method: string, hmacKey?: string) {
  const shopperReference = `shopper_${method}`;
  adyen.addStoredMethod(method, { merchantAccount: 'AcmeECOM', shopperReference, answers: ['received'] });
  const { apiKey, account } = await stack.createAccount({}, [adyenGateway(hmacKey)]);
  const answer = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
    key: apiKey,
    body: {
      paymentMethodToken: `AcmeECOM|${method}|${shopperReference}`,
      amount: 4900,
      currency: 'eur',
      originalDeclineCode: 'try_again_later',
    },
  });
  expect(answer).toMatchObject({ status: 202, body: { status: 'unknown' } });
  const transactionId = String(answer.body.transactionId);
  const recovery = () => stack.stores.recoveries.find(account.id, transactionId);
  const handle = env.client.workflow.getHandle((await recovery())!.workflowId);
  /** The payments Adyen made for the card, and the requests it received for it (replays included). */
  const payments = () => adyen.payments().filter((p) => p.storedPaymentMethodId === method);
  const requests = () =>
    adyen
      .requestBodies()
      .filter(({ body }) => (body.paymentMethod as Record<string, unknown>).storedPaymentMethodId === method);
  return { account, recovery, handle, payments, requests };
}

/** Adyen's AUTHORISATION of the payment, signed with the account's HMAC key, as its webhook delivers it. */
async function authorise(
  accountId: string,
  payment: { pspReference: string; reference: string },
  hmacKey: string,
) {
  const item = { pspReference: payment.pspReference, merchantReference: payment.reference, success: true };
  return postAdyenWebhook(stack, accountId, notification(signedItem(item, hmacKey)));
}

/** The recovery ended succeeded with the held payment, reported as found by reconciliation. */
async function expectRecovered(held: Awaited<ReturnType<typeof heldRecovery>>, pspReference: string) {
  await held.handle.result();
  const final = await held.recovery();
  expect(final).toMatchObject({ state: 'succeeded' });
  expect(final!.attempts).toEqual([
    expect.objectContaining({ outcome: 'approved', gatewayTransactionId: pspReference }),
  ]);
  expect(held.payments()).toHaveLength(1);
  const events = await stack.stores.events.list({ accountId: held.account.id, limit: 10 });
  expect(events.filter((e) => e.type.startsWith('recovery.')).map((e) => e.type)).toEqual([
    'recovery.success',
  ]);
  expect(events.find((e) => e.type === 'recovery.success')!.payload).toMatchObject({
    trigger: 'reconciliation',
  });
}

describe('a recovery whose Adyen payment is held as Received', () => {
  it("stays reconciling while no AUTHORISATION came, reading it by the PSP reference, and succeeds with it once Adyen's webhook arrives", async () => {
    const hmacKey = newHmacKey();
    const held = await heldRecovery('held', hmacKey);

    // Two hours of lookups (30 s after the charge, then backing off to hourly): each reads the PSP reference
    // the charge's answer named, and none sends the request again.
    await env.sleep('2 hours');
    const [payment, ...more] = held.payments();
    expect(more).toEqual([]);
    expect(held.requests()).toHaveLength(1);
    expect(await held.recovery()).toMatchObject({ state: 'reconciling' });

    expect(await authorise(held.account.id, payment!, hmacKey)).toEqual({ status: 200, text: '[accepted]' });
    await expectRecovered(held, payment!.pspReference);
  });

  it('whose webhook is set up only on day 8 succeeds once Adyen delivers the AUTHORISATION it queued', async () => {
    const held = await heldRecovery('held_late');

    // Past the 7 days Adyen may keep the key: the lookups still only read, and the recovery waits.
    await env.sleep('8 days');
    const [payment] = held.payments();
    expect(held.requests()).toHaveLength(1);
    expect(await held.recovery()).toMatchObject({ state: 'reconciling' });

    // The operator adds the webhook's HMAC key; Adyen delivers the AUTHORISATION it retried all along.
    const hmacKey = newHmacKey();
    await stack.stores.accounts.setGateways(held.account.id, [adyenGateway(hmacKey)]);
    expect(await authorise(held.account.id, payment!, hmacKey)).toEqual({ status: 200, text: '[accepted]' });
    await expectRecovered(held, payment!.pspReference);
  });
});
