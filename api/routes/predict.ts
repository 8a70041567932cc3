import { randomUUID } from 'node:crypto';
import { customerTimeZone, localParts, utcOffsetMinutes } from '../../domain/local-time.js';
import { assessRisk, type RiskFacts } from '../../domain/risk.js';
import { cardKeyOf } from '../../runtime/crypto.js';
import { cardRefusalOf } from '../../services/card-refusal.js';
import type { EventPublisher } from '../../services/events.js';
import { owedBy } from '../../services/paywall.js';
import type { Account } from '../../store/accounts.js';
import type { Stores } from '../../store/index.js';
import { accountOf } from '../context.js';
import { notFound } from '../http-error.js';
import { reply, route } from '../route.js';
import { ErrorBody } from '../schemas/errors.js';
import { OutcomeRequest, OutcomeResult, RiskRequest, RiskResult } from '../schemas/predict.js';

interface Deps {
  stores: Stores;
  events: EventPublisher;
  clock: () => Date;
}

/** When the charge is scheduled: a date alone means noon on that day in the customer's time zone. */
function scheduledAt(date: string | undefined, zone: string, now: Date): number {
  if (!date) return now.getTime();
  if (date.includes('T')) return Date.parse(date);
  const noonUtc = Date.parse(`${date}T12:00:00Z`);
  return noonUtc - utcOffsetMinutes(zone, noonUtc) * 60_000;
}

/** How many of the customer's payments (in the account's current mode) are owed on cards but this one. */
async function owedOnOtherCards(stores: Stores, account: Account, email: string, token: string) {
  let owed = 0;
  for await (const r of owedBy(stores, account, email)) if (r.paymentMethodToken !== token) owed += 1;
  return owed;
}

/** What Recoup knows of the card and customer of a charge about to be made. */
async function factsOf(stores: Stores, account: Account, body: RiskRequest, now: Date): Promise<RiskFacts> {
  const zone = customerTimeZone(body.cardOrigin, account.settings.timezone);
  const at = scheduledAt(body.scheduledDate, zone, now);
  const local = localParts(at, utcOffsetMinutes(zone, at));
  const date = new Date(at + utcOffsetMinutes(zone, at) * 60_000);
  const cardKey = cardKeyOf(account.id, body.paymentMethodToken);
  const [refusal, owed, pastDueElsewhere, calibration] = await Promise.all([
    cardRefusalOf(stores, cardKey, now),
    stores.recoveries.owedOnCard(account.id, cardKey, account.testMode),
    body.customerEmail ? owedOnOtherCards(stores, account, body.customerEmail, body.paymentMethodToken) : 0,
    stores.predictions.calibration(account.id, account.testMode),
  ]);
  const latest = owed.sort((a, b) => b.updatedAt.getTime() - a.updatedAt.getTime())[0];
  return {
    local,
    expiredBy:
      body.expiryYear !== undefined &&
      body.expiryMonth !== undefined &&
      date.getUTCFullYear() * 12 + date.getUTCMonth() + 1 > body.expiryYear * 12 + body.expiryMonth,
    refusal,
    failingCode: latest ? (latest.lastDeclineCode ?? latest.originalDeclineCode ?? 'unknown') : null,
    pastDueElsewhere,
    billingCycleDay: account.settings.billingCycleDay,
    calibration,
  };
}

/** Risk screening before a charge, and the outcomes that calibrate it. */
export function predictRoutes({ stores, events, clock }: Deps) {
  return [
    route({
      method: 'post',
      path: '/api/predict/risk',
      tag: 'Risk',
      summary: 'Predict whether a scheduled charge will fail, before it is made',
      description:
        'At or above the account’s riskAlertThreshold a predict.risk.high webhook is sent. Report the outcome to POST /api/predict/outcome: outcomes calibrate later predictions.',
      auth: 'secret',
      body: RiskRequest,
      responses: { 200: { description: 'The prediction', schema: RiskResult } },
      async handle(ctx, { body }) {
        const account = accountOf(ctx);
        const now = clock();
        const risk = assessRisk(await factsOf(stores, account, body, now), {
          alert: account.settings.riskAlertThreshold,
        });
        const predictionId = `pred_${randomUUID().replaceAll('-', '')}`;
        await stores.predictions.create({
          _id: predictionId,
          accountId: account.id,
          band: risk.band,
          riskScore: risk.riskScore,
          recommendation: risk.recommendation,
          simulated: account.testMode,
          createdAt: now,
        });
        if (risk.riskScore >= account.settings.riskAlertThreshold)
          await events.publish(
            account.id,
            {
              event: 'predict.risk.high',
              paymentMethodToken: body.paymentMethodToken,
              riskScore: risk.riskScore,
              reasoning: risk.reasoning,
              amount: body.amount,
              timestamp: now.toISOString(),
            },
            { eventId: `evt_${predictionId}` },
          );
        const { riskScore, confidence, reasoning, factors, recommendation } = risk;
        return reply(200, {
          success: true,
          prediction: { predictionId, riskScore, confidence, reasoning, factors, recommendation },
        });
      },
    }),
    route({
      method: 'post',
      path: '/api/predict/outcome',
      tag: 'Risk',
      summary: 'Report what became of a predicted charge',
      description:
        'The first outcome reported for a prediction stands and is counted once into the account’s calibration.',
      auth: 'secret',
      body: OutcomeRequest,
      responses: {
        200: { description: 'Recorded', schema: OutcomeResult },
        404: { description: 'No such prediction on this account', schema: ErrorBody },
      },
      async handle(ctx, { body }) {
        const prediction = await stores.predictions.find(accountOf(ctx).id, body.predictionId);
        if (!prediction) throw notFound('Prediction not found');
        const stands = await stores.predictions.recordOutcome(prediction, {
          outcome: body.outcome,
          declineCode: body.declineCode ?? null,
          at: clock(),
        });
        return reply(200, {
          success: true,
          predictionId: prediction._id,
          recommendation: prediction.recommendation,
          outcome: stands.outcome,
          predictionMatched: prediction.riskScore >= 50 === (stands.outcome !== 'succeeded'),
        });
      },
    }),
  ];
}
