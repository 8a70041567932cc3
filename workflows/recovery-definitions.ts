import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { PaymentMethodType } from '../domain/gateway-kinds.js';
import type { FirstPhaseOutcome, RecoveryState, StopReason } from '../domain/recovery.js';

/** Answers with the first phase's outcome (the synchronous HTTP answer); the workflow carries on after. */
export const executeUpdate = defineUpdate<FirstPhaseOutcome>('execute');

/**
 * The execute call stopped waiting for the first phase and is about to answer "still processing" under the
 * bare transaction id: answers with the first phase's outcome if it ended after all (the call gives that
 * instead), else null, and the recovery then keeps the id the merchant was given, whatever its outcome.
 */
export const answeredProcessingUpdate = defineUpdate<FirstPhaseOutcome | null>('answeredProcessing');

/**
 * The customer replaced the card: retry at once with the new token, or, for a card the billing platform
 * reported (`settleMs`), once that long has passed without the platform reporting the invoice paid — it may
 * be collecting the invoice with that card itself at this moment.
 */
export const cardUpdatedSignal =
  defineSignal<[{ newToken: string; paymentMethodType: PaymentMethodType; settleMs?: number }]>(
    'cardUpdated',
  );

/** The billing platform reports the invoice paid outside Recoup: stop retrying it. */
export const paidElsewhereSignal = defineSignal('paidElsewhere');

/**
 * The billing platform reports part of the invoice paid outside Recoup: the recovery collects only `amount`
 * (minor units, the recovery's currency), what is still due, from its next attempt on.
 */
export const amountDueSignal = defineSignal<[{ amount: number }]>('amountDue');

/**
 * The merchant stops the recovery before any further attempt; answers with the state it ended in, once it
 * has (`succeeded` when an attempt already under way collected the payment first).
 */
export const stopUpdate = defineUpdate<{ state: RecoveryState }, [{ reason: StopReason }]>('stop');

/** Current state, for operators and tests. */
export const stateQuery = defineQuery<{
  state: RecoveryState;
  attempts: number;
  nextAttemptAt: string | null;
}>('state');
