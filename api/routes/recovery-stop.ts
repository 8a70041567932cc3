import { setTimeout as delay } from 'node:timers/promises';
import { WorkflowNotFoundError, WorkflowUpdateStage, type Client } from '@temporalio/client';
import { statusOf } from '../../domain/recovery.js';
import type { Stores } from '../../store/index.js';
import type { RecoveryDoc } from '../../store/recoveries.js';
import { stopUpdate } from '../../workflows/recovery-definitions.js';
import { accountOf } from '../context.js';
import { conflict, notFound } from '../http-error.js';
import { reply, route } from '../route.js';
import { DuplicateBody, StatusRecord, StopPending, StopRequest } from '../schemas/recovery.js';
import { statusRecord } from '../status-record.js';

interface Deps {
  stores: Stores;
  temporal: Client;
}

/**
 * How long the answer waits for the recovery to stop. A queued recovery stops at once; one whose attempt is
 * under way (or whose ambiguous charge is being looked up) stops after it, so the answer says it will.
 */
const answerWithinMs = 5_000;

/** 409: the recovery had ended (or ended otherwise while being stopped); its outcome stands. */
function ended(doc: RecoveryDoc) {
  return conflict({
    error: 'Recovery has ended',
    message: `The recovery ended ${doc.state} before it could be stopped; its outcome stands.`,
    existingTransactionId: doc.publicId,
    existingStatus: statusOf(doc.state),
    existingRecovered: doc.state === 'succeeded',
  });
}

/** The recovery's state once it has stopped, or null when it has not yet within the wait. */
async function stopAndWait(temporal: Client, doc: RecoveryDoc, reason: StopRequest['reason']) {
  try {
    const update = await temporal.workflow
      .getHandle(doc.workflowId)
      .startUpdate(stopUpdate, { args: [{ reason }], waitForStage: WorkflowUpdateStage.ACCEPTED });
    const timer = new AbortController();
    const timeout = delay(answerWithinMs, null, { signal: timer.signal }).catch(() => null);
    return await Promise.race([update.result(), timeout]).finally(() => timer.abort());
  } catch (error) {
    // The workflow completed meanwhile: the read model has its end.
    if (error instanceof WorkflowNotFoundError) return { state: doc.state };
    throw error;
  }
}

/** POST /api/recovery/stop: the merchant's way to stop a recovery of a payment made elsewhere or no longer owed. */
export function recoveryStopRoutes({ stores, temporal }: Deps) {
  const { recoveries } = stores;
  return [
    route({
      method: 'post',
      path: '/api/recovery/stop',
      tag: 'Recovery',
      summary: 'Stop a recovery before any further attempt',
      description:
        'For a payment the customer paid outside Recoup (paid_elsewhere: status succeeded, not recovered) or that is no longer owed (not_owed: status failed, state stopped). Neither is past due on the paywall afterwards, and no webhook is sent. An attempt already under way finishes first: if it collects the payment, the answer is 409 with the recovery succeeded.',
      auth: 'secret',
      body: StopRequest,
      responses: {
        200: { description: 'Stopped: the status record as it now stands', schema: StatusRecord },
        202: {
          description: 'An attempt is under way; the recovery stops after it, before any other',
          schema: StopPending,
        },
        404: { description: 'Transaction not found for this client' },
        409: { description: 'The recovery has ended; its outcome stands', schema: DuplicateBody },
      },
      async handle(ctx, { body }) {
        const accountId = accountOf(ctx).id;
        const doc = body.transactionId
          ? await recoveries.find(accountId, body.transactionId)
          : await recoveries.findByKey(accountId, body.idempotencyKey ?? '');
        if (!doc) throw notFound('Transaction not found');
        if (statusOf(doc.state) !== 'unknown') throw ended(doc);
        const outcome = await stopAndWait(temporal, doc, body.reason);
        const now = (await recoveries.find(accountId, doc.publicId)) ?? doc;
        if (!outcome)
          return reply(202, {
            message:
              'Stop requested: an attempt is under way, and the recovery stops after it, before any other. Its outcome arrives as usual if it collects the payment.',
            transactionId: now.publicId,
            status: 'unknown' as const,
            state: now.state,
          });
        if (now.state !== 'paid_elsewhere' && now.state !== 'stopped') throw ended(now);
        return reply(200, statusRecord(now));
      },
    }),
  ];
}
