import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdyenEmulator, type AdyenEmulator } from './support/adyen-emulator.js';
import { newHmacKey, notification, postAdyenWebhook, signedItem } from './support/adyen-webhook.js';
import { call, type Stack } from './support/stack.js';
import { stackOnTimeSkipping, startTimeSkipping } from './support/time-skipping.js';

// The whole service on Temporal's time-skipping server: hours of lookups run in seconds.

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

describe('a recovery whose Adyen payment is held as Received', () => {
  it("stays reconciling while every replay answers Received, and succeeds with the PSP reference once Adyen's AUTHORISATION webhook arrives", async () => {
    adyen.addStoredMethod('held', {
      merchantAccount: 'AcmeECOM',
      shopperReference: 'shopper_held',
      answers: ['received'],
    });
    const hmacKey = newHmacKey();
    const { apiKey, account } = await stack.createAccount({}, [
      { name: 'adyen', kind: 'adyen', test: false, credentials: { ...adyen.credentials, hmacKey } },
    ]);
    const answer = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: apiKey,
      body: {
        paymentMethodToken: 'AcmeECOM|held|shopper_held',
        amount: 4900,
        currency: 'eur',
        originalDeclineCode: 'try_again_later',
      },
    });
    expect(answer).toMatchObject({ status: 202, body: { status: 'unknown' } });
    const transactionId = String(answer.body.transactionId);
    const recovery = () => stack.stores.recoveries.find(account.id, transactionId);
    const handle = env.client.workflow.getHandle((await recovery())!.workflowId);

    // Two hours of lookups (30 s after the charge, then backing off to hourly): each replay answers Received.
    await env.sleep('2 hours');
    const [payment, ...more] = adyen.payments().filter((p) => p.storedPaymentMethodId === 'held');
    expect(more).toEqual([]);
    expect(adyen.requests()).toBeGreaterThan(3);
    expect(await recovery()).toMatchObject({ state: 'reconciling' });

    const delivered = await postAdyenWebhook(
      stack,
      account.id,
      notification(
        signedItem(
          { pspReference: payment!.pspReference, merchantReference: payment!.reference, success: true },
          hmacKey,
        ),
      ),
    );
    expect(delivered).toEqual({ status: 200, text: '[accepted]' });

    await handle.result();
    const final = await recovery();
    expect(final).toMatchObject({ state: 'succeeded' });
    expect(final!.attempts).toEqual([
      expect.objectContaining({ outcome: 'approved', gatewayTransactionId: payment!.pspReference }),
    ]);
    expect(adyen.payments().filter((p) => p.storedPaymentMethodId === 'held')).toHaveLength(1);
    const events = await stack.stores.events.list({ accountId: account.id, limit: 10 });
    expect(events.filter((e) => e.type.startsWith('recovery.')).map((e) => e.type)).toEqual([
      'recovery.success',
    ]);
    expect(events.find((e) => e.type === 'recovery.success')!.payload).toMatchObject({
      trigger: 'reconciliation',
    });
  });
});
