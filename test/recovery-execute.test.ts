import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventName } from '../domain/events.js';
import type { GatewayConfig } from '../domain/settings.js';
import { eventsOf } from './support/events.js';
import { poll } from './support/poll.js';
import { call, startStack, type Stack } from './support/stack.js';

let stack: Stack;
let n = 0;
/** A fresh amount per request keeps the 5-minute velocity rule out of unrelated cases. */
const amount = () => 1000 + (n += 1);
const testGateway = (name: string, credentials: Record<string, string> = {}, test = true): GatewayConfig => ({
  name,
  kind: 'test',
  test,
  credentials,
});

const matching = (pattern: RegExp): string => expect.stringMatching(pattern) as string;

beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.close());

/** Creates an account, executes one request, and returns the answer, the status record and the events. */
async function execute(
  body: Record<string, unknown>,
  opts: { settings?: Record<string, unknown>; gateways?: GatewayConfig[]; events?: EventName[] } = {},
) {
  const account = await stack.createAccount(opts.settings, opts.gateways);
  const res = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
    key: account.apiKey,
    body: { amount: amount(), ...body },
  });
  const id = typeof res.body.transactionId === 'string' ? res.body.transactionId : '';
  const status = id
    ? await call(stack.baseUrl, 'GET', `/api/recovery/status/${id}`, { key: account.apiKey })
    : null;
  const events = await eventsOf(stack, account.account.id, opts.events ?? []);
  return {
    res,
    status,
    events: events.map((e) => e.type).sort(),
    payloads: events.map((e) => e.payload),
    account,
  };
}

