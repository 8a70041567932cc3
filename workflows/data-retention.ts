import {
  condition,
  continueAsNew,
  defineSignal,
  isCancellation,
  patched,
  proxyActivities,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { nextOutboxLookAt, outboxLooked, outboxTold, type OutboxWatch } from '../domain/webhooks.js';
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
 * A look for stranded events is retried while the database does not answer, for up to half an hour: then
 * the next look (or the daily run) finds them still, and the check is never held up for longer.
 */
const { resumeStrandedEvents } = proxyActivities<Activities>({
  scheduleToCloseTimeout: '30 minutes',
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '10 seconds', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

/**
 * A process is about to record events (each publisher says so before it stores one, at most every
 * `outboxWatchMs - outboxWatchRenewMs`): the outbox check looks for those left stranded.
 */
export const eventsRecordedSignal = defineSignal('eventsRecorded');

/**
 * Workflow version: the run answers `eventsRecordedSignal` with looks for stranded events. A run an earlier
 * worker took past such a signal, which it had no handler for, replays as it ran.
 */
const outboxCheckPatch = 'outbox-check';

/**
 * The outbox check: once told that events are being recorded, it looks for those stranded (recorded, their
 * delivery never started: the process died in between, or Temporal refused the start) as soon as they
 * could be, and starts their deliveries; with nothing recorded, it waits without a timer.
 */
class OutboxCheck {
  looking = false;

  constructor(private watch: OutboxWatch | null) {}

  /** What the next history carries over: events told of that were not looked for yet. */
  get carried(): OutboxWatch | null {
    return this.watch;
  }

  told(): void {
    this.watch = outboxTold(this.watch, Date.now());
  }

  async run(): Promise<never> {
    for (;;) {
      await condition(() => this.watch !== null);
      if (patched(outboxCheckPatch)) await this.lookWhenDue();
      else this.watch = null;
    }
  }

  private async lookWhenDue(): Promise<void> {
    const watch = this.watch;
    if (watch === null) return;
    const due = nextOutboxLookAt(watch);
    if (due > Date.now()) await sleep(due - Date.now());
    const asOf = Date.now();
    this.looking = true;
    try {
      await resumeStrandedEvents({ asOf });
    } catch (error) {
      // Given up on (the Temporal UI shows why): the next look, or the daily run, finds them still.
      if (isCancellation(error)) throw error;
    } finally {
      this.looking = false;
    }
    // Told again during the look, the watch's `until` moved on: what the look covered is the same.
    this.watch = outboxLooked(this.watch ?? watch, asOf);
  }
}

/**
 * The deployment's daily data retention (started by every worker, once): each day at the sweep hour it
 * deletes the records of every account with a `dataRetentionDays` that are older than that, and starts the
 * deliveries of events left stranded. In between, the outbox check starts those within minutes.
 */
export async function dataRetentionWorkflow(carried?: OutboxWatch | null): Promise<void> {
  const check = new OutboxCheck(carried ?? null);
  setHandler(eventsRecordedSignal, () => check.told());
  // A look a minute while events are recorded grows the history far faster than the daily runs: Temporal
  // says when to start it over (never during a look). A history of daily runs alone never gets that long.
  const historyFull = () => workflowInfo().continueAsNewSuggested && !check.looking;
  await Promise.race([
    check.run(),
    everyDay(async (nowMs) => {
      try {
        await purgeExpiredData({ asOf: nowMs });
      } catch (error) {
        // Failed for good today (the Temporal UI shows why): tomorrow's run deletes the same and more.
        if (isCancellation(error)) throw error;
      }
    }, historyFull),
  ]);
  const next = check.carried;
  await continueAsNew<typeof dataRetentionWorkflow>(...(next ? [next] : []));
}
