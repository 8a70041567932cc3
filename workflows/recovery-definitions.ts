import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { PaymentMethodType } from '../domain/gateway-kinds.js';
import type { FirstPhaseOutcome, RecoveryState, StopReason } from '../domain/recovery.js';

/** Answers with the first phase's outcome (the synchronous HTTP answer); the workflow carries on after. */
export const executeUpdate = defineUpdate<FirstPhaseOutcome>('execute');

/** The customer replaced the card through a hosted link: retry at once with the new token. */
export const cardUpdatedSignal =
  defineSignal<[{ newToken: string; paymentMethodType: PaymentMethodType }]>('cardUpdated');

/** The billing platform reports the invoice paid outside Recoup: stop retrying it. */
export const paidElsewhereSignal = defineSignal('paidElsewhere');

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
