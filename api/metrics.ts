import { createServer, type Server } from 'node:http';
import type { Next } from 'koa';
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';
import type { AppContext } from './context.js';

/** The API process's metrics: Node's own (CPU, memory, event-loop lag, GC) and every request's duration. */
export function createApiRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}

/**
 * Times every request by method, route template and status. The route is the template a route or hosted
 * page was registered with (`/api/recovery/status/:transactionId`), never the raw path, so a scanner of
 * random paths adds one series (`unmatched`), not one per path.
 */
export function httpMetrics(registry: Registry) {
  const duration = new Histogram({
    name: 'recoup_http_request_duration_seconds',
    help: 'API and hosted-page requests by method, route template and status (the _count is the requests)',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  return async (ctx: AppContext, next: Next): Promise<void> => {
    const stop = duration.startTimer();
    try {
      await next();
    } finally {
      stop({ method: ctx.method, route: ctx.state.route ?? 'unmatched', status: String(ctx.status) });
    }
  };
}

/**
 * Serves the registry at `/metrics` on its own address, apart from the public API, for Prometheus to
 * scrape. Resolves once listening.
 */
export function serveMetrics(registry: Registry, at: { host: string; port: number }): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('Not found: metrics are at /metrics\n');
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'Content-Type': registry.contentType }).end(text),
      (error: unknown) => res.writeHead(500, { 'Content-Type': 'text/plain' }).end(`${String(error)}\n`),
    );
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(at.port, at.host, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}
