import { METHODS } from 'node:http';
import Koa from 'koa';
import Router from '@koa/router';
import type { Client } from '@temporalio/client';
import type { Registry } from 'prom-client';
import type { Logger } from '../runtime/logger.js';
import type { EventPublisher } from '../services/events.js';
import type { Stores } from '../store/index.js';
import type { TaskQueues } from '../worker/task-queues.js';
import type { AppState } from './context.js';
import { authenticate } from './middleware/auth.js';
import { errorHandler } from './middleware/errors.js';
import { readBody } from './middleware/json-body.js';
import { rateLimit } from './middleware/rate-limit.js';
import { requestId } from './middleware/request-id.js';
import { httpMetrics } from './metrics.js';
import { buildOpenApi } from './openapi.js';
import { hostedPages } from './pages/index.js';
import { mount, reply, route, type Route } from './route.js';
import { connectorRoutes } from './routes/connectors.js';
import { gatewayWebhookRoutes } from './routes/gateway-webhooks.js';
import { healthRoutes } from './routes/health.js';
import { linkRoutes } from './routes/links.js';
import { predictRoutes } from './routes/predict.js';
import { reportRoutes } from './routes/reports.js';
import { customerRoutes } from './routes/customer.js';
import { eventRoutes } from './routes/events.js';
import { recoveryRoutes } from './routes/recovery.js';
import { recoveriesRoutes } from './routes/recoveries.js';
import { recoveryStopRoutes } from './routes/recovery-stop.js';

/** Everything the API needs, built by the composition root (api/main.ts) or by tests. */
export interface AppDeps {
  log: Logger;
  stores: Stores;
  temporal: Client;
  queues: TaskQueues;
  publicBaseUrl: string;
  clock: () => Date;
  /** Validates, stores and delivers webhook events. */
  events: EventPublisher;
  /** Where request metrics go (served apart by api/main.ts); none are kept without it. */
  metrics?: Registry;
  /** How long execute waits for the first phase before answering 202 (25 s; tests shorten it). */
  firstPhaseDeadlineMs?: number;
  /** How long a recovery waits before charging a card a billing platform reported (2 minutes; tests shorten it). */
  platformCardSettleMs?: number;
  /** Told of every answer that its route's OpenAPI entry does not declare: tests fail on it. */
  undeclared?: (problem: string) => void;
}

/** Builds the Koa application; it opens nothing itself. */
export function createApp(deps: AppDeps): Koa<AppState> {
  const routes: Route[] = [
    ...healthRoutes(deps),
    ...recoveryRoutes(deps),
    ...recoveryStopRoutes(deps),
    ...recoveriesRoutes(deps),
    ...customerRoutes(deps),
    ...linkRoutes(deps),
    ...predictRoutes(deps),
    ...reportRoutes(deps),
    ...connectorRoutes(deps),
    ...gatewayWebhookRoutes(deps),
    ...eventRoutes(deps),
  ];
  const openapi = buildOpenApi(routes, deps.publicBaseUrl);
  routes.push(
    route({
      method: 'get',
      path: '/api/openapi.json',
      tag: 'Meta',
      summary: 'This OpenAPI 3.1 document',
      auth: 'none',
      responses: { 200: { description: 'OpenAPI document' } },
      handle: () => Promise.resolve(reply(200, openapi)),
    }),
  );

  // Every method Node parses is one the router knows: one no route has (TRACE, PROPFIND…) is a client's
  // mistake — 405 where the path has routes, 404 where it has none — never a 501 counted as a server error.
  const router = new Router<AppState>({ methods: METHODS });
  mount(router, routes, {
    auth: (mode) => authenticate(deps.stores.accounts, mode),
    rateLimit: (kind) => rateLimit(deps.stores.rateLimits, kind, deps.clock),
    ...(deps.undeclared ? { undeclared: deps.undeclared } : {}),
  });

  const app = new Koa<AppState>({ proxy: true });
  if (deps.metrics) app.use(httpMetrics(deps.metrics));
  app.use(requestId(deps.log));
  app.use(errorHandler);
  app.use(readBody);
  app.use(hostedPages(deps));
  app.use(router.routes());
  // Not thrown: the router then names the path's methods in `Allow`, as a 405 must; errorHandler gives the body.
  app.use(router.allowedMethods());
  return app;
}
