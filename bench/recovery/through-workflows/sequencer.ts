import { Context } from '@temporalio/activity';
import type { Activities } from '../../../activities/index.js';

interface Turn {
  account: string;
  index: number;
  /** When the recovery's next step is due (its arrival, or the end of its wait); null while it is not waiting. */
  at: number | null;
}

/**
 * Production runs the steps of one account's recoveries that fall due at the same instant side by side, and
 * they race for the account's learning statistics. The pure run takes them one at a time in payment order,
 * each seeing what the ones before it learned; the sequencer holds the workflows to the same order: a step
 * starts (screens, or reloads the statistics after a wait) only once the account's lower-numbered recoveries
 * due at the same instant have recorded theirs. It orders steps; it decides nothing.
 */
export function createSequencer() {
  const turns = new Map<string, Turn>();
  let waiting: Array<() => void> = [];

  function blocked(workflowId: string): boolean {
    const me = turns.get(workflowId);
    if (!me || me.at === null) return false;
    for (const [id, t] of turns)
      if (id !== workflowId && t.account === me.account && t.at === me.at && t.index < me.index) return true;
    return false;
  }

  return {
    /** A recovery of `account` (payment `index`) will start at `at`. */
    expect(workflowId: string, account: string, index: number, at: number): void {
      turns.set(workflowId, { account, index, at });
    },
    /** The recovery recorded its step: due again at `at` (queued), or not waiting. */
    moved(workflowId: string, at: number | null): void {
      const turn = turns.get(workflowId);
      if (!turn) return;
      turn.at = at;
      const woken = waiting;
      waiting = [];
      for (const wake of woken) wake();
    },
    /** Resolves when the recovery may take its step. */
    async turn(workflowId: string): Promise<void> {
      while (blocked(workflowId)) await new Promise<void>((resolve) => waiting.push(resolve));
    },
  };
}

export type Sequencer = ReturnType<typeof createSequencer>;

/** The activities with each step's start held to the sequencer's order. */
export function sequenced(activities: Activities, sequencer: Sequencer): Activities {
  const workflowId = () => {
    const execution = Context.current().info.workflowExecution;
    if (!execution) throw new Error('A recovery step ran outside a workflow');
    return execution.workflowId;
  };
  return {
    ...activities,
    async screenRecovery(input) {
      await sequencer.turn(workflowId());
      return activities.screenRecovery(input);
    },
    async loadStats(accountId) {
      await sequencer.turn(workflowId());
      return activities.loadStats(accountId);
    },
    async recordRecovery(input) {
      await activities.recordRecovery(input);
      const { state, nextAttemptAt } = input.patch;
      sequencer.moved(workflowId(), state === 'queued' && nextAttemptAt ? Date.parse(nextAttemptAt) : null);
    },
  };
}
