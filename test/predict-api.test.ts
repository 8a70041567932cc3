import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventsOf } from './support/events.js';
import { poll } from './support/poll.js';
import { call, startStack, type Stack } from './support/stack.js';
import { startReceiver } from './support/webhook-receiver.js';

let stack: Stack;
let n = 0;
const amount = () => 3000 + (n += 1);

beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.close());

async function predict(apiKey: string, body: Record<string, unknown>) {
  return call(stack.baseUrl, 'POST', '/api/predict/risk', { key: apiKey, body: { amount: 1999, ...body } });
}
async function report(apiKey: string, body: Record<string, unknown>) {
  return call(stack.baseUrl, 'POST', '/api/predict/outcome', { key: apiKey, body });
}
const prediction = (res: Awaited<ReturnType<typeof predict>>) =>
  res.body.prediction as {
    predictionId: string;
    riskScore: number;
    recommendation: string;
    factors: Array<{ factor: string }>;
  };

describe('POST /api/predict/risk', () => {
  it('answers a prediction in the vendor’s shape, and no webhook below the alert threshold', async () => {
    const { apiKey, account } = await stack.createAccount();
    const res = await predict(apiKey, { paymentMethodToken: 'tok_visa', scheduledDate: '2026-12-09' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      prediction: {
        predictionId: expect.stringMatching(/^pred_[0-9a-f]{32}$/),
        riskScore: 8,
        confidence: expect.any(Number),
        reasoning: expect.stringContaining('8% chance of failure'),
        factors: [],
        recommendation: 'proceed',
      },
    });
    expect((await stack.stores.events.list({ accountId: account.id })).map((e) => e.type)).toEqual([]);
  });

  it('a card that expires before the scheduled date is blocked, and predict.risk.high is sent', async () => {
    const { apiKey, account } = await stack.createAccount();
    const res = await predict(apiKey, {
      paymentMethodToken: 'tok_visa',
      scheduledDate: '2027-03-01T10:00:00Z',
      expiryMonth: 2,
      expiryYear: 2027,
    });
    expect(prediction(res)).toMatchObject({ riskScore: 99, recommendation: 'block' });
    const events = await eventsOf(stack, account.id, ['predict.risk.high']);
    expect(events.map((e) => e.payload)).toEqual([
      expect.objectContaining({
        event: 'predict.risk.high',
        paymentMethodToken: 'tok_visa',
        riskScore: 99,
        amount: 1999,
        reasoning: expect.stringContaining('expires'),
      }),
    ]);
    // The same card through the end of its expiry month is fine.
    const valid = await predict(apiKey, {
      paymentMethodToken: 'tok_visa',
      scheduledDate: '2027-02-27',
      expiryMonth: 2,
      expiryYear: 2027,
    });
    expect(prediction(valid).recommendation).not.toBe('block');
  });

  it('a card with a recovery waiting for a retry, and a customer behind on it, are what Recoup knows', async () => {
    const { apiKey } = await stack.createAccount();
    const queued = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: apiKey,
      body: {
        paymentMethodToken: 'tok_decline_insufficient_funds',
        amount: amount(),
        originalDeclineCode: 'insufficient_funds',
        customerEmail: 'pat@example.com',
      },
    });
    expect(queued.status).toBe(202);
    const sameCard = await predict(apiKey, {
      paymentMethodToken: 'tok_decline_insufficient_funds',
      scheduledDate: '2026-12-09',
    });
    expect(prediction(sameCard)).toMatchObject({ riskScore: 80, recommendation: 'delay' });
    expect(prediction(sameCard).factors.map((f) => f.factor)).toEqual(['card_failing_now']);
    const otherCard = await predict(apiKey, {
      paymentMethodToken: 'tok_visa_new',
      customerEmail: 'PAT@example.com',
      scheduledDate: '2026-12-09',
    });
    expect(prediction(otherCard).factors.map((f) => f.factor)).toEqual(['customer_past_due']);

    // Stopped as no longer owed (subscription cancelled): the customer owes nothing on it any more.
    const stop = await call(stack.baseUrl, 'POST', '/api/recovery/stop', {
      key: apiKey,
      body: { transactionId: queued.body.transactionId, reason: 'not_owed' },
    });
    expect(stop.status).toBe(200);
    const afterStop = await predict(apiKey, {
      paymentMethodToken: 'tok_visa_new',
      customerEmail: 'pat@example.com',
      scheduledDate: '2026-12-09',
    });
    expect(prediction(afterStop).factors).toEqual([]);
  });

  it('a card whose recovery ended unpaid is failing still, until its payment is settled', async () => {
    const { apiKey } = await stack.createAccount({ retryPolicy: { maxAttempts: 1 } });
    const token = 'tok_decline_insufficient_funds';
    const failed = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: apiKey,
      // A technical failure is retried at once: the one attempt spends the budget.
      body: { paymentMethodToken: token, amount: amount(), originalDeclineCode: 'try_again_later' },
    });
    expect(failed).toMatchObject({ status: 200, body: { success: false } });
    const sameCard = () => predict(apiKey, { paymentMethodToken: token, scheduledDate: '2026-12-09' });
    const before = prediction(await sameCard());
    expect(before).toMatchObject({ riskScore: 80, recommendation: 'delay' });
    expect(before.factors).toEqual([
      expect.objectContaining({
        factor: 'card_failing_now',
        description: expect.stringContaining('insufficient_funds'),
      }),
    ]);
    // Written off as no longer owed: the card has nothing failing any more.
    const stop = await call(stack.baseUrl, 'POST', '/api/recovery/stop', {
      key: apiKey,
      body: { transactionId: failed.body.transactionId, reason: 'not_owed' },
    });
    expect(stop.status).toBe(200);
    expect(prediction(await sameCard()).factors).toEqual([]);
  });

  it('a card blocked (lost_card) on an earlier recovery is blocked, as the recovery’s own risk screen would block it', async () => {
    // Mastercard's stop advice, the other memory both share, is tested in card-network-recoveries.test.ts.
    const { apiKey } = await stack.createAccount();
    const token = 'tok_decline_lost_card';
    const earlier = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: apiKey,
      body: { paymentMethodToken: token, amount: amount(), originalDeclineCode: 'try_again_later' },
    });
    expect(earlier.status).toBe(403);
    const res = await predict(apiKey, { paymentMethodToken: token, scheduledDate: '2026-12-09' });
    expect(prediction(res)).toMatchObject({ riskScore: 99, recommendation: 'block' });
    expect(prediction(res).factors.map((f) => f.factor)).toEqual(['card_blocked_before']);
    // Another card of the account is not.
    const other = await predict(apiKey, { paymentMethodToken: 'tok_visa', scheduledDate: '2026-12-09' });
    expect(prediction(other).recommendation).toBe('proceed');
  });

  it("the account's riskAlertThreshold decides delay and the predict.risk.high webhook", async () => {
    const { apiKey, account } = await stack.createAccount({ riskAlertThreshold: 5 });
    const res = await predict(apiKey, { paymentMethodToken: 'tok_visa', scheduledDate: '2026-12-09' });
    expect(prediction(res)).toMatchObject({ riskScore: 8, recommendation: 'delay' });
    const events = await eventsOf(stack, account.id, ['predict.risk.high']);
    expect(events.map((e) => e.payload)).toEqual([expect.objectContaining({ riskScore: 8 })]);
  });

  it('a risk score exactly at riskAlertThreshold is high (delay, predict.risk.high); just below it is not', async () => {
    const at = await stack.createAccount({ riskAlertThreshold: 8 });
    const res = await predict(at.apiKey, { paymentMethodToken: 'tok_visa', scheduledDate: '2026-12-09' });
    expect(prediction(res)).toMatchObject({ riskScore: 8, recommendation: 'delay' });
    const events = await eventsOf(stack, at.account.id, ['predict.risk.high']);
    expect(events.map((e) => e.payload)).toEqual([expect.objectContaining({ riskScore: 8 })]);

    const above = await stack.createAccount({ riskAlertThreshold: 8.1 });
    const below = await predict(above.apiKey, {
      paymentMethodToken: 'tok_visa',
      scheduledDate: '2026-12-09',
    });
    expect(prediction(below)).toMatchObject({ riskScore: 8, recommendation: 'proceed' });
    expect(await stack.stores.events.list({ accountId: above.account.id })).toEqual([]);
  });

  it("reads the hour on the customer's clock: the card's country, else the account's time zone", async () => {
    const { apiKey } = await stack.createAccount({ timezone: 'America/New_York' });
    const at = '2026-12-09T02:30:00Z';
    const berlin = await predict(apiKey, {
      paymentMethodToken: 'tok_visa',
      scheduledDate: at,
      cardOrigin: 'de',
    });
    const newYork = await predict(apiKey, { paymentMethodToken: 'tok_visa', scheduledDate: at });
    expect(prediction(berlin).factors.map((f) => f.factor)).toEqual(['night_hour']);
    expect(prediction(newYork).factors).toEqual([]);
  });

  it.each([
    [{ paymentMethodToken: 'tok_visa', extra: 1 }, 'extra'],
    [{ paymentMethodToken: '' }, 'paymentMethodToken'],
    [{ paymentMethodToken: 'tok_visa', expiryMonth: 2 }, 'expiryYear'],
    [{ paymentMethodToken: 'tok_visa', expiryMonth: 13, expiryYear: 2027 }, 'expiryMonth'],
    [{ paymentMethodToken: 'tok_visa', scheduledDate: 'tomorrow' }, 'scheduledDate'],
    [{ paymentMethodToken: 'tok_visa', amount: 12.5 }, 'amount'],
  ])('%j is refused with 400 naming %s, and nothing is stored', async (body, field) => {
    const { apiKey, account } = await stack.createAccount();
    const res = await predict(apiKey, body);
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body.details)).toContain(field);
    expect(await stack.stores.predictions.calibration(account.id, true)).toEqual({});
    expect(await stack.stores.db.collection('predictions').countDocuments({ accountId: account.id })).toBe(0);
  });

  it('a scheduledDate that is not a date, or is before 2000 or after 2100, is a 400 saying what it must be', async () => {
    const { apiKey } = await stack.createAccount();
    const rule =
      'must be a date (YYYY-MM-DD) or an ISO 8601 date-time with Z or an offset, in the years 2000–2100';
    for (const scheduledDate of [
      'soon',
      '2026-12-09T10:00:00',
      '0099-06-01',
      '0099-06-01T12:00:00Z',
      '2101-01-01',
    ]) {
      const res = await predict(apiKey, { paymentMethodToken: 'tok_visa', scheduledDate });
      expect(res.status, scheduledDate).toBe(400);
      expect(res.body.details, scheduledDate).toEqual({ scheduledDate: [rule] });
    }
    const first = await predict(apiKey, { paymentMethodToken: 'tok_visa', scheduledDate: '2000-01-01' });
    expect(first.status).toBe(200);
  });

  it('needs the secret key', async () => {
    const res = await call(stack.baseUrl, 'POST', '/api/predict/risk', {
      body: { paymentMethodToken: 'tok_visa', amount: 1999 },
    });
    expect(res.status).toBe(401);
  });
});