describe('decline codes → HTTP answer, recorded state and events', () => {
  it.each([
    ['fraudulent', 'manual_review'],
    ['lost_card', 'request_card_update'],
    ['pickup_card', 'manual_review'],
    ['restricted_card', 'request_card_update'],
    ['stolen_card', 'manual_review'],
    ['fraud_suspected', 'manual_review'],
    ['authentication_required', 'request_card_update'],
    ['card_no_longer_chargeable', 'request_card_update'],
  ])('%s is blocked: 403 with the blocked body and recovery.blocked, no charge', async (code, action) => {
    const out = await execute(
      { paymentMethodToken: 'tok_visa', originalDeclineCode: code },
      { events: ['recovery.blocked'] },
    );
    expect(out.res.status).toBe(403);
    expect(out.res.body).toEqual({
      error: expect.any(String),
      declineCode: code,
      action: 'blocked',
      recommendedAction: action,
      recommendation: expect.any(String),
    });
    expect(out.events).toEqual(['recovery.blocked']);
    expect(out.payloads[0]).toMatchObject({
      event: 'recovery.blocked',
      declineCode: code,
      recommendedAction: action,
      paymentMethodToken: 'tok_visa',
    });
  });

  it.each(['account_closed', 'stop_payment_order', 'revocation_of_authorization'])(
    '%s is blocked as the spec names it, card_no_longer_chargeable; the status record keeps the issuer’s code',
    async (code) => {
      const out = await execute(
        { paymentMethodToken: 'tok_visa', originalDeclineCode: code },
        { events: ['recovery.blocked'] },
      );
      expect(out.res).toMatchObject({ status: 403, body: { declineCode: 'card_no_longer_chargeable' } });
      expect(out.payloads[0]).toMatchObject({
        declineCode: 'card_no_longer_chargeable',
        reason: expect.stringContaining(`(decline code ${code})`),
      });
      const [blocked] = await stack.stores.recoveries.page(out.account.account.id, { limit: 1 });
      expect(blocked).toMatchObject({ state: 'blocked', lastDeclineCode: code });
    },
  );

  it('a card blocked on an earlier recovery is blocked again for a recoverable code; the customer’s other card is not', async () => {
    const account = await stack.createAccount();
    const send = (paymentMethodToken: string, originalDeclineCode: string, idempotencyKey: string) =>
      call(stack.baseUrl, 'POST', '/api/recovery/execute', {
        key: account.apiKey,
        body: {
          paymentMethodToken,
          originalDeclineCode,
          idempotencyKey,
          amount: amount(),
          customerEmail: 'blocked-before@example.com',
        },
      });
    expect((await send('tok_lost_before', 'lost_card', 'lost-1')).status).toBe(403);

    // try_again_later is charged at once: only the risk screen keeps this card from the gateway.
    const again = await send('tok_lost_before', 'try_again_later', 'lost-2');
    expect(again.status).toBe(403);
    expect(again.body).toEqual({
      error: expect.any(String),
      declineCode: 'lost_card',
      action: 'blocked',
      recommendedAction: 'request_card_update',
      recommendation: expect.stringContaining('blocked (lost_card) on an earlier recovery'),
    });
    const doc = await stack.stores.recoveries.findByKey(account.account.id, 'lost-2');
    const status = await call(stack.baseUrl, 'GET', `/api/recovery/status/${doc?.publicId ?? ''}`, {
      key: account.apiKey,
    });
    expect(status.body).toMatchObject({ status: 'blocked', state: 'blocked', lastDeclineCode: 'lost_card' });
    const events = await poll(
      () => stack.stores.events.list({ accountId: account.account.id, limit: 200 }),
      (list) => list.filter((e) => e.type === 'recovery.blocked').length === 2,
    );
    expect(events.map((e) => e.payload)).toContainEqual(
      expect.objectContaining({
        event: 'recovery.blocked',
        declineCode: 'lost_card',
        recommendedAction: 'request_card_update',
        paymentMethodToken: 'tok_lost_before',
        amount: doc?.amount,
      }),
    );
    expect(await stack.stores.sandbox.countForToken('test', 'tok_lost_before')).toBe(0);

    const otherCard = await send('tok_other_card', 'try_again_later', 'other-1');
    expect(otherCard.status).toBe(200);
    expect(otherCard.body).toMatchObject({ success: true, strategyUsed: 'primary' });
    expect(await stack.stores.sandbox.countForToken('test', 'tok_other_card')).toBe(1);
  });

  it.each([
    'insufficient_funds',
    'do_not_honor',
    'call_issuer',
    'card_declined',
    'generic_decline',
    'some_unheard_of_code',
  ])('%s is queued for a smart-time retry: 202 with nextAttemptAt, status unknown/queued', async (code) => {
    const out = await execute({ paymentMethodToken: 'tok_visa', originalDeclineCode: code });
    expect(out.res.status).toBe(202);
    expect(out.res.body).toMatchObject({
      status: 'queued',
      transactionId: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    const at = Date.parse(String(out.res.body.nextAttemptAt));
    expect(at).toBeGreaterThan(Date.now());
    expect(String(out.res.body.message)).toContain(String(out.res.body.nextAttemptAt));
    expect(out.status?.body).toMatchObject({
      status: 'unknown',
      state: 'queued',
      nextAttemptAt: out.res.body.nextAttemptAt,
      recommendedAction: 'retry_later',
      attemptCount: 0,
    });
  });

  it('a technical decline is retried at once: 200 success through the primary, recovery.success', async () => {
    const out = await execute(
      { paymentMethodToken: 'tok_visa', originalDeclineCode: 'try_again_later' },
      { events: ['recovery.success'] },
    );
    expect(out.res.status).toBe(200);
    expect(out.res.body).toMatchObject({
      success: true,
      error: null,
      strategyUsed: 'primary',
      gatewaysAttempted: 1,
      recoveryEngineApplied: true,
      ai: { dataSource: 'static' },
    });
    const success = out.payloads[0];
    expect(out.status?.body).toMatchObject({
      status: 'succeeded',
      recovered: true,
      attemptCount: 1,
      strategyUsed: 'primary',
      attempts: [
        {
          attempt: 1,
          at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
          gateway: 'test',
          role: 'primary',
          outcome: 'approved',
          declineCode: null,
          // The id recovery.success carries as gatewayTransactionToken.
          gatewayTransactionId: success?.event === 'recovery.success' ? success.gatewayTransactionToken : '',
        },
      ],
    });
    expect(out.status?.body).not.toHaveProperty('recommendedAction');
    // recoveredAt: when the payment was collected, an ISO timestamp no earlier than the charge that did it.
    const recoveredAt = String(out.status?.body.recoveredAt);
    expect(new Date(recoveredAt).toISOString()).toBe(recoveredAt);
    const [charge] = out.status?.body.attempts as Array<{ at: string }>;
    expect(Date.parse(recoveredAt)).toBeGreaterThanOrEqual(Date.parse(charge?.at ?? ''));
    expect(out.payloads[0]).toMatchObject({
      event: 'recovery.success',
      serviceTransactionId: out.res.body.transactionId,
      strategyUsed: 'primary',
    });
  });

  it('learns from the account’s own outcomes: the next prediction is blended', async () => {
    const account = await stack.createAccount();
    const send = () =>
      call(stack.baseUrl, 'POST', '/api/recovery/execute', {
        key: account.apiKey,
        body: { paymentMethodToken: 'tok_visa', amount: amount(), originalDeclineCode: 'try_again_later' },
      });
    const first = await send();
    expect(first.body.ai).toMatchObject({ dataSource: 'static' });
    const second = await send();
    expect(second.body.ai).toMatchObject({ dataSource: 'blended' });
    expect((second.body.ai as { confidence: number }).confidence).toBeGreaterThanOrEqual(
      (first.body.ai as { confidence: number }).confidence,
    );
  });

  it('a trial conversion is attempted at once even for insufficient funds', async () => {
    const out = await execute({
      paymentMethodToken: 'tok_visa',
      originalDeclineCode: 'insufficient_funds',
      isTrialConversion: true,
    });
    expect(out.res.status).toBe(200);
    expect(out.res.body).toMatchObject({ success: true, strategyUsed: 'primary' });
  });

  it('a trial conversion declined at once is queued to a planned retry, not charged again within seconds', async () => {
    const token = `tok_decline_insufficient_funds_x${20 + amount()}`;
    const out = await execute({
      paymentMethodToken: token,
      originalDeclineCode: 'insufficient_funds',
      isTrialConversion: true,
    });
    expect(out.res.status).toBe(202);
    expect(out.res.body).toMatchObject({ status: 'queued' });
    const planned = Date.parse(String(out.res.body.nextAttemptAt));
    expect(planned - Date.now()).toBeGreaterThan(3_600_000);
    expect(await stack.stores.sandbox.countForToken('test', token)).toBe(1);
  });

  it('an expired card without an updated card fails at once: FAILED_API_ id, request_card_update, card_expired + failed events', async () => {
    const out = await execute(
      { paymentMethodToken: 'tok_decline_expired_card', originalDeclineCode: 'expired_card' },
      { events: ['recovery.failed', 'recovery.card_expired'] },
    );
    expect(out.res.status).toBe(200);
    expect(out.res.body).toMatchObject({
      success: false,
      strategyUsed: 'all_failed',
      recommendedAction: 'request_card_update',
      transactionId: expect.stringMatching(/^FAILED_API_/),
    });
    // The answer says why it failed and why the action is recommended; nothing was recovered, so no recoveredAt.
    expect(out.res.body.error).toEqual(matching(/\S/));
    expect(out.res.body.recommendedActionReason).toEqual(matching(/\S/));
    expect(out.status?.body).toMatchObject({
      status: 'failed',
      transactionId: out.res.body.transactionId,
      recovered: false,
      recoveredAt: null,
      recommendedAction: 'request_card_update',
      recommendedActionReason: matching(/\S/),
    });
    expect(out.events).toEqual(['recovery.card_expired', 'recovery.failed']);
    const failed = out.payloads.find((p) => p.event === 'recovery.failed');
    expect(failed).toMatchObject({
      serviceTransactionId: out.res.body.transactionId,
      recommendedAction: 'request_card_update',
      strategyUsed: 'all_failed',
    });
  });

  it('an expired card the account updater refreshes is charged at once with the new card', async () => {
    const out = await execute({
      paymentMethodToken: 'tok_decline_expired_card_updatable',
      originalDeclineCode: 'expired_card',
    });
    expect(out.res.status).toBe(200);
    expect(out.res.body).toMatchObject({ success: true });
  });

  it('an invalid card with no fallback fails at once with request_card_update', async () => {
    const out = await execute(
      { paymentMethodToken: 'tok_decline_incorrect_cvc', originalDeclineCode: 'incorrect_cvc' },
      { events: ['recovery.failed'] },
    );
    expect(out.res.body).toMatchObject({
      success: false,
      recommendedAction: 'request_card_update',
      gatewaysAttempted: 0,
    });
  });

  it('an invalid card falls back to the next token in order: fallback_token', async () => {
    const out = await execute({
      paymentMethodToken: 'tok_decline_incorrect_cvc',
      originalDeclineCode: 'incorrect_cvc',
      fallbackPaymentMethodTokens: ['tok_decline_do_not_honor', 'tok_visa'],
    });
    expect(out.res.status).toBe(200);
    expect(out.res.body).toMatchObject({ success: true, strategyUsed: 'fallback_token' });
    expect(out.status?.body).toMatchObject({ attemptCount: 2 });
  });

  it('a fallback token that declines last is the lastDeclineCode; the primary card still sets the recommended action', async () => {
    const out = await execute(
      {
        paymentMethodToken: 'tok_decline_incorrect_number',
        originalDeclineCode: 'incorrect_number',
        fallbackPaymentMethodTokens: ['tok_decline_do_not_honor'],
        isTrialConversion: true,
      },
      { settings: { retryPolicy: { maxAttempts: 1, maxDays: 21 } }, events: ['recovery.failed'] },
    );
    expect(out.res.body).toMatchObject({ success: false, recommendedAction: 'request_card_update' });
    expect(out.status?.body).toMatchObject({
      status: 'failed',
      attemptCount: 1,
      attempts: [{ role: 'fallback_token', outcome: 'declined', declineCode: 'do_not_honor' }],
      lastDeclineCode: 'do_not_honor',
      recommendedAction: 'request_card_update',
    });
    expect(out.payloads[0]).toMatchObject({
      event: 'recovery.failed',
      recommendedAction: 'request_card_update',
    });
  });

  it('a primary gateway that declines cascades to the backup gateway: backup_gateway, 2 gateways', async () => {
    const gateways = [testGateway('main', { declineAll: 'do_not_honor' }), testGateway('backup')];
    const out = await execute(
      { paymentMethodToken: 'tok_visa', originalDeclineCode: 'try_again_later' },
      { gateways },
    );
    expect(out.res.status).toBe(200);
    expect(out.res.body).toMatchObject({
      success: true,
      strategyUsed: 'backup_gateway',
      gatewaysAttempted: 2,
    });
    // The status record lists both charges in order: the merchant sees where each went and how it ended.
    expect(out.status?.body).toMatchObject({
      attemptCount: 2,
      attempts: [
        { attempt: 1, gateway: 'main', role: 'primary', outcome: 'declined', declineCode: 'do_not_honor' },
        { attempt: 2, gateway: 'backup', role: 'backup_gateway', outcome: 'approved', declineCode: null },
      ],
    });
  });

  it('a wallet payment goes only to gateways that charge that wallet', async () => {
    const gateways = [
      testGateway('cards-only', { wallets: '' }),
      testGateway('wallets', { wallets: 'apple_pay,google_pay' }),
    ];
    const out = await execute(
      {
        paymentMethodToken: 'tok_applepay',
        paymentMethodType: 'apple_pay',
        originalDeclineCode: 'try_again_later',
      },
      { gateways },
    );
    expect(out.res.body).toMatchObject({
      success: true,
      strategyUsed: 'backup_gateway',
      gatewaysAttempted: 1,
    });
  });

  it('a gateway timeout answers 202 unknown and reconciles before anything else', async () => {
    const out = await execute({ paymentMethodToken: 'tok_timeout', originalDeclineCode: 'try_again_later' });
    expect(out.res.status).toBe(202);
    expect(out.res.body).toMatchObject({ status: 'unknown' });
    expect(out.status?.body).toMatchObject({
      status: 'unknown',
      state: 'reconciling',
      recommendedAction: 'monitor',
    });
  });

  it('a gateway 5xx answers 202 unknown', async () => {
    const out = await execute({
      paymentMethodToken: 'tok_server_error',
      originalDeclineCode: 'try_again_later',
    });
    expect(out.res.status).toBe(202);
    expect(out.res.body).toMatchObject({ status: 'unknown' });
  });

  it('authentication required on an attempt: 403, recovery.blocked and recovery.authentication_required', async () => {
    const out = await execute(
      { paymentMethodToken: 'tok_decline_authentication_required', originalDeclineCode: 'try_again_later' },
      { events: ['recovery.blocked', 'recovery.authentication_required'] },
    );
    expect(out.res.status).toBe(403);
    expect(out.events).toEqual(['recovery.authentication_required', 'recovery.blocked']);
    expect(out.payloads.find((p) => p.event === 'recovery.authentication_required')).toMatchObject({
      customerAuthRequired: true,
      declineCode: 'authentication_required',
    });
  });
});

describe('sandbox simulation', () => {
  it.each([
    ['success', 200, { success: true, isSimulated: true }],
    ['failed', 200, { success: false, strategyUsed: 'all_failed', isSimulated: true }],
    ['blocked', 403, { action: 'blocked' }],
  ] as const)('simulateOutcome %s is honoured on a test gateway', async (simulateOutcome, status, body) => {
    const out = await execute({
      paymentMethodToken: 'tok_decline_insufficient_funds',
      originalDeclineCode: 'try_again_later',
      simulateOutcome,
    });
    expect(out.res.status).toBe(status);
    expect(out.res.body).toMatchObject(body);
  });

  it('a simulated block is not remembered: the same card recovers on the next request', async () => {
    const out = await execute({
      paymentMethodToken: 'tok_visa',
      originalDeclineCode: 'try_again_later',
      simulateOutcome: 'blocked',
    });
    expect(out.res.status).toBe(403);
    const next = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: out.account.apiKey,
      body: { amount: amount(), paymentMethodToken: 'tok_visa', originalDeclineCode: 'try_again_later' },
    });
    expect(next.status).toBe(200);
    expect(next.body).toMatchObject({ success: true });
  });

  it('simulateOutcome is silently ignored when the primary gateway is not a test gateway', async () => {
    const out = await execute(
      { paymentMethodToken: 'tok_visa', originalDeclineCode: 'try_again_later', simulateOutcome: 'blocked' },
      { gateways: [testGateway('live', {}, false)] },
    );
    expect(out.res.status).toBe(200);
    expect(out.res.body).toMatchObject({ success: true });
    expect(out.res.body).not.toHaveProperty('isSimulated');
  });

  // A trial conversion is charged at once; the card declines with the code, and that one attempt is the
  // account's whole budget: a final failure at once. recovery.3ds_recommended is sent after
  // recovery.failed, so the events are read once the recovery's workflow has ended.
  const failureFrom = async (cardOrigin: string | undefined, code: string, events: EventName[]) => {
    const out = await execute(
      {
        paymentMethodToken: `tok_decline_${code}`,
        ...(cardOrigin === undefined ? {} : { cardOrigin }),
        originalDeclineCode: code,
        isTrialConversion: true,
      },
      { events, settings: { retryPolicy: { maxAttempts: 1, maxDays: 21 } } },
    );
    const accountId = out.account.account.id;
    const id = String(out.res.body.transactionId).replace(/^FAILED_API_/, '');
    const doc = await stack.stores.recoveries.find(accountId, id);
    await stack.temporal.workflow.getHandle(doc!.workflowId).result();
    const all = await stack.stores.events.list({ accountId, limit: 200 });
    return { ...out, events: all.map((e) => e.type).sort(), payloads: all.map((e) => e.payload) };
  };
  const europeanFailure = (code: string, events: EventName[]) => failureFrom('DE', code, events);

  it('an issuer’s soft decline from a European issuer also recommends 3-D Secure', async () => {
    const out = await europeanFailure('do_not_honor', ['recovery.failed', 'recovery.3ds_recommended']);
    expect(out.events).toEqual(['recovery.3ds_recommended', 'recovery.failed']);
    expect(out.payloads.find((p) => p.event === 'recovery.3ds_recommended')).toMatchObject({
      paymentMethodToken: 'tok_decline_do_not_honor',
      declineCode: 'do_not_honor',
    });
  });

  it.each([
    ['a US issuer', 'US'],
    ['an issuer of unknown country', undefined],
  ])(
    'the same soft decline from %s recommends no 3-D Secure: the issuer is outside the SCA region',
    async (_, cardOrigin) => {
      const out = await failureFrom(cardOrigin, 'do_not_honor', ['recovery.failed']);
      expect(out.res.body).toMatchObject({ success: false });
      expect(out.events).toEqual(['recovery.failed']);
    },
  );

  it.each(['insufficient_funds', 'try_again_later', 'duplicate_transaction'])(
    'a European %s failure recommends no 3-D Secure: authentication would not clear it',
    async (code) => {
      const out = await europeanFailure(code, ['recovery.failed']);
      expect(out.res.body).toMatchObject({ success: false });
      expect(out.events).toEqual(['recovery.failed']);
    },
  );

  it('a fallback card the issuer blocks is dropped and remembered as itself, not as the payment’s card', async () => {
    const account = await stack.createAccount({ retryPolicy: { maxAttempts: 2, maxDays: 21 } });
    const send = (paymentMethodToken: string, body: Record<string, unknown> = {}) =>
      call(stack.baseUrl, 'POST', '/api/recovery/execute', {
        key: account.apiKey,
        body: { paymentMethodToken, originalDeclineCode: 'do_not_honor', amount: amount(), ...body },
      });
    // Other tests charge the same sandbox token: its charges are counted from here.
    const own = () => stack.stores.sandbox.countForToken('test', 'tok_decline_do_not_honor');
    const ownBefore = await own();
    // A trial conversion's first attempts go at once, and here are its whole budget: the primary, then its
    // lost backup card.
    const trial = await send('tok_decline_do_not_honor', {
      fallbackPaymentMethodTokens: ['tok_decline_lost_card'],
      isTrialConversion: true,
    });
    expect(trial.status).toBe(200);
    expect(trial.body).toMatchObject({ success: false, strategyUsed: 'all_failed' });
    expect(await stack.stores.sandbox.countForToken('test', 'tok_decline_lost_card')).toBe(1);
    expect((await own()) - ownBefore).toBe(1);
    const status = await call(
      stack.baseUrl,
      'GET',
      `/api/recovery/status/${String(trial.body.transactionId)}`,
      {
        key: account.apiKey,
      },
    );
    expect(status.body).toMatchObject({ status: 'failed', lastDeclineCode: 'lost_card' });

    // The lost card is refused from now on; the payment's own card is not.
    const lost = await send('tok_decline_lost_card', { originalDeclineCode: 'try_again_later' });
    expect(lost.status).toBe(403);
    expect(lost.body).toMatchObject({ declineCode: 'lost_card', action: 'blocked' });
    const ownCard = await send('tok_decline_do_not_honor', { originalDeclineCode: 'try_again_later' });
    expect(ownCard.status).not.toBe(403);
    // Nor is the lost card charged as another payment's fallback card (the payment's own card is).
    const backup = await send('tok_decline_do_not_honor', {
      fallbackPaymentMethodTokens: ['tok_decline_lost_card'],
      isTrialConversion: true,
    });
    expect([200, 202]).toContain(backup.status);
    expect((await own()) - ownBefore).toBeGreaterThanOrEqual(3);
    expect(await stack.stores.sandbox.countForToken('test', 'tok_decline_lost_card')).toBe(1);
  });
});

