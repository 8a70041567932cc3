import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureAtOnceFrom } from '../activities/gateways/adyen.js';
import { createActivities } from '../activities/index.js';
import { startAdyenEmulator, type AdyenEmulator, type EmulatedAnswer } from './support/adyen-emulator.js';
import { attemptOf } from './support/attempts.js';
import { activityDeps, call, startStack, type Stack } from './support/stack.js';

let stack: Stack;
let adyen: AdyenEmulator;
let n = 0;

beforeAll(async () => {
  [stack, adyen] = await Promise.all([startStack(), startAdyenEmulator()]);
});
afterAll(async () => {
  await stack.close();
  await adyen.close();
});

/** An account whose primary gateway is Adyen (the emulator), and one execute of a stored card. */
async function executeOnAdyen(
  answers: EmulatedAnswer[],
  originalDeclineCode: string,
  idempotencyKey?: string,
) {
  n += 1;
  adyen.addStoredMethod(`stored${n}`, {
    merchantAccount: 'AcmeEU',
    shopperReference: `shopper${n}`,
    answers,
  });
  const account = await stack.createAccount({}, [
    { name: 'adyen', kind: 'adyen', test: false, credentials: adyen.credentials },
  ]);
  const res = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
    key: account.apiKey,
    body: {
      paymentMethodToken: `AcmeEU|stored${n}|shopper${n}`,
      amount: 4900,
      currency: 'eur',
      originalDeclineCode,
      ...(idempotencyKey ? { idempotencyKey } : {}),
    },
  });
  const id = String(res.body.transactionId);
  const status = await call(stack.baseUrl, 'GET', `/api/recovery/status/${id}`, { key: account.apiKey });
  const record = await stack.stores.recoveries.find(account.account.id, id);
  const payments = adyen.payments().filter((p) => p.storedPaymentMethodId === `stored${n}`);
  return { res, status, record, payments };
}

describe('a recovery on an account whose gateway is Adyen', () => {
  it('a technical decline is charged at once through Adyen: 200 success with the PSP reference', async () => {
    const out = await executeOnAdyen(['approve'], 'processing_error');
    expect(out.res.status).toBe(200);
    expect(out.res.body).toMatchObject({ success: true, strategyUsed: 'primary' });
    expect(out.payments).toHaveLength(1);
    const [payment] = out.payments;
    expect(payment).toMatchObject({
      amount: { value: 4900, currency: 'EUR' },
      shopperInteraction: 'ContAuth',
    });
    // Recoup's public URL is the return URL Adyen requires. The attempt's key (77 characters) is the
    // reference, and its SHA-256 the Idempotency-Key (Adyen takes 64 characters).
    expect(payment!.returnUrl).toBe(stack.baseUrl);
    expect(payment!.reference).toBe(`${out.record!.workflowId}/1`);
    expect(payment!.reference).toHaveLength(77);
    expect(payment!.idempotencyKey).toMatch(/^[0-9a-f]{64}$/);
    expect(out.record?.attempts).toEqual([
      expect.objectContaining({
        outcome: 'approved',
        gateway: 'adyen',
        gatewayTransactionId: payment!.pspReference,
      }),
    ]);
  });

  it("a merchant's long idempotency key (an attempt key over 80 characters) is charged once, under its SHA-256", async () => {
    const out = await executeOnAdyen(['approve'], 'processing_error', `invoice-${'acme-annual-'.repeat(10)}`);
    expect(out.res.status).toBe(200);
    expect(out.res.body).toMatchObject({ success: true });
    expect(out.payments).toHaveLength(1);
    expect(out.payments[0]!.reference).toMatch(/^[0-9a-f]{64}$/);
    expect(out.payments[0]!.idempotencyKey).toBe(out.payments[0]!.reference);
  });

  it('a merchant idempotency key no HTTP header carries (inv-€-✓) is charged once: the key is the reference, its SHA-256 the Idempotency-Key', async () => {
    const out = await executeOnAdyen(['approve'], 'processing_error', `inv-€-✓-${n + 1}`);
    expect(out.res.status).toBe(200);
    expect(out.res.body).toMatchObject({ success: true });
    expect(out.payments).toHaveLength(1);
    expect(out.payments[0]!.reference).toBe(`${out.record!.workflowId}/1`);
    expect(out.payments[0]!.reference).toContain('inv-€-✓');
    expect(out.payments[0]!.idempotencyKey).toMatch(/^[0-9a-f]{64}$/);
  });

  it("Adyen's refusal becomes the recovery's decline: Not enough balance queues a smart retry", async () => {
    const out = await executeOnAdyen([{ refuse: 'Not enough balance' }], 'processing_error');
    expect(out.res.status).toBe(202);
    expect(out.res.body).toMatchObject({ status: 'queued', nextAttemptAt: expect.any(String) });
    expect(out.payments).toHaveLength(1);
    expect(out.status.body).toMatchObject({ state: 'queued', lastDeclineCode: 'insufficient_funds' });
  });
});

describe('an Adyen attempt first sent before payments were captured at once', () => {
  it('is looked up, by a worker that sent it again after the change, with the request first sent', async () => {
    n += 1;
    adyen.addStoredMethod(`stored${n}`, {
      merchantAccount: 'AcmeManual',
      shopperReference: `shopper${n}`,
      answers: ['lost'],
    });
    const { account } = await stack.createAccount({}, [
      { name: 'adyen', kind: 'adyen', test: false, credentials: adyen.credentials },
    ]);
    const hour = 60 * 60 * 1000;
    let now = captureAtOnceFrom - hour;
    const activities = createActivities({ ...activityDeps(stack), clock: () => new Date(now) });
    const option = { gateway: 'adyen', token: `AcmeManual|stored${n}|shopper${n}`, role: 'primary' } as const;
    const attempt = attemptOf(account.id, option, { amount: 4900, currency: 'EUR', now });
    // The payment is made, its answer lost.
    expect((await activities.attemptCharge(attempt)).kind).toBe('ambiguous');
    // A worker that replayed the workflow sent the attempt again after the change; its lookup follows.
    now = captureAtOnceFrom + hour;
    const { accountId, transactionId, attemptKey, attemptNo, amount, currency, fromCode } = attempt;
    const resolved = await activities.resolveCharge({
      accountId,
      transactionId,
      attemptKey,
      attemptNo,
      option,
      amount,
      currency,
      fromCode,
      offsetMinutes: 0,
      sentAt: now,
    });
    expect(resolved).toMatchObject({ kind: 'approved' });
    const bodies = adyen.requestBodies().filter((r) => r.body.reference === attemptKey);
    expect(bodies).toHaveLength(2);
    for (const { body } of bodies) expect(body).not.toHaveProperty('captureDelayHours');
  });
});
