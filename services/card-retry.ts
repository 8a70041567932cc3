import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { PaymentMethodType } from '../domain/gateway-kinds.js';
import type { Logger } from '../runtime/logger.js';
import type { RecoveryDoc } from '../store/recoveries.js';
import { cardUpdatedSignal } from '../workflows/recovery-definitions.js';

/**
 * Queued recoveries retry with the customer's new card (or wallet: `paymentMethodType`): at once, or after
 * `settleMs` (a card the billing platform reported: see cardUpdatedSignal). Returns how many were told; a
 * recovery that finished since the read model said queued has nothing left to retry and is skipped.
 */
export async function retryWithNewCard(
  temporal: Client,
  log: Logger,
  queued: RecoveryDoc[],
  card: { newToken: string; paymentMethodType: PaymentMethodType; settleMs?: number },
): Promise<number> {
  let told = 0;
  for (const recovery of queued) {
    try {
      await temporal.workflow.getHandle(recovery.workflowId).signal(cardUpdatedSignal, card);
      told += 1;
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError)) throw error;
      log.info({ workflowId: recovery.workflowId }, 'card update: recovery already finished');
    }
  }
  return told;
}
