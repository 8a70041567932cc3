import { bundleWorkflowCode, NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import type { TaskQueues } from './task-queues.js';

/** Where the workflow code comes from: a prebuilt bundle (tests, production build) or the source path. */
export type WorkflowSource = { workflowBundle: { codePath: string } } | { workflowsPath: string };

/** The source path of the workflows, for workers that bundle on start. */
export const workflowsPath = new URL('../workflows/index.ts', import.meta.url).pathname;

const quiet = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (message: string) => console.warn(message),
  error: (message: string) => console.error(message),
};

/**
 * The pure domain modules the workflows import. In the reusable V8 context they are evaluated once per
 * workflow thread and shared by every workflow, instead of once per workflow (under load that had been a
 * fifth of the recovery thread's busy time and a third of the webhook thread's). They keep no per-workflow state: local-time's caches memoize pure functions.
 */
const sharedDomainModules = ['declines', 'local-time', 'plan', 'recovery-loop', 'success-model', 'webhooks'];

/** Bundles the workflow code, as the worker does on start and the tests do once for all their workers. */
export async function bundleWorkflows(path = workflowsPath): Promise<{ code: string }> {
  return bundleWorkflowCode({
    workflowsPath: path,
    preloadModules: sharedDomainModules.map((m) => new URL(`../domain/${m}.ts`, import.meta.url).pathname),
    logger: quiet,
  });
}

/** Bundles the workflow source once for all the workers (each would otherwise bundle it again). */
async function bundledOnce(
  source: WorkflowSource,
): Promise<{ workflowBundle: { codePath: string } | { code: string } }> {
  if ('workflowBundle' in source) return source;
  return { workflowBundle: await bundleWorkflows(source.workflowsPath) };
}

/**
 * Creates one worker per task queue (normal recoveries, critical trial conversions, webhook deliveries)
 * over one connection, all sharing the same activities.
 */
export async function createWorkers(opts: {
  connection: NativeConnection;
  namespace: string;
  queues: TaskQueues;
  activities: object;
  source: WorkflowSource;
  options?: Partial<WorkerOptions>;
}): Promise<Worker[]> {
  const base = {
    connection: opts.connection,
    namespace: opts.namespace,
    activities: opts.activities,
    ...(await bundledOnce(opts.source)),
    ...opts.options,
  };
  return Promise.all(
    [opts.queues.critical, opts.queues.recovery, opts.queues.webhooks].map((taskQueue) =>
      Worker.create({ ...base, taskQueue }),
    ),
  );
}

/** Runs workers until `signal` aborts or one fails; shuts the others down either way. */
export async function runWorkers(workers: Worker[], until: Promise<unknown>): Promise<void> {
  const [first, ...rest] = workers;
  if (!first) return;
  const runAll = Promise.all(workers.map((w) => w.run()));
  try {
    await Promise.race([runAll, until]);
  } finally {
    for (const w of [first, ...rest]) if (w.getState() === 'RUNNING') w.shutdown();
    await runAll;
  }
}
