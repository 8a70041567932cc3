import type { IssuerAnswer, IssuerWorld } from '../../../activities/gateways/test-gateway.js';
import type { WorldModel } from '../outcome-model.js';
import { PaymentRun, type PaymentResult } from '../payment-run.js';
import type { Payment } from '../payments.js';

/**
 * The world's issuers behind the test gateway in world mode: every charge of a payment's cards is drawn by
 * that payment's own PaymentRun, exactly as the pure run draws it (the same keyed uniforms per payment and
 * attempt number), at the time the workflow sent it. Answers are kept by idempotency key for lookups.
 */
export function worldIssuers(model: WorldModel, payments: Payment[], seed: number) {
  const runs = new Map(payments.map((p) => [p.index, new PaymentRun(model, p, seed)]));
  const answers = new Map<string, IssuerAnswer>();

  /** The payment a token belongs to (tokensOf: `tok_<index>_<card>`). */
  function runOf(token: string): PaymentRun {
    const run = runs.get(Number(/^tok_(\d+)_/.exec(token)?.[1]));
    if (!run) throw new Error(`No payment of this world has the token ${token}`);
    return run;
  }

  const issuers: IssuerWorld = {
    charge({ key, gateway, token, sentAt }) {
      const known = answers.get(key);
      if (known) return known;
      const truth = runOf(token).charge(token, gateway, sentAt);
      const answer = {
        approved: truth.approved,
        code: truth.code,
        advice: truth.advice,
        lost: truth.ambiguous,
      };
      answers.set(key, answer);
      return answer;
    },
    answered: (key) => answers.get(key),
    refresh: (token) => runOf(token).refresh(),
  };

  return {
    issuers,
    /** Every payment's charges as the world saw them, in the order of `payments`. */
    results: (): PaymentResult[] => payments.map((p) => runs.get(p.index)!.result()),
  };
}
