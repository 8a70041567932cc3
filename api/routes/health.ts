import { z } from 'zod';
import type { Client } from '@temporalio/client';
import { pingMongo } from '../../store/mongo.js';
import type { Stores } from '../../store/index.js';
import { version } from '../../runtime/version.js';
import { reply, route } from '../route.js';

const Health = z.object({
  status: z.enum(['ok', 'degraded']),
  version: z.string(),
  checks: z.object({ mongo: z.enum(['ok', 'down']), temporal: z.enum(['ok', 'down']) }),
});

async function temporalUp(temporal: Client): Promise<boolean> {
  try {
    await temporal.workflowService.getSystemInfo({});
    return true;
  } catch {
    return false;
  }
}

/** GET /api/health: really asks MongoDB and Temporal; 503 when either is down. */
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
        const [mongo, temporal] = await Promise.all([pingMongo(deps.stores.db), temporalUp(deps.temporal)]);
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
