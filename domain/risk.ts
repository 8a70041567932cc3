import type { LocalParts } from './local-time.js';
import { evidenceConfidence, paydayPrior, pseudoCount } from './success-model.js';

/** How long a card blocked in a recovery (lost, stolen, closed, …) counts against it. */
export const blockMemoryMs = 180 * 24 * 3_600_000;

/**
 * Why a card is not charged at all: a decline that blocked it in an earlier recovery of the account (lost,
 * stolen, closed, …), or Mastercard's merchant advice never to charge it again (03 or 21).
 */
export type CardRefusal =
  { kind: 'blocked_before'; declineCode: string } | { kind: 'network_stop'; advice: string };

/** What the risk model knows of a payment about to be charged: what the merchant sent and Recoup holds. */
export interface RiskFacts {
  /** The customer's local clock when the charge is scheduled. */
  local: LocalParts;
  /** The scheduled month is past the card's expiry month. */
  expiredBy: boolean;
  /** Why the card is not charged at all (blocked before, Mastercard's stop), from earlier recoveries. */
  refusal: CardRefusal | null;
  /**
   * The card's latest decline while a payment of it is still owed (its recovery waits for a retry, or
   * ended unpaid and was not settled since).
   */
  failingCode: string | null;
  /** The customer's unrecovered payments on other cards. */
  pastDueElsewhere: number;
  billingCycleDay: number | null;
  /** The account's reported outcomes so far, by risk band (the model's raw risk in tenths). */
  calibration: Record<string, BandTally>;
}

/** Reported outcomes of one risk band: how many, and how many of them failed. */
export interface BandTally {
  n: number;
  failed: number;
}

export type RiskRecommendation = 'proceed' | 'proceed_with_caution' | 'delay' | 'block';

export interface RiskFactor {
  factor: string;
  /** How the factor moves the chance of failure: a multiplier, or 1 for a decisive fact. */
  effect: number;
  description: string;
}

export interface RiskAssessment {
  /** The model's own failure probability, before calibration: its band is what outcomes are counted under. */
  raw: number;
  band: number;
  riskScore: number;
  confidence: number;
  reasoning: string;
  factors: RiskFactor[];
  recommendation: RiskRecommendation;
}

/**
 * Priors, research/recovery-economics.md §1, §4 and §9: 8 % of renewals fail; declines run about 18 % in
 * business hours against 25–28 % at 01–04 h local (×1.44); a quarter of failures are insufficient funds,
 * which move with paydays. A card that declined and is not yet recovered succeeds on its next try about
 * 20 % of the time. A customer behind on another card is a guess (×2 on the odds), which calibration
 * corrects.
 */
const renewalFailure = 0.08;
const nightEffect = 1.44;
const fundsShare = 0.25;
const failingCardRisk = 0.8;
const pastDueOdds = 2;

const odds = (p: number) => p / (1 - p);
const fromOdds = (o: number) => o / (1 + o);

/** The decisive facts: a charge that cannot succeed. */
function decisive(f: RiskFacts): RiskFactor | null {
  if (f.refusal?.kind === 'blocked_before')
    return {
      factor: 'card_blocked_before',
      effect: 1,
      description: `The card was blocked (${f.refusal.declineCode}) on an earlier recovery.`,
    };
  if (f.refusal?.kind === 'network_stop')
    return {
      factor: 'card_network_stop',
      effect: 1,
      description: `Mastercard advised (merchant advice code ${f.refusal.advice}) never to charge this card again.`,
    };
  if (f.expiredBy)
    return {
      factor: 'card_expires_before_charge',
      effect: 1,
      description: 'The card expires before the scheduled date.',
    };
  return null;
}

/** The model's failure probability and the factors that moved it, strongest first. */
function rawRisk(f: RiskFacts): { p: number; factors: RiskFactor[] } {
  const factors: RiskFactor[] = [];
  let p = renewalFailure;
  if (f.failingCode) {
    p = failingCardRisk;
    factors.push({
      factor: 'card_failing_now',
      effect: failingCardRisk / renewalFailure,
      description: `The card declined (${f.failingCode}) and its payment is still owed.`,
    });
  }
  if (f.pastDueElsewhere > 0) {
    const before = p;
    p = fromOdds(odds(p) * pastDueOdds);
    factors.push({
      factor: 'customer_past_due',
      effect: p / before,
      description: `The customer has ${f.pastDueElsewhere} unrecovered payment(s) on another card.`,
    });
  }
  if (f.local.hour >= 1 && f.local.hour < 5) {
    p *= nightEffect;
    factors.push({
      factor: 'night_hour',
      effect: nightEffect,
      description: 'Charges between 01:00 and 05:00 local time are declined more often.',
    });
  }
  const payday =
    paydayPrior('funds', f.local, f.billingCycleDay) / paydayPrior('issuer', f.local, f.billingCycleDay);
  if (payday !== 1) {
    const effect = 1 - fundsShare + fundsShare / payday;
    p *= effect;
    factors.push({
      factor: payday > 1 ? 'payday' : 'before_payday',
      effect,
      description:
        payday > 1
          ? 'Paydays leave fewer cards short of funds.'
          : 'The days before a payday leave more cards short of funds.',
    });
  }
  factors.sort((a, b) => Math.abs(Math.log(b.effect)) - Math.abs(Math.log(a.effect)));
  return { p: Math.min(0.99, p), factors };
}

/**
 * Whether a prediction's outcome is counted into its band's calibration: not one a decisive fact made
 * (`block`, always risk 99 in band 9), whose failure says nothing of how the model's own band-9 risks fare.
 */
export const calibrates = (prediction: { recommendation: RiskRecommendation }) =>
  prediction.recommendation !== 'block';

/**
 * Predicts whether a scheduled charge will fail: decisive facts first (a card blocked before, one that
 * will have expired), then the research's base rate moved by what Recoup knows of the card and customer
 * and by the customer's clock, and finally calibrated by the outcomes this account reported for earlier
 * predictions in the same band (shrunk towards the model as the engine shrinks its rates, so a few
 * outcomes move it little).
 */
export function assessRisk(f: RiskFacts, thresholds: { alert: number }): RiskAssessment {
  const fact = decisive(f);
  const { p: raw, factors } = fact ? { p: 0.99, factors: [fact] } : rawRisk(f);
  const band = Math.min(9, Math.floor(raw * 10));
  const seen = f.calibration[String(band)] ?? { n: 0, failed: 0 };
  const p = fact ? raw : (seen.failed + pseudoCount * raw) / (seen.n + pseudoCount);
  const riskScore = Math.round(p * 1000) / 10;
  const recommendation: RiskRecommendation = fact
    ? 'block'
    : riskScore >= thresholds.alert
      ? 'delay'
      : riskScore >= 30
        ? 'proceed_with_caution'
        : 'proceed';
  const lead = factors[0];
  const reasoning = lead
    ? `${Math.round(p * 100)}% chance of failure, mostly because: ${lead.description}`
    : `${Math.round(p * 100)}% chance of failure, the usual rate for a renewal: nothing known raises it.`;
  return {
    raw,
    band,
    riskScore,
    confidence: fact ? 95 : evidenceConfidence(seen.n),
    reasoning,
    factors,
    recommendation,
  };
}
