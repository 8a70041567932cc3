import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { screenActivities } from '../activities/recovery-screen.js';
import { RecoveryRequest } from '../domain/recovery-request.js';
import type { GatewayConfig } from '../domain/settings.js';
import { activityDeps, call, startStack, type Stack } from './support/stack.js';

// Execute rules of the spec and decisions.md that no other test pinned: fallback tokens after hard
// cardholder-state declines, Proof Mode's controlPercent and its stickiness by token, and the order of the
// idempotency and velocity checks.

let stack: Stack;
let n = 0;
/** A fresh amount per request keeps the 5-minute velocity rule out of unrelated cases. */
const amount = () => 3000 + (n += 1);

/** A test gateway under a name no other test file charges: its sandbox counts are this file's alone. */
const gateway = (name: string): GatewayConfig => ({ name, kind: 'test', test: true, credentials: {} });

const execute = (key: string, body: Record<string, unknown>) =>
  call(stack.baseUrl, 'POST', '/api/recovery/execute', { key, body: { amount: amount(), ...body } });

/**
 * Geographic routing (spec: cardOrigin "used for geographic routing"): a card issued in a country a gateway
 * acquires locally goes to that gateway first; any other card keeps the account's order.
 */
describe('geographic routing by cardOrigin', () => {
  const gateways: GatewayConfig[] = [gateway('geo-us'), { ...gateway('geo-eu'), countries: ['DE', 'AT'] }];
  it.each([
    ['de', 'geo-eu', 'backup_gateway'],
    ['US', 'geo-us', 'primary'],
    [undefined, 'geo-us', 'primary'],
  ] as const)('a card issued in %s is charged through %s (%s)', async (cardOrigin, through, strategy) => {
    const { apiKey } = await stack.createAccount({}, gateways);
    const res = await execute(apiKey, {
      paymentMethodToken: 'tok_visa',
      originalDeclineCode: 'try_again_later',
      ...(cardOrigin ? { cardOrigin } : {}),
    });
    expect(res.body).toMatchObject({ success: true, strategyUsed: strategy });
    const status = await call(
      stack.baseUrl,
      'GET',
      `/api/recovery/status/${String(res.body.transactionId)}`,
      {
        key: apiKey,
      },
    );
    expect(status.body).toMatchObject({ attempts: [{ gateway: through, outcome: 'approved' }] });
  });
});

beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.close());

describe('fallback tokens are never tried after a hard cardholder-state decline (spec, decisions)', () => {
  it.each([
    // [case, primary token, originalDeclineCode, HTTP status, recommendedAction, primary charges]
    ['expired at intake', 'tok_decline_expired_card', 'expired_card', 200, 'request_card_update', 0],
    ['expired on the retry', 'tok_decline_expired_card', 'try_again_later', 200, 'request_card_update', 1],
    ['lost at intake', 'tok_gaps_lost_primary', 'lost_card', 403, 'request_card_update', 0],
    ['lost on the retry', 'tok_decline_lost_card', 'try_again_later', 403, 'request_card_update', 1],
    ['stolen on the retry', 'tok_decline_stolen_card', 'try_again_later', 403, 'manual_review', 1],
    ['fraudulent on the retry', 'tok_decline_fraudulent', 'try_again_later', 403, 'manual_review', 1],
  ])('%s: the approving fallback card is not charged', async (name, token, code, status, action, charges) => {
    // A gateway and an approving fallback card of this case alone: charging the card would recover it.
    const slug = name.replace(/\W/g, '_');
    const gw = `gaps-${slug}`;
    const { apiKey } = await stack.createAccount({}, [gateway(gw)]);
    const fallback = `tok_gaps_fallback_${slug}`;
    const res = await execute(apiKey, {
      paymentMethodToken: token,
      originalDeclineCode: code,
      fallbackPaymentMethodTokens: [fallback],
    });
    expect(res.status).toBe(status);
    expect(res.body).toMatchObject({ recommendedAction: action });
    if (status === 200)
      expect(res.body).toMatchObject({
        success: false,
        strategyUsed: 'all_failed',
        transactionId: expect.stringMatching(/^FAILED_API_/) as string,
      });
    else expect(res.body).toMatchObject({ action: 'blocked' });
    expect(await stack.stores.sandbox.countForToken(gw, fallback)).toBe(0);
    expect(await stack.stores.sandbox.countForToken(gw, token)).toBe(charges);
  });

  it('a recoverable decline of the primary does go on to the same fallback card (the control case)', async () => {
    const gw = 'gaps-recoverable';
    const { apiKey } = await stack.createAccount({}, [gateway(gw)]);
    const fallback = 'tok_gaps_fallback_recoverable';
    const res = await execute(apiKey, {
      paymentMethodToken: 'tok_decline_incorrect_cvc',
      originalDeclineCode: 'incorrect_cvc',
      fallbackPaymentMethodTokens: [fallback],
    });
    expect(res.body).toMatchObject({ success: true, strategyUsed: 'fallback_token' });
    expect(await stack.stores.sandbox.countForToken(gw, fallback)).toBe(1);
  });
});

/**
 * Screens a new recovery of the account (a card declined do_not_honor, `request` on top) with the activity
 * the workflow runs, at `now`: what the workflow would learn, without a workflow.
 */
const screenOf = (accountId: string, request: Record<string, unknown>, now = Date.now()) =>
  screenActivities(activityDeps(stack)).screenRecovery({
    accountId,
    transactionId: randomUUID(),
    request: RecoveryRequest.parse({
      paymentMethodToken: 'tok_visa',
      amount: 1000,
      originalDeclineCode: 'do_not_honor',
      ...request,
    }),
    now,
  });

