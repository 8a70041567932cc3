import { networkDecision, type NetworkDecision } from '../../domain/network-rules.js';
import { freshCardDecline, type CardTruth, type WorldModel } from './outcome-model.js';
import type { Payment } from './payments.js';
import { keyedUniform, pickWeighted } from './random.js';

const minute = 60_000;
const day = 1440 * minute;
/** Every strategy's budget: at most this many attempts per payment (the limit). */
export const maxAttempts = 8;

/** Draw purposes, so each attempt's draws are independent of each other. */
const draw = { success: 1, nextCode: 2, ambiguous: 3, advice: 4 } as const;

/** What the gateway answers for one charge. */
export interface ChargeTruth {
  approved: boolean;
  code: string | null;
  advice: string | null;
  /** The answer was lost in transit; a lookup at the gateway finds it. */
  ambiguous: boolean;
}

/** One charge as the world saw it. */
export interface Charge {
  at: number;
  token: string;
  gateway: string;
  approved: boolean;
  code: string | null;
}

/** One strategy's recovery of one payment, from the world's side: every charge, its outcome, every violation. */
export interface PaymentResult {
  recoveredAt: number | null;
  attempts: number;
  violations: number;
  charges: Charge[];
}

/** Tokens of a payment's cards; they fit the test gateway's token shape. */
export const tokensOf = (p: Payment) => ({
  primary: `tok_${p.index}_card`,
  fallback: `tok_${p.index}_second`,
  updated: `tok_${p.index}_updated`,
});

/**
 * A payment as the world sees it while one strategy works on it. The n-th charge of a payment draws the same
 * uniforms under every strategy (common random numbers), and every charge is checked against the card
 * networks' rules, the attempt budget and the horizon: each breach is counted as a violation.
 */
export class PaymentRun {
  private readonly cards = new Map<string, CardTruth>();
  private readonly charges: Charge[] = [];
  private attempts = 0;
  private violations = 0;
  private recoveredAt: number | null = null;
  private updaterAsked = false;

  constructor(
    private readonly model: WorldModel,
    readonly payment: Payment,
    private readonly seed: number,
  ) {
    const tokens = tokensOf(payment);
    this.cards.set(tokens.primary, {
      token: tokens.primary,
      kind: 'primary',
      brand: payment.brand,
      recoverable: payment.recoverable,
      code: payment.code,
      charges: [payment.failedAt],
      retries: 0,
      advice: null,
      adviceAt: null,
    });
    if (payment.fallbackBrand) this.addFreshCard(tokens.fallback, 'fallback', payment.fallbackBrand);
  }

  /** Charges made so far. */
  get attemptsSoFar(): number {
    return this.attempts;
  }

  get horizonEnd(): number {
    return this.payment.failedAt + this.model.world.horizonDays * day;
  }

  card(token: string): CardTruth | undefined {
    return this.cards.get(token);
  }

  /** The account updater, asked once per payment about its primary card: a new token, or null. */
  refresh(): string | null {
    if (this.updaterAsked || !this.payment.updaterHit) return null;
    this.updaterAsked = true;
    const token = tokensOf(this.payment).updated;
    const old = this.cards.get(tokensOf(this.payment).primary)!;
    this.addFreshCard(token, 'updated', old.brand);
    return token;
  }

  /** The network rules' verdict on charging `token` at `t` with everything the networks know. */
  decision(token: string, t: number): NetworkDecision {
    const card = this.cards.get(token);
    if (!card) throw new Error(`No card ${token}`);
    return networkDecision({
      brand: card.brand,
      declineCode: card.code,
      advice: card.advice,
      priorAttemptsAt: card.charges,
      lastAttemptAt: card.adviceAt,
      now: t,
    });
  }

  /** Whether the network rules allow charging `token` at `t`. */
  allowed(token: string, t: number): boolean {
    return this.decision(token, t).allowed;
  }

  /**
   * Charges `token` through `gateway` at `sentAt`: the world's outcome, with violations counted. The world's
   * clock ticks in whole minutes, so the moment a strategy reads its clock (production's is a worker task a
   * few ms after its timer) never decides an outcome.
   *
   * A charge that breaks a rule — one the card networks refuse (a Visa category-1 code, Mastercard advice
   * 03/21 or an advised wait not yet over, a cap), one past the attempt budget or outside the window — is
   * counted as a violation and never succeeds: the issuer repeats the card's standing decline and advice. No
   * strategy earns revenue from a charge it was not allowed to make.
   */
  charge(token: string, gateway: string, sentAt: number): ChargeTruth {
    const t = Math.floor(sentAt / minute) * minute;
    const card = this.cards.get(token);
    if (!card) throw new Error(`No card ${token}`);
    if (this.recoveredAt !== null) throw new Error('Charged a payment that is already recovered');
    let breaches = this.allowed(token, t) ? 0 : 1;
    if (this.attempts >= maxAttempts || t > this.horizonEnd || t < this.payment.failedAt) breaches += 1;
    this.violations += breaches;
    const p = breaches > 0 ? 0 : this.model.probability(card, gateway, t, this.facts());
    const n = (this.attempts += 1);
    const key = [this.seed, this.payment.index, n];
    const ambiguous = keyedUniform(...key, draw.ambiguous) < this.model.world.ambiguousRate;
    card.charges.push(t);
    card.retries += 1;
    if (breaches > 0) {
      const code = card.code ?? freshCardDecline;
      this.charges.push({ at: t, token, gateway, approved: false, code });
      return { approved: false, code, advice: card.advice, ambiguous };
    }
    if (keyedUniform(...key, draw.success) < p) {
      this.recoveredAt = t;
      this.charges.push({ at: t, token, gateway, approved: true, code: null });
      return { approved: true, code: null, advice: null, ambiguous };
    }
    const code = this.nextCode(card, keyedUniform(...key, draw.nextCode));
    const adviceWeights = this.model.world.declines[code]?.advice;
    const drawn =
      card.brand === 'mastercard' && adviceWeights
        ? pickWeighted(adviceWeights, keyedUniform(...key, draw.advice))
        : 'none';
    const advice = drawn === 'none' ? null : drawn;
    card.code = code;
    card.advice = advice;
    card.adviceAt = t;
    this.charges.push({ at: t, token, gateway, approved: false, code });
    return { approved: false, code, advice, ambiguous };
  }

  result(): PaymentResult {
    return {
      recoveredAt: this.recoveredAt,
      attempts: this.attempts,
      violations: this.violations,
      charges: [...this.charges],
    };
  }

  /** What the world needs about the payment to price an attempt. */
  facts() {
    return {
      failedAt: this.payment.failedAt,
      offsetMinutes: this.payment.offsetMinutes,
      billingCycleDay: this.payment.merchant.billingCycleDay ?? null,
    };
  }

  private nextCode(card: CardTruth, u: number): string {
    if (card.kind !== 'primary' || card.code === null) return freshCardDecline;
    const next = this.model.world.declines[card.code]?.nextCode;
    return next ? pickWeighted(next, u) : card.code;
  }

  private addFreshCard(token: string, kind: 'fallback' | 'updated', brand: CardTruth['brand']): void {
    this.cards.set(token, {
      token,
      kind,
      brand,
      recoverable: true,
      code: null,
      charges: [],
      retries: 0,
      advice: null,
      adviceAt: null,
    });
  }
}
