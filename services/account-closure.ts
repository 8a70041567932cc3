import { setTimeout as delay } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import { searchAttributeKeys } from '../domain/search-attributes.js';
import type { Stores } from '../store/index.js';
import type { TaskQueues } from '../worker/task-queues.js';
import { deleteHistory, terminated } from './workflow-history.js';
import { stopRecovery } from './recovery-stop.js';

export type ClosureOutcome =
  | { kind: 'not_found' }
  /** Recoveries finishing an attempt under way; they stop right after it. Run the closure again. */
  | { kind: 'finishing'; transactionIds: string[] }
  | {
      kind: 'closed';
      recoveriesStopped: number;
      workflowsTerminated: number;
      workflowHistories: number;
      documents: number;
    };

/** What one pass of removal found and removed. */
interface Removed {
  workflowsTerminated: number;
  workflowHistories: number;
  documents: number;
}

/** How many passes of removal at most: each takes what was written while the one before ran. */
const maxPasses = 3;

/**
 * Terminates the account's running workflows, deletes every history of it and every document of it.
 * Workflows in `done` were taken by an earlier pass (Temporal lists them until their deletion has run).
 */
async function removePass(
  temporal: Client,
  stores: Stores,
  accountId: string,
  done: Set<string>,
): Promise<Removed> {
  let workflowsTerminated = 0;
  let workflowHistories = 0;
  const query = `${searchAttributeKeys.accountId.name} = "${accountId}"`;
  const executions: Array<{ workflowId: string; running: boolean }> = [];
  for await (const e of temporal.workflow.list({ query }))
    if (!done.has(e.workflowId))
      executions.push({ workflowId: e.workflowId, running: e.status.name === 'RUNNING' });
  for (const { workflowId, running } of executions) {
    done.add(workflowId);
    if (running && (await terminated(temporal, workflowId, 'account closed'))) workflowsTerminated += 1;
    if (await deleteHistory(temporal, workflowId)) workflowHistories += 1;
  }
  const documents = await stores.deleteAccountData(accountId);
  return { workflowsTerminated, workflowHistories, documents };
}

/**
 * Removes everything of the account, in passes until one finds nothing: work that started while a pass ran
 * (the last page of a card sweep, the use of a link opened just before the account closed, a process whose
 * cached copy of the account had not expired) is taken by the next.
 */
async function removeAll(temporal: Client, stores: Stores, accountId: string): Promise<Removed> {
  const total: Removed = { workflowsTerminated: 0, workflowHistories: 0, documents: 0 };
  const done = new Set<string>();
  for (let pass = 0; pass < maxPasses; pass += 1) {
    const removed = await removePass(temporal, stores, accountId, done);
    total.workflowsTerminated += removed.workflowsTerminated;
    total.workflowHistories += removed.workflowHistories;
    total.documents += removed.documents;
    if (removed.workflowHistories === 0 && removed.documents === 0) break;
  }
  return total;
}

/**
 * Closes a merchant's account for good (the merchant leaves): nothing new is taken (keys revoked, connector
 * intake URLs off, hosted pages and the card health sweep stopped), recoveries under way stop before any
 * further attempt (as `not_owed`: nothing more is charged, no webhook is sent), the account's other
 * workflows (webhook deliveries, hosted-link follow-ups, card sweeps) are terminated, every workflow history
 * of the account is deleted from Temporal and every document of the account is deleted, the account last.
 * While a recovery finishes an attempt under way it answers `finishing` and goes no further; running it
 * again continues where it stopped. Used by `recoup accounts close`.
 */
export async function closeAccount(
  deps: { stores: Stores; temporal: Client; queues: TaskQueues; accountCacheMs: number },
  accountId: string,
): Promise<ClosureOutcome> {
  const { stores, temporal } = deps;
  if (!(await stores.accounts.find(accountId))) return { kind: 'not_found' };
  await stores.accounts.shut(accountId);
  // Processes that read the account just before still take a connector's event until their copy expires.
  await delay(deps.accountCacheMs);
  let recoveriesStopped = 0;
  const finishing: string[] = [];
  for (const r of await stores.recoveries.underWay(accountId)) {
    const outcome = await stopRecovery(deps, accountId, { transactionId: r._id }, 'not_owed');
    if (outcome.kind === 'pending') finishing.push(outcome.doc.publicId);
    if (outcome.kind === 'stopped') recoveriesStopped += 1;
  }
  if (finishing.length > 0) return { kind: 'finishing', transactionIds: finishing };
  return { kind: 'closed', recoveriesStopped, ...(await removeAll(temporal, stores, accountId)) };
}
