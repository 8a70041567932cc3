import type { Client } from '@temporalio/client';
import { statusOf } from '../../domain/recovery.js';
import { stopRecovery } from '../../services/recovery-stop.js';
import type { Stores } from '../../store/index.js';
import type { RecoveryDoc } from '../../store/recoveries.js';
import type { TaskQueues } from '../../worker/task-queues.js';
import { accountOf } from '../context.js';
import { conflict, notFound } from '../http-error.js';
import { reply, route } from '../route.js';
import { ErrorBody } from '../schemas/errors.js';
import { DuplicateBody, StatusRecord, StopPending, StopRequest } from '../schemas/recovery.js';
import { statusRecord } from '../../services/status-record.js';

interface Deps {
  stores: Stores;
  temporal: Client;
  queues: TaskQueues;
}

/** 409: the recovery collected the payment (before the stop, or while being stopped); its outcome stands. */
function ended(doc: RecoveryDoc) {
  return conflict({
    error: 'Recovery has ended',
    message: `The recovery ended ${doc.state} before it could be stopped; its outcome stands.`,
    existingTransactionId: doc.publicId,
    existingStatus: statusOf(doc.state),
    existingRecovered: doc.state === 'succeeded',
  });
}

/** POST /api/recovery/stop: the merchant's way to stop a recovery of a payment made elsewhere or no longer owed. */
export function recoveryStopRoutes(deps: Deps) {
  return [
    route({
      method: 'post',
      path: '/api/recovery/stop',
      tag: 'Recovery',
      summary: 'Stop a recovery before any further attempt',
      description:
        'For a payment the customer paid outside Recoup (paid_elsewhere: status succeeded, not recovered) or that is no longer owed (not_owed: status failed, state stopped). Neither is past due on the paywall afterwards, and no webhook is sent. An attempt already under way (or the lookup of an ambiguous one) finishes first: the answer waits up to 5 s for it, then is 202; if it collected the payment, the answer is 409 with the recovery succeeded. After a 202, an attempt that collects ends the recovery succeeded (its webhook as usual); one that leaves nothing more to try ends it as it would have (failed, blocked), settled as the stop said. A recovery that already ended without the payment (failed, blocked, stopped, or a Proof Mode control) keeps its outcome: the stop records that the customer paid on their own (paid_elsewhere; reports count the payment collected) or owes nothing (not_owed), and the customer is no longer past due for it (200 with the status record). A recovery already stopped is 200 again with its record (a stop asked twice, its first answer lost). Only a recovery Recoup collected is 409.',
      auth: 'secret',
      body: StopRequest,
      responses: {
        200: { description: 'Stopped: the status record as it now stands', schema: StatusRecord },
        202: {
          description: 'An attempt is under way; the recovery stops after it, before any other',
          schema: StopPending,
        },
        404: { description: 'Transaction not found for this client', schema: ErrorBody },
        409: { description: 'Recoup collected the payment; its outcome stands', schema: DuplicateBody },
      },
      async handle(ctx, { body }) {
        const ref = body.transactionId
          ? { transactionId: body.transactionId }
          : { idempotencyKey: body.idempotencyKey ?? '' };
        const outcome = await stopRecovery(deps, accountOf(ctx).id, ref, body.reason);
        switch (outcome.kind) {
          case 'not_found':
            throw notFound('Transaction not found');
          case 'ended':
            throw ended(outcome.doc);
          case 'stopped':
            return reply(200, statusRecord(outcome.doc));
          case 'pending':
            return reply(202, {
              message:
                'Stop requested: an attempt is under way, and the recovery stops after it, before any other. If it collects the payment, its outcome arrives as usual; if it ends the recovery without the payment, the customer is settled as this stop says.',
              transactionId: outcome.doc.publicId,
              status: 'unknown' as const,
              state: outcome.doc.state,
            });
        }
      },
    }),
  ];
}