describe('Proof Mode', () => {
  it('puts a random, customer-sticky share in the control group: 200 holdout, no charge, recovery.holdout', async () => {
    const account = await stack.createAccount({ proofMode: { enabled: true, controlPercent: 50 } });
    const first: boolean[] = [];
    for (let i = 0; i < 16; i += 1) {
      const res = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
        key: account.apiKey,
        body: {
          paymentMethodToken: 'tok_visa',
          amount: amount(),
          originalDeclineCode: 'try_again_later',
          customerEmail: `c${i}@example.com`,
        },
      });
      first.push(res.body.holdout === true);
      if (res.body.holdout === true) {
        expect(res.body).toMatchObject({ success: false, strategyUsed: 'holdout', gatewaysAttempted: 0 });
        // A failure names its reason (the spec: `error` is null on success only).
        expect(res.body.error).toBe('Proof Mode control group: no recovery attempt was made');
        const status = await call(
          stack.baseUrl,
          'GET',
          `/api/recovery/status/${String(res.body.transactionId)}`,
          { key: account.apiKey },
        );
        expect(status.body).toMatchObject({
          status: 'failed',
          state: 'holdout',
          holdout: true,
          recovered: false,
          strategyUsed: 'holdout',
          attemptCount: 0,
        });
      }
    }
    expect(first.filter(Boolean).length).toBeGreaterThan(0);
    expect(first.filter(Boolean).length).toBeLessThan(16);
    for (let i = 0; i < 16; i += 1) {
      const res = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
        key: account.apiKey,
        body: {
          paymentMethodToken: 'tok_visa',
          amount: amount(),
          originalDeclineCode: 'try_again_later',
          customerEmail: `c${i}@example.com`,
        },
      });
      expect(res.body.holdout === true).toBe(first[i]);
    }
    const events = await eventsOf(stack, account.account.id, ['recovery.holdout']);
    expect(events.filter((e) => e.type === 'recovery.holdout').length).toBeGreaterThan(0);
  });
});
