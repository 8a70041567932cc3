import { blockMemoryMs, type CardRefusal } from '../domain/risk.js';
import type { Stores } from '../store/index.js';

/**
 * Why the card with this key is not charged at all, or null: blocked on an earlier recovery of the account
 * within `blockMemoryMs` (a block remembered by `ownTransactionId`, the recovery being screened, is its own
 * and does not count), else Mastercard's advice (03 or 21) on any earlier charge never to charge it again.
 * The recovery's risk screen and POST /api/predict/risk ask the same question.
 */
export async function cardRefusalOf(
  stores: Pick<Stores, 'recoveries' | 'cardBudgets'>,
  cardKey: string,
  now: Date,
  ownTransactionId?: string,
): Promise<CardRefusal | null> {
  const [blocked, advice] = await Promise.all([
    stores.recoveries.blockedCard(cardKey, new Date(now.getTime() - blockMemoryMs)),
    stores.cardBudgets.stopOf(cardKey),
  ]);
  if (blocked && blocked.transactionId !== ownTransactionId)
    return { kind: 'blocked_before', declineCode: blocked.declineCode };
  return advice ? { kind: 'network_stop', advice } : null;
}
