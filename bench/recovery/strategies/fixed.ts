import { classifyDecline } from '../../../domain/declines.js';
import type { WorldModel } from '../outcome-model.js';
import { maxAttempts, PaymentRun, tokensOf, type PaymentResult } from '../payment-run.js';
import type { Payment } from '../payments.js';
import type { World } from '../world.js';

const minute = 60_000;
const day = 1_440 * minute;

/** The fixed-schedule baselines: retry times after the failure, at the failure's clock time. */
export const fixedSchedules = {
  fixed_8_in_14: [1, 2, 3, 5, 7, 9, 11, 14].map((d) => d * day),
  fixed_3_5_7: [3, 5, 7].map((d) => d * day),
  immediate_x3: [20, 40, 60].map((m) => m * minute),
} as const;
export type FixedStrategy = keyof typeof fixedSchedules;

/** One fixed baseline as the report names it: a schedule run through one of the world's gateways. */
export interface FixedVariant {
  name: string;
  schedule: FixedStrategy;
  gateway: string;
  /** Whether the second card on file is charged at every slot the customer's own card declines. */
  secondCard: boolean;
}

/**
 * Every schedule through every gateway of the world, with and (in a world with second cards on file)
 * without charging the second card at each slot: `<schedule>[+second_card][@<backup gateway>]`. A merchant
 * who knew its backup gateway was better would make it the primary, and billing platforms offer a backup
 * payment method, so the best fixed baseline is the best of them all.
 */
export function fixedVariants(world: World): FixedVariant[] {
  const cardPolicies = world.fallbackTokenShare > 0 ? [false, true] : [false];
  return (Object.keys(fixedSchedules) as FixedStrategy[]).flatMap((schedule) =>
    cardPolicies.flatMap((secondCard) =>
      world.gateways.map((g, i) => ({
        name: `${schedule}${secondCard ? '+second_card' : ''}${i === 0 ? '' : `@${g.name}`}`,
        schedule,
        gateway: g.name,
        secondCard,
      })),
    ),
  );
}

/**
 * A platform's native dunning: the customer's card through one gateway on a fixed schedule, stopping at
 * success or when no card may be charged any more. A slot the card networks refuse (an advised wait not over
 * yet) is skipped, as production's card budget refuses it. An expired card goes to the account updater, as
 * it does in production, and the schedule carries on with the new card. The second card on file is charged
 * at a slot once the customer's own card may not be charged again (a decline no platform retries but that
 * allows another card, or a network "never"), as production's cascade drops a token and moves on — or, with
 * `secondCard`, at every slot where the own card declines or is refused (a billing platform's backup payment
 * method). A hard cardholder-state decline (lost, stolen, fraud, expired) rules the second card out, as the
 * spec does; no slot goes past the attempt budget.
 */
export function runFixed(
  model: WorldModel,
  payment: Payment,
  seed: number,
  schedule: readonly number[],
  gateway: string = model.world.gateways[0]!.name,
  secondCard = false,
): PaymentResult {
  const run = new PaymentRun(model, payment, seed);
  const tokens = tokensOf(payment);
  let own: string | null = tokens.primary;
  let second: string | null = run.card(tokens.fallback) ? tokens.fallback : null;
  /** After `token` declined with `code`: which cards may still be charged. */
  const declined = (token: string, code: string) => {
    const info = classifyDecline(code);
    if (info.retryable) return;
    if (token === second) second = null;
    else {
      if (!info.allowsFallback) second = null;
      own = info.group === 'expired' ? run.refresh() : null;
    }
  };
  /** Charges `token` at `t` if the networks allow it: true when the payment is recovered. */
  const attempt = (token: string, t: number): boolean => {
    if (run.attemptsSoFar >= maxAttempts) return false;
    const verdict = run.decision(token, t);
    if (!verdict.allowed) {
      // Never again on this card (Mastercard advice 03/21, a Visa category-1 code): it is dropped.
      if (verdict.retryAt === null) {
        if (token === second) second = null;
        else own = null;
      }
      return false;
    }
    const out = run.charge(token, gateway, t);
    if (!out.approved) declined(token, out.code ?? '');
    return out.approved;
  };
  declined(tokens.primary, payment.code);
  for (const offset of schedule) {
    const t = payment.failedAt + offset;
    if (t > run.horizonEnd || (own === null && second === null)) break;
    if (own !== null && attempt(own, t)) break;
    if (second !== null && (secondCard || own === null) && attempt(second, t)) break;
  }
  return run.result();
}
