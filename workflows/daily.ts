import { sleep } from '@temporalio/workflow';
import { nextSweepAt } from '../domain/card-health.js';

/** Days of runs before a daily workflow starts its history over (continue-as-new), so it never grows without bound. */
const daysPerHistory = 30;

/**
 * Runs `job` each day at the sweep hour (06:00 UTC) with the workflow's clock, for one history's worth of
 * days; the caller then continues as new.
 */
export async function everyDay(job: (nowMs: number) => Promise<void>): Promise<void> {
  for (let day = 0; day < daysPerHistory; day += 1) {
    await sleep(nextSweepAt(Date.now()) - Date.now());
    await job(Date.now());
  }
}
