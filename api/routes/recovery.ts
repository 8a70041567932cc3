import type { Client } from '@temporalio/client';
import { RecoveryRequest, recoveryRequestFor } from '../../domain/recovery-request.js';
import type { Stores } from '../../store/index.js';
import type { RecoveryDoc } from '../../store/recoveries.js';
import { statusRecord } from '../../services/status-record.js';
import type { TaskQueues } from '../../worker/task-queues.js';
import { accountOf } from '../context.js';
import { notFound } from '../http-error.js';
import { reply, route } from '../route.js';
import {
  BlockedBody,
  DuplicateBody,
  EngineUnavailableBody,
  QueuedResult,
  RecoveryResult,
  StatusParams,
  StatusQuery,
  StatusRecord,
} from '../schemas/recovery.js';
import { ErrorBody } from '../schemas/errors.js';
import { admitRecovery } from '../admit-recovery.js';
import { launchRecovery } from '../launch-recovery.js';

interface Deps {
  stores: Stores;
  temporal: Client;
  queues: TaskQueues;
  clock: () => Date;
  firstPhaseDeadlineMs?: number;
}

const statusResponses = {
  200: { description: 'Status record', schema: StatusRecord },
  404: { description: 'Transaction not found for this client', schema: ErrorBody },
};

/** The status record of an account's recovery, or 404 (also for other accounts' ids). */
function statusAnswer(doc: RecoveryDoc | null) {
  if (!doc) throw notFound('Transaction not found');
  return reply(200, statusRecord(doc));
}

/** POST /api/recovery/execute and the two status lookups. */
export function recoveryRoutes(deps: Deps) {
  const { recoveries } = deps.stores;
  const { clock } = deps;
  return [
    route({
      method: 'post',
      path: '/api/recovery/execute',
      tag: 'Recovery',
      summary: 'Recover a failed payment',
      description:
        'Order of checks: key (401) → rate limit (429) → body (400) → idempotency key (409) → 5-minute velocity (409) → engine.',
      auth: 'secret',
      rateLimit: 'execute',
      body: RecoveryRequest,
      bodyFor: (ctx) => recoveryRequestFor(accountOf(ctx).gateways[0]?.kind ?? 'test'),
      responses: {
        200: {
          description: 'Recovered (success true), exhausted (success false) or Proof Mode holdout',
          schema: RecoveryResult,
        },
        202: {
          description: 'Queued for a smart-time retry, or the gateway answer was ambiguous (status unknown)',
          schema: QueuedResult,
        },
        403: { description: 'Blocked; do not retry', schema: BlockedBody },
        409: {
          description: 'Duplicate: same idempotency key, or same card and amount within 5 minutes',
          schema: DuplicateBody,
        },
        503: {
          description:
            'The recovery engine (Temporal) is unreachable: either nothing was started (safe to retry), or retrying resumes the recovery (with the same idempotencyKey; without one, the same request within 5 minutes) (Retry-After: 5)',
          schema: EngineUnavailableBody,
        },
      },
      async handle(ctx, { body: req }) {
        const admission = await admitRecovery(deps.stores, accountOf(ctx), req, clock());
        if (admission.kind === 'duplicate') throw admission.error;
        return launchRecovery(deps, admission.doc, ctx.state.requestId);
      },
    }),
    route({
      method: 'get',
      path: '/api/recovery/status/:transactionId',
      tag: 'Recovery',
      summary: 'Status of a recovery by transactionId (either form)',
      auth: 'secret',
      params: StatusParams,
      responses: statusResponses,
      handle: async (ctx, { params }) =>
        statusAnswer(await recoveries.find(accountOf(ctx).id, params.transactionId)),
    }),
    route({
      method: 'get',
      path: '/api/recovery/status',
      tag: 'Recovery',
      summary: 'Status of a recovery by the idempotencyKey given to execute',
      auth: 'secret',
      query: StatusQuery,
      responses: statusResponses,
      handle: async (ctx, { query }) =>
        statusAnswer(await recoveries.findByKey(accountOf(ctx).id, query.idempotencyKey)),
    }),
  ];
}
