import { proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { interruptedUseAfterMs } from '../domain/links.js';

/** Retried until the database answers: the customer's use must not be lost. */
const { finishLinkUse } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '10 seconds', backoffCoefficient: 2, maximumInterval: '10 minutes' },
});

/**
 * The safety net of one use of a hosted link, started before the use is recorded: once the use has had
 * time to finish on its own, finishes its effects (the event, the retry with a new card) if the request
 * that used the link died or failed before they were done. Does nothing when they were, or when the
 * link was never used.
 */
export async function linkUseWorkflow(input: { hash: string }): Promise<void> {
  await sleep(interruptedUseAfterMs);
  await finishLinkUse(input);
}
