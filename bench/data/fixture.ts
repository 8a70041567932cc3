import { randomUUID } from 'node:crypto';
import type { RecoveryState, Strategy } from '../../domain/recovery.js';
import type { AttemptRecord, RecoveryDoc } from '../../store/recoveries.js';
import { Rng } from '../recovery/random.js';

const day = 86_400_000;

/** Final states in the proportions a year of a merchant's recoveries ends in (about a third recovered). */
const finalStates: Record<'succeeded' | 'failed' | 'blocked' | 'queued', number> = {
  succeeded: 34,
  failed: 55,
  blocked: 8,
  queued: 3,
};
const codes = {
  insufficient_funds: 45,
  do_not_honor: 20,
  generic_decline: 12,
  expired_card: 8,
  try_again_later: 6,
  fraudulent: 3,
  card_declined: 6,
};

/**
 * One year of an account's recoveries as the read model stores them, drawn from `seed`: `count` documents
 * created evenly over the `days` before `now`, with `customers` distinct customers, 0–4 attempts each.
 * Written straight to the collection: the benchmark measures reading them, not the engine making them.
 */
export function recoveryDocs(opts: {
  accountId: string;
  count: number;
  customers: number;
  days: number;
  now: Date;
  seed: number;
}): RecoveryDoc[] {
  const rng = new Rng(opts.seed);
  return Array.from({ length: opts.count }, (_, i): RecoveryDoc => {
    const createdAt = new Date(opts.now.getTime() - rng.next() * opts.days * day);
    const state: RecoveryState = rng.pick(finalStates);
    const code = rng.pick(codes);
    const charges = state === 'blocked' ? 0 : 1 + Math.floor(rng.next() * 4);
    const attempts: AttemptRecord[] = Array.from({ length: charges }, (_, n) => {
      const approved = state === 'succeeded' && n === charges - 1;
      return {
        no: n + 1,
        at: new Date(createdAt.getTime() + n * 2 * day),
        gateway: n % 3 === 2 ? 'backup' : 'main',
        role: n % 3 === 2 ? 'backup_gateway' : 'primary',
        outcome: approved ? 'approved' : 'declined',
        declineCode: approved ? null : code,
        gatewayTransactionId: `ch_${i}_${n}`,
      };
    });
    const customer = Math.floor(rng.next() * opts.customers);
    const token = `pm_${customer}`;
    const strategy: Strategy =
      state === 'succeeded' ? (charges === 1 ? 'primary' : 'smart_retry') : 'all_failed';
    const id = randomUUID();
    const amount = 500 + Math.floor(rng.next() * 20_000);
    return {
      _id: id,
      accountId: opts.accountId,
      workflowId: `recovery/${opts.accountId}/${id}`,
      idempotencyKey: `inv_${i}`,
      paymentMethodToken: token,
      cardKey: `card_${customer}`,
      amount,
      currency: 'USD',
      customerEmail: `customer${customer}@example.com`,
      originalDeclineCode: code,
      isTrialConversion: false,
      isSimulated: false,
      request: {
        paymentMethodToken: token,
        amount,
        currency: 'USD',
        originalDeclineCode: code,
        customerEmail: `customer${customer}@example.com`,
        paymentMethodType: 'card',
        isTrialConversion: false,
      },
      startFailed: false,
      state,
      publicId: id,
      strategyUsed: state === 'queued' ? null : strategy,
      attempts,
      lastDeclineCode: code,
      recommendedAction: state === 'succeeded' ? null : 'retry_later',
      recommendedActionReason: null,
      nextAttemptAt: state === 'queued' ? new Date(opts.now.getTime() + day) : null,
      recoveredAt: state === 'succeeded' ? (attempts.at(-1)?.at ?? createdAt) : null,
      gatewayTransactionId: state === 'succeeded' ? `ch_${i}` : null,
      ai: null,
      createdAt,
      updatedAt: state === 'succeeded' ? (attempts.at(-1)?.at ?? createdAt) : createdAt,
    };
  });
}
