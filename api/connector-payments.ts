import { WorkflowNotFoundError } from '@temporalio/client';
import type { ConnectorPlatform } from '../domain/connectors.js';
import { statusOf } from '../domain/recovery.js';
import { startStopped } from '../services/recovery-start.js';
import { settleStopped } from '../services/stop-settlement.js';
import type { Account } from '../store/accounts.js';
import type { RecoveryDoc } from '../store/recoveries.js';
import { amountDueSignal, paidElsewhereSignal } from '../workflows/recovery-definitions.js';
import { abandonedAfterMs } from './admit-recovery.js';
import type { ConnectorIntakeDeps, ConnectorReceipt } from './connector-intake.js';
import { HttpError } from './http-error.js';

/**
 * 503 for a delivery that found the invoice's recovery stored but not started, too recently to take it
 * over: the event is not marked done, and a delivery after `Retry-After` (once the recovery is older than
 * `abandonedAfterMs`) starts it if its own intake never did.
 */
export function notStartedYet(recovery: RecoveryDoc, now: Date, requestId: string): HttpError {
  const takeOverAt = recovery.createdAt.getTime() + abandonedAfterMs;
  const seconds = Math.max(1, Math.ceil((takeOverAt - now.getTime()) / 1000));
  return new HttpError(
    503,
    {
      error: 'Internal error',
      message: "The invoice's recovery is being started; deliver the event again to make sure it runs.",
      transactionId: recovery.publicId,
      requestId,
    },
    { 'Retry-After': String(seconds) },
  );
}

/**
 * A billing platform's notices of payments made outside Recoup: one that paid the invoice stops its
 * recovery, one that paid part of it lowers what the recovery collects.
 */
export function createPaymentNotices(
  deps: Pick<ConnectorIntakeDeps, 'stores' | 'temporal' | 'queues' | 'clock'>,
) {
  const { stores, temporal, clock } = deps;

  /** Tells the recovery's workflow it was paid elsewhere: false when there is none (it never started or ended). */
  async function signalPaid(recovery: RecoveryDoc): Promise<boolean> {
    try {
      await temporal.workflow.getHandle(recovery.workflowId).signal(paidElsewhereSignal);
      return true;
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return false;
      throw error;
    }
  }

  async function paid(
    account: Account,
    platform: ConnectorPlatform,
    invoiceId: string,
  ): Promise<ConnectorReceipt> {
    const recovery = await stores.recoveries.findByKey(account.id, invoiceId);
    if (!recovery || recovery.connector?.platform !== platform)
      return { action: 'ignored', reason: 'Recoup holds no recovery of this invoice' };
    if (statusOf(recovery.state) === 'succeeded')
      return { action: 'ignored', reason: `The invoice's recovery has ended (${recovery.state})` };
    // Ended without the payment (a Proof Mode control Recoup left alone, or a recovery that failed, was
    // blocked or stopped): the customer paid on their own. Recorded once, so the paywall no longer holds
    // them past due and the report counts the payment collected, in either group alike.
    if (statusOf(recovery.state) !== 'unknown') {
      await settleStopped(stores, recovery, 'paid_elsewhere', clock());
      const action = recovery.state === 'holdout' ? 'control_paid' : 'paid_after_end';
      return { action, transactionId: recovery.publicId };
    }
    // Recorded first: an attempt under way that is the recovery's last, and ends it without the payment,
    // ends it before the signal can stop it; that end is then settled as paid on the customer's own (by the
    // workflow recording it, or below if it came first), as it would be had this notice come after it.
    await stores.recoveries.askStop(recovery._id, 'paid_elsewhere', clock());
    // A recovery whose workflow never started (its intake died) is started told to stop: nothing is charged.
    if (
      !(await signalPaid(recovery)) &&
      !(await startStopped(temporal, deps.queues, recovery, 'paid_elsewhere'))
    )
      await signalPaid(recovery);
    const now = await stores.recoveries.find(account.id, recovery.publicId);
    if (now && statusOf(now.state) !== 'unknown') await settleStopped(stores, now, 'paid_elsewhere', clock());
    return { action: 'paid_elsewhere', transactionId: recovery.publicId };
  }

  /**
   * Part of the invoice was paid outside Recoup: its running recovery is told what is still due, and
   * collects that from its next attempt on. A recovery that has ended, or already collects no more than
   * that, is left as it is.
   */
  async function partlyPaid(
    account: Account,
    platform: ConnectorPlatform,
    due: { invoiceId: string; amountDue: number; currency: string },
    requestId: string,
  ): Promise<ConnectorReceipt> {
    const recovery = await stores.recoveries.findByKey(account.id, due.invoiceId);
    if (!recovery || recovery.connector?.platform !== platform)
      return { action: 'ignored', reason: 'Recoup holds no recovery of this invoice' };
    if (statusOf(recovery.state) !== 'unknown')
      return { action: 'ignored', reason: `The invoice's recovery has ended (${recovery.state})` };
    if (due.currency.toUpperCase() !== recovery.currency)
      return {
        action: 'ignored',
        reason: `The invoice is due in ${due.currency}, its recovery collects ${recovery.currency}`,
      };
    if (due.amountDue >= recovery.amount)
      return { action: 'ignored', reason: `The recovery collects ${recovery.amount}, no more than is due` };
    try {
      await temporal.workflow
        .getHandle(recovery.workflowId)
        .signal(amountDueSignal, { amount: due.amountDue });
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError)) throw error;
      // Stored but not started: the platform delivers the notice again once its recovery runs.
      throw notStartedYet(recovery, clock(), requestId);
    }
    return { action: 'amount_lowered', transactionId: recovery.publicId, amountDue: due.amountDue };
  }

  return { paid, partlyPaid };
}
