import { condition, sleep } from '@temporalio/workflow';
import { nextSweepAt } from '../domain/card-health.js';

/** Days of runs before a daily workflow starts its history over (continue-as-new), so it never grows without bound. */
const daysPerHistory = 30;

/**
 * Runs `job` each day at the sweep hour (06:00 UTC) with the workflow's clock, for one history's worth of
 * days, or until `historyFull` says the history has grown long from other work (checked between runs of
 * `job`, never during one); the caller then continues as new.
 */
export async function everyDay(
  job: (nowMs: number) => Promise<void>,
  historyFull?: () => boolean,
): Promise<void> {
  for (let day = 0; day < daysPerHistory; day += 1) {
    const untilSweep = nextSweepAt(Date.now()) - Date.now();
    // The same timer either way: a history recorded before `historyFull` replays as it ran.
    if (!historyFull) await sleep(untilSweep);
    else if (await condition(historyFull, untilSweep)) return;
    await job(Date.now());
  }
}
