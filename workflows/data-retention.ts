import { continueAsNew, isCancellation, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { everyDay } from './daily.js';

/** A purge that keeps failing (MongoDB down) is given up on after about an hour; the next day's tries again. */
const { purgeExpiredData } = proxyActivities<Activities>({
  startToCloseTimeout: '1 hour',
  heartbeatTimeout: '5 minutes',
  retry: {
    initialInterval: '1 minute',
    backoffCoefficient: 2,
    maximumInterval: '15 minutes',
    maximumAttempts: 6,
  },
});

/**
 * The deployment's daily data retention (started by every worker, once): each day at the sweep hour it
 * deletes the records of every account with a `dataRetentionDays` that are older than that.
 */
export async function dataRetentionWorkflow(): Promise<void> {
  await everyDay(async (nowMs) => {
    try {
      await purgeExpiredData({ asOf: nowMs });
    } catch (error) {
      // Failed for good today (the Temporal UI shows why): tomorrow's run deletes the same and more.
      if (isCancellation(error)) throw error;
    }
  });
  await continueAsNew<typeof dataRetentionWorkflow>();
}