describe('a predict.risk.high whose delivery Temporal refused to start', () => {
  /** Runs `request` while the stack's Temporal client refuses to start workflows. */
  async function whileStartsFail<T>(request: () => Promise<T>): Promise<T> {
    const workflow = stack.temporal.workflow;
    const start = workflow.start.bind(workflow);
    workflow.start = (() => Promise.reject(new Error('Temporal is briefly unreachable'))) as typeof start;
    try {
      return await request();
    } finally {
      workflow.start = start;
    }
  }

  it('is dead-lettered, not left pending for ever: resending failed events delivers it', async () => {
    const receiver = await startReceiver();
    try {
      const { apiKey, account } = await stack.createAccount({ webhookUrl: receiver.url });
      const expired = { paymentMethodToken: 'tok_visa', expiryMonth: 1, expiryYear: 2020 };
      // The merchant's retry is a new prediction with its own event: this one is never published again.
      expect((await whileStartsFail(() => predict(apiKey, expired))).status).toBe(500);
      const [event] = await stack.stores.events.list({ accountId: account.id });
      expect(event).toMatchObject({ type: 'predict.risk.high', deliveryStatus: 'failed' });
      expect(event?.deliveries.map((d) => [d.deliveryId, d.attempts])).toEqual([['initial', []]]);

      const resent = await call(stack.baseUrl, 'POST', '/api/events/resend', { key: apiKey, body: {} });
      expect(resent.body).toMatchObject({
        resent: [{ eventId: event?._id, deliveryId: 'initial' }],
        skipped: [],
      });
      const record = await poll(
        () => stack.stores.events.get(event?._id ?? ''),
        (r) => r?.deliveryStatus === 'delivered',
      );
      expect(record?.deliveries.map((d) => [d.deliveryId, d.attempts.map((a) => a.statusCode)])).toEqual([
        ['initial', [200]],
      ]);
      expect(receiver.received.map((r) => r.headers['x-service-event-id'])).toEqual([event?._id]);
    } finally {
      await receiver.close();
    }
  });
});

