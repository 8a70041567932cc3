import { HandlerUnfinishedPolicy } from '@temporalio/common';
import {
  proxyLocalActivities,
  setHandler,
  condition,
  patched,
  upsertSearchAttributes,
  uuid4,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { RecordPatch } from '../activities/recovery-record.js';
import { eventIdFor } from '../domain/event-ids.js';
import type { EventName, EventPayload } from '../domain/events.js';
import {
  statusOf,
  type FirstPhaseOutcome,
  type RecoveryInput,
  type RecoveryState,
  type StopReason,
} from '../domain/recovery.js';
import { searchAttributeKeys } from '../domain/search-attributes.js';
import {
  amountDueSignal,
  answeredProcessingUpdate,
  executeUpdate,
  paidElsewhereSignal,
  stateQuery,
  stopUpdate,
} from './recovery-definitions.js';

/**
 * Store writes retry until they succeed: they are idempotent and nothing may be lost. Past 10 s a retry
 * waits on a workflow timer, not in the worker holding the workflow task (which heartbeats that task every
 * 8 s, 3 events each: a day of MongoDB outage was 30,000 events, and Temporal ends a workflow at 51,200);
 * retries 5 minutes apart keep a day's outage to a few thousand, and resume within 5 minutes of its end.
 */
const storeWrite = {
  startToCloseTimeout: '30 seconds',
  localRetryThreshold: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 minutes' },
} as const;
/**
 * The read model and the events are written locally, inside the workflow task that answers (see
 * recovery.ts): the first phase, its record, its events and the end of the workflow are one task (for an
 * ending that asks for a new card, two, then one more to end the workflow), with no round trip through a
 * task queue. An event costs the answer one insert and one workflow start (and, once every 90 s per
 * worker, a signal to the outbox check).
 */
const { recordRecovery, emitEvent, claimFailureId } = proxyLocalActivities<Activities>(storeWrite);

/** Workflow version: a failure ending the first phase claims its FAILED_API_ id in the store first. */
const failureIdClaimPatch = 'failure-id-claim';

/** Workflow version: a platform's partial payment lowers the amount the recovery collects. */
const amountDuePatch = 'amount-due-signal';

/** Workflow version: a stop is honoured during the first phase once the merchant holds "still processing". */
const stopInFirstPhasePatch = 'stop-in-first-phase';

/** Workflow version: an event's id is its own (`eventIdFor`), not the next uuid of the workflow's sequence. */
const eventIdsByNamePatch = 'event-ids-by-name';

/** The workflow's shared state and the three things every step does: record, answer, emit. */
export class RecoveryContext {
  private first: FirstPhaseOutcome | undefined;
  /** The id the merchant holds for this recovery; webhooks carry the same one. */
  publicId: string;
  state: RecoveryState = 'processing';
  attemptCount = 0;
  nextAttemptAt: string | null = null;
  /** What the recovery collects: the request's amount, or less once part of it was paid elsewhere. */
  amount: number;
  /** A lower amount still due, reported by the billing platform and not taken on yet. */
  private amountDue: number | undefined;
  private stopReason: StopReason | undefined;
  private ended = false;
  private stopsWaiting = 0;
  /** The execute call answered "still processing" before the first phase ended. */
  private answeredProcessing = false;
  /** This workflow holds the store's claim that its answer is a failure under FAILED_API_. */
  private failureClaimed = false;
  /**
   * NextAttemptAt is set: it is unset once the recovery leaves `queued`, so that operators' queries on it
   * find only recoveries waiting for an attempt (never set, it is left out: no change to older histories).
   */
  private nextAttemptTagged = false;

  constructor(readonly input: RecoveryInput) {
    this.publicId = input.transactionId;
    this.amount = input.request.amount;
    // A stop may end the recovery before its first phase once execute has answered 202: that call no longer
    // waits for this answer, which is then never given.
    setHandler(
      executeUpdate,
      async () => {
        await condition(() => this.first !== undefined);
        return this.first!;
      },
      { unfinishedPolicy: HandlerUnfinishedPolicy.ABANDON },
    );
    setHandler(answeredProcessingUpdate, () => {
      if (this.first !== undefined) return this.first;
      this.answeredProcessing = true;
      return null;
    });
    setHandler(paidElsewhereSignal, () => void (this.stopReason ??= 'paid_elsewhere'));
    setHandler(amountDueSignal, ({ amount }) => {
      if (Number.isInteger(amount) && amount > 0 && amount < (this.amountDue ?? this.amount))
        this.amountDue = amount;
    });
    setHandler(stopUpdate, async ({ reason }) => {
      this.stopReason ??= reason;
      this.stopsWaiting += 1;
      await condition(() => this.ended);
      this.stopsWaiting -= 1;
      return { state: this.state };
    });
    setHandler(stateQuery, () => ({
      state: this.state,
      attempts: this.attemptCount,
      nextAttemptAt: this.nextAttemptAt,
    }));
  }

  /**
   * Moves to `state` and, if the synchronous answer is still open, gives it: the read model is written
   * first, so a status lookup right after the answer agrees with it. A failure answered at once gets the
   * FAILED_API_ id, which its webhook then carries too; not when the execute call already answered "still
   * processing" with the bare id, which its webhook must then carry.
   */
  async conclude(state: RecoveryState, patch: RecordPatch, outcome: FirstPhaseOutcome): Promise<void> {
    if (outcome.kind === 'failed') this.publicId = await this.failureId();
    await this.record(state, patch);
    this.first ??= outcome;
  }

  /** The merchant holds an answer already: the first phase's, or execute's "still processing" (202). */
  get answered(): boolean {
    return this.first !== undefined || this.answeredProcessing;
  }

  /**
   * The id a failure concluded now carries: FAILED_API_ while its synchronous answer is still open; the bare
   * id once answered, or when the caller answered with it at the start (a billing platform's intake). While
   * open, the FAILED_API_ id is claimed in the store first: an execute call that stopped waiting for the
   * note that it answers 202 (a charge held this workflow's task) claims the bare id there before it
   * answers, and whichever claim came first is the id the merchant holds — and so the webhook's.
   */
  async failureId(): Promise<string> {
    if (this.answered || this.input.answeredAtStart) return this.publicId;
    // (`patched`: recoveries a worker of an earlier version took past this point replay as they ran.)
    if (!this.failureClaimed && patched(failureIdClaimPatch)) {
      const { accountId, transactionId } = this.input;
      if (!(await claimFailureId({ accountId, transactionId }))) {
        this.answeredProcessing = true;
        return this.publicId;
      }
      this.failureClaimed = true;
    }
    return `FAILED_API_${this.input.transactionId}`;
  }

  /** Moves to `state`: read model first, then search attributes for operators. */
  async record(state: RecoveryState, patch: RecordPatch = {}): Promise<void> {
    // Ends now: a final state recorded again (a failed write-back after success) ends nothing.
    const ends = statusOf(this.state) === 'unknown' && statusOf(state) !== 'unknown';
    this.state = state;
    if (patch.nextAttemptAt !== undefined) this.nextAttemptAt = patch.nextAttemptAt;
    await recordRecovery({
      transactionId: this.input.transactionId,
      patch: { state, publicId: this.publicId, ...patch },
      ends,
    });
    const queuedUntil = state === 'queued' ? this.nextAttemptAt : null;
    upsertSearchAttributes([
      { key: searchAttributeKeys.recoveryState, value: state },
      ...(patch.lastDeclineCode
        ? [{ key: searchAttributeKeys.declineCode, value: patch.lastDeclineCode }]
        : []),
      ...(queuedUntil
        ? [{ key: searchAttributeKeys.nextAttemptAt, value: new Date(queuedUntil) }]
        : this.nextAttemptTagged
          ? [{ key: searchAttributeKeys.nextAttemptAt, value: null }]
          : []),
    ]);
    this.nextAttemptTagged = queuedUntil !== null;
  }

  /** The merchant holds an answer (see `answered`), or the caller answered at the start: a stop can come. */
  get holdsAnswer(): boolean {
    return this.answered || this.input.answeredAtStart === true;
  }

  /** A stop recorded on the recovery (asked through the API) whose update the workflow never received. */
  heedStop(reason: StopReason): void {
    this.stopReason ??= reason;
  }

  /**
   * Why the recovery is to stop before its next attempt; null while nobody asked. Once the merchant holds
   * an answer: the first phase's, or "still processing" (execute's 202, a platform's intake), so a
   * first-phase cascade (backup gateways, fallback cards) stops too. A stop that comes while an execute call
   * still waits for the first phase waits for its answer: that call is answered first.
   */
  get stopRequested(): StopReason | null {
    if (this.stopReason === undefined) return null;
    if (this.first !== undefined) return this.stopReason;
    // (`patched`: recoveries a worker of an earlier version took past this point replay as they ran.)
    const holdsProcessing = this.answeredProcessing || this.input.answeredAtStart === true;
    return holdsProcessing && patched(stopInFirstPhasePatch) ? this.stopReason : null;
  }

  /**
   * Takes on the lower amount the billing platform reported still due, if any: the read model first, so
   * status, reports and every later charge and event carry it. Called before each step (never mid-charge),
   * but not before the success a charge ends with: that records the amount it collected.
   */
  async takeAmountDue(): Promise<void> {
    const due = this.amountDue;
    // (`patched`: a recovery an earlier worker ran, which had no such signal, replays as it ran.)
    if (due === undefined || due >= this.amount || !patched(amountDuePatch)) return;
    this.amount = due;
    await this.record(this.state, { amount: due });
  }

  /** The recovery has ended: stop updates answer with its final state before the workflow completes. */
  async end(): Promise<void> {
    this.ended = true;
    await condition(() => this.stopsWaiting === 0);
  }

  /** Lets operators find the recovery by its latest decline code. */
  tagDecline(code: string): void {
    upsertSearchAttributes([{ key: searchAttributeKeys.declineCode, value: code }]);
  }

  /**
   * The id of the next event the workflow publishes, named `event`: deterministic, so a replayed or retaken
   * step does not send it twice, and different for another event drawn at the same point (`eventIdFor`).
   */
  eventId(event: EventName): string {
    const drawn = uuid4();
    // (`patched`: a recovery an earlier worker ran replays with the ids it published.)
    return patched(eventIdsByNamePatch) ? eventIdFor(drawn, event) : drawn;
  }

  /** Records and sends one event under its own deterministic id. */
  async emit(payload: EventPayload): Promise<void> {
    await emitEvent({ accountId: this.input.accountId, eventId: this.eventId(payload.event), payload });
  }
}
