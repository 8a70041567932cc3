import { resolve } from 'node:path';
import { z } from 'zod';
import { variableProblems } from '../runtime/config.js';

const port = z.coerce.number().int().min(1).max(65535);

/**
 * What `npm start` reads beyond runtime/config.ts: the ports of the servers it starts itself. Setting
 * TEMPORAL_ADDRESS or MONGODB_URI means "use that server" and the dev stack does not start its own.
 */
const DevStackEnv = z.object({
  PORT: port.default(3000),
  DATA_DIR: z.string().default('.data'),
  TEMPORAL_PORT: port.default(7233),
  TEMPORAL_UI_PORT: port.default(8233),
  MONGO_PORT: port.default(27017),
  // The API's metrics on this port, the worker's on the next.
  METRICS_PORT: port.max(65534).default(9464),
  TEMPORAL_ADDRESS: z.string().min(1).optional(),
  // The dev server is started with this namespace, so the worker and the API find it there.
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  MONGODB_URI: z.string().min(1).optional(),
});

/** The variables `npm start` reads itself (it passes the rest on to the API and the worker). */
export const devStackVariables = Object.keys(DevStackEnv.shape) as Array<keyof typeof DevStackEnv.shape>;

/** The dev stack's settings, parsed once. */
export interface DevStackConfig {
  apiPort: number;
  dataDir: string;
  temporal: { external: string } | { port: number; uiPort: number; namespace: string };
  mongo: { external: string } | { port: number };
  /** Prometheus metrics: the API's on `api`, the worker's on `worker` (the next port). */
  metrics: { api: number; worker: number };
}

/** Parses the environment; throws one error naming every bad variable. */
export function loadDevStackConfig(env: NodeJS.ProcessEnv): DevStackConfig {
  const parsed = DevStackEnv.safeParse(env);
  // An empty DATA_DIR would put the data in the working directory, the repository's root.
  const problems = variableProblems(devStackVariables, env, parsed.error?.issues);
  if (!parsed.success || problems.length > 0)
    throw new Error(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  const e = parsed.data;
  return {
    apiPort: e.PORT,
    dataDir: resolve(e.DATA_DIR),
    temporal: e.TEMPORAL_ADDRESS
      ? { external: e.TEMPORAL_ADDRESS }
      : { port: e.TEMPORAL_PORT, uiPort: e.TEMPORAL_UI_PORT, namespace: e.TEMPORAL_NAMESPACE },
    mongo: e.MONGODB_URI ? { external: e.MONGODB_URI } : { port: e.MONGO_PORT },
    metrics: { api: e.METRICS_PORT, worker: e.METRICS_PORT + 1 },
  };
}