describe('POST /api/predict/outcome', () => {
  it('says whether the prediction called it, keeps the first outcome, and counts it once', async () => {
    const { apiKey, account } = await stack.createAccount();
    // A fixed daytime date: the band the outcome is counted under must not depend on when the test runs.
    const { predictionId } = prediction(
      await predict(apiKey, { paymentMethodToken: 'tok_visa', scheduledDate: '2026-12-09' }),
    );
    const first = await report(apiKey, { predictionId, outcome: 'failed', declineCode: 'do_not_honor' });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      success: true,
      predictionId,
      recommendation: 'proceed',
      outcome: 'failed',
      predictionMatched: false,
    });
    const again = await report(apiKey, { predictionId, outcome: 'succeeded' });
    expect(again.body).toMatchObject({ outcome: 'failed', predictionMatched: false });
    expect(await stack.stores.predictions.calibration(account.id, true)).toEqual({
      '0': { n: 1, failed: 1 },
    });
  });

  it('a high risk that did fail, or a low one that succeeded, is a match', async () => {
    const { apiKey } = await stack.createAccount();
    const risky = prediction(
      await predict(apiKey, { paymentMethodToken: 'tok_visa', expiryMonth: 1, expiryYear: 2020 }),
    );
    const safe = prediction(
      await predict(apiKey, { paymentMethodToken: 'tok_visa', scheduledDate: '2026-12-09' }),
    );
    expect(
      (await report(apiKey, { predictionId: risky.predictionId, outcome: 'blocked' })).body,
    ).toMatchObject({
      recommendation: 'block',
      predictionMatched: true,
    });
    expect(
      (await report(apiKey, { predictionId: safe.predictionId, outcome: 'succeeded' })).body,
    ).toMatchObject({
      recommendation: 'proceed',
      predictionMatched: true,
    });
  });

  it('the outcome of a prediction a decisive fact made is kept but calibrates no band', async () => {
    const { apiKey, account } = await stack.createAccount();
    const expired = prediction(
      await predict(apiKey, { paymentMethodToken: 'tok_visa', expiryMonth: 1, expiryYear: 2020 }),
    );
    expect(expired).toMatchObject({ riskScore: 99, recommendation: 'block' });
    const res = await report(apiKey, { predictionId: expired.predictionId, outcome: 'failed' });
    expect(res.body).toMatchObject({ outcome: 'failed', predictionMatched: true });
    // A block always fails (risk 99, band 9): counted there, it would raise every ordinary band-9 risk.
    expect(await stack.stores.predictions.calibration(account.id, true)).toEqual({});
  });

  it('a risk score of exactly 50 predicts failure: a failed charge is a match', async () => {
    const { apiKey } = await stack.createAccount();
    const daytime = { paymentMethodToken: 'tok_visa', scheduledDate: '2026-12-09' };
    for (let i = 0; i < 21; i += 1) {
      const { predictionId } = prediction(await predict(apiKey, daytime));
      expect((await report(apiKey, { predictionId, outcome: 'failed' })).status).toBe(200);
    }
    // 21 failures against the prior's 25 observations at 8 %: (21 + 2) / (21 + 25) = 50 %.
    const even = prediction(await predict(apiKey, daytime));
    expect(even.riskScore).toBe(50);
    const res = await report(apiKey, { predictionId: even.predictionId, outcome: 'failed' });
    expect(res.body).toMatchObject({ outcome: 'failed', predictionMatched: true });
  });

  it("another account's prediction and an unknown one are 404", async () => {
    const a = await stack.createAccount();
    const b = await stack.createAccount();
    const { predictionId } = prediction(await predict(a.apiKey, { paymentMethodToken: 'tok_visa' }));
    for (const id of [predictionId, 'pred_unknown']) {
      const res = await report(b.apiKey, { predictionId: id, outcome: 'succeeded' });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'Prediction not found' });
    }
  });

  it("an account's outcomes calibrate its later predictions", async () => {
    const { apiKey } = await stack.createAccount();
    for (let i = 0; i < 25; i += 1) {
      const { predictionId } = prediction(
        await predict(apiKey, { paymentMethodToken: 'tok_visa', scheduledDate: '2026-12-09' }),
      );
      await report(apiKey, { predictionId, outcome: 'failed' });
    }
    const after = prediction(
      await predict(apiKey, { paymentMethodToken: 'tok_visa', scheduledDate: '2026-12-09' }),
    );
    // 25 failures against the prior's 25 observations at 8 %: (25 + 2) / 50.
    expect(after.riskScore).toBe(54);
    expect(after.recommendation).toBe('proceed_with_caution');
  });
});