describe('Proof Mode: controlPercent and stickiness (decisions: random, sticky per email else token)', () => {
  /**
   * Draws `customers` new customers into Proof Mode groups with the screen activity the workflow runs (the
   * draw itself, without a workflow per request) and returns how many fell in the control group.
   */
  async function controlsAmong(controlPercent: number, customers: number): Promise<number> {
    const { account } = await stack.createAccount({ proofMode: { enabled: true, controlPercent } });
    let controls = 0;
    for (let batch = 0; batch < customers; batch += 20) {
      const screens = await Promise.all(
        Array.from({ length: Math.min(20, customers - batch) }, (_, i) =>
          screenOf(account.id, { customerEmail: `c${batch + i}@proof.example.com` }),
        ),
      );
      controls += screens.filter((s) => s.holdout).length;
    }
    return controls;
  }

  it.each([
    // Binomial(200, p): the bounds are about 4 standard deviations either side of the mean, so a correct
    // draw fails them about once in ten thousand runs; 0 %, 10 % or 50 % in their place fails them.
    [5, 1, 25],
    [25, 26, 75],
  ])('controlPercent %i puts that share of 200 customers in the control group', async (percent, min, max) => {
    const controls = await controlsAmong(percent, 200);
    expect(controls).toBeGreaterThanOrEqual(min);
    expect(controls).toBeLessThanOrEqual(max);
  });

  it('a request without customerEmail is drawn by its token: the same card lands in the same group again', async () => {
    const { apiKey } = await stack.createAccount({ proofMode: { enabled: true, controlPercent: 50 } });
    const first: boolean[] = [];
    const again: boolean[] = [];
    // Twelve cards, each sent twice (another amount, so the velocity rule does not refuse the second).
    for (const round of [first, again])
      for (let i = 0; i < 12; i += 1) {
        const res = await execute(apiKey, {
          paymentMethodToken: `tok_gaps_proof_${i}`,
          originalDeclineCode: 'try_again_later',
        });
        expect(res.status).toBe(200);
        round.push(res.body.holdout === true);
        if (res.body.holdout === true)
          expect(res.body).toMatchObject({ success: false, strategyUsed: 'holdout', gatewaysAttempted: 0 });
      }
    expect(again).toEqual(first);
    // Drawn per card, not once for every request without an email (chance of failing: 2 in 4096).
    expect(first).toContain(true);
    expect(first).toContain(false);
    // A control card was never charged; a treated one was charged on each of its two recoveries.
    for (const [i, control] of first.entries())
      expect(await stack.stores.sandbox.countForToken('test', `tok_gaps_proof_${i}`)).toBe(control ? 0 : 2);
  });
});

describe('idempotency is checked before velocity (decisions: order of checks)', () => {
  it('a reused key on a request that would also break the velocity rule names the key’s recovery', async () => {
    const { apiKey } = await stack.createAccount({}, [gateway('gaps-order')]);
    const idempotencyKey = `order-${randomUUID()}`;
    const a = await execute(apiKey, {
      paymentMethodToken: 'tok_gaps_order_x',
      amount: 1000,
      originalDeclineCode: 'try_again_later',
      idempotencyKey,
    });
    const b = await execute(apiKey, {
      paymentMethodToken: 'tok_gaps_order_y',
      amount: 2000,
      originalDeclineCode: 'try_again_later',
    });
    expect(a.body).toMatchObject({ success: true });
    expect(b.body).toMatchObject({ success: true });
    expect(b.body.transactionId).not.toBe(a.body.transactionId);

    // Card Y and 2000 again (B's velocity claim) with A's key: the key decides, so the 409 names A.
    const c = await execute(apiKey, {
      paymentMethodToken: 'tok_gaps_order_y',
      amount: 2000,
      originalDeclineCode: 'try_again_later',
      idempotencyKey,
    });
    expect(c.status).toBe(409);
    expect(c.body).toMatchObject({
      existingTransactionId: a.body.transactionId,
      existingStatus: 'succeeded',
      existingRecovered: true,
    });
    expect(await stack.stores.sandbox.countForToken('gaps-order', 'tok_gaps_order_y')).toBe(1);
    expect(await stack.stores.sandbox.countForToken('gaps-order', 'tok_gaps_order_x')).toBe(1);
  });
});

describe('the screen reads the customer’s clock through the longest the recovery may run', () => {
  const screenAt = async (settings: Record<string, unknown>, now: string, cardOrigin?: string) => {
    const { account } = await stack.createAccount(settings);
    return screenOf(account.id, cardOrigin ? { cardOrigin } : {}, Date.parse(now));
  };

  it('gives the offset at intake and its daylight saving changes within retryPolicy.maxDays (and a day)', async () => {
    const newYork = await screenAt({ timezone: 'America/New_York' }, '2026-03-01T12:00:00Z');
    expect(newYork).toMatchObject({
      offsetMinutes: -300,
      offsetChanges: [{ at: Date.parse('2026-03-08T07:00:00Z'), offsetMinutes: -240 }],
    });
    // A card issued in Germany is on Berlin's clock; a 7-day window ends before Berlin's change.
    const short = { timezone: 'America/New_York', retryPolicy: { maxAttempts: 4, maxDays: 7 } };
    expect(await screenAt(short, '2026-03-20T00:00:00Z', 'DE')).toMatchObject({
      offsetMinutes: 60,
      offsetChanges: [],
    });
    expect(await screenAt({}, '2026-03-20T00:00:00Z', 'DE')).toMatchObject({
      offsetMinutes: 60,
      offsetChanges: [{ at: Date.parse('2026-03-29T01:00:00Z'), offsetMinutes: 120 }],
    });
  });
});
