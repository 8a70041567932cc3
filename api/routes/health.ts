import { z } from 'zod';
import type { Client } from '@temporalio/client';
import { pingMongo } from '../../store/mongo.js';
import type { Stores } from '../../store/index.js';
import { version } from '../../runtime/version.js';
import { within } from '../../runtime/within.js';
import { reply, route } from '../route.js';

const Health = z.object({
  status: z.enum(['ok', 'degraded']),
  version: z.string(),
  checks: z.object({ mongo: z.enum(['ok', 'down']), temporal: z.enum(['ok', 'down']) }),
});

/** How long the health check waits for each dependency: a load balancer's probe gives up soon after. */
const answerWithinMs = 2_000;

async function temporalUp(temporal: Client): Promise<boolean> {
  try {
    await temporal.withDeadline(Date.now() + answerWithinMs, () =>
      temporal.workflowService.getSystemInfo({}),
    );
    return true;
  } catch {
    return false;
  }
}

/** MongoDB answers a ping in time (a down server is otherwise only given up on after server selection's 10 s). */
async function mongoUp(stores: Stores): Promise<boolean> {
  return (await within(answerWithinMs, pingMongo(stores.db))) === true;
}

/** GET /api/health: really asks MongoDB and Temporal; 503 when either is down or does not answer within 2 s. */
export function healthRoutes(deps: { stores: Stores; temporal: Client }) {
  return [
    route({
      method: 'get',
      path: '/api/health',
      tag: 'Health',
      summary: 'Liveness and dependency check',
      auth: 'none',
      responses: {
        200: { description: 'All dependencies answer', schema: Health },
        503: { description: 'A dependency is down', schema: Health },
      },
      async handle() {
        const [mongo, temporal] = await Promise.all([mongoUp(deps.stores), temporalUp(deps.temporal)]);
        const ok = mongo && temporal;
        return reply(ok ? 200 : 503, {
          status: ok ? 'ok' : 'degraded',
          version,
          checks: { mongo: mongo ? 'ok' : 'down', temporal: temporal ? 'ok' : 'down' },
        });
      },
    }),
  ];
}
