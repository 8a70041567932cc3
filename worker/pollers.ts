import type { Client } from '@temporalio/client';

/** How recently a worker must have polled to count as alive (a long poll lasts about a minute). */
const recentMs = 2 * 60_000;

type Seconds = number | { toNumber(): number } | null | undefined;

function toMs(seconds: Seconds): number {
  if (seconds === null || seconds === undefined) return 0;
  return (typeof seconds === 'number' ? seconds : seconds.toNumber()) * 1000;
}

/**
 * True when a worker polled the workflow task queue recently; with `identitySuffix`, only a worker whose
 * identity ends with it counts (the SDK's default identity is `<pid>@<hostname>`).
 */
export async function hasRecentPoller(
  client: Client,
  taskQueue: string,
  opts: { now: Date; identitySuffix?: string },
): Promise<boolean> {
  const { pollers } = await client.workflowService.describeTaskQueue({
    namespace: client.options.namespace,
    taskQueue: { name: taskQueue },
  });
  return (pollers ?? []).some(
    (p) =>
      (opts.identitySuffix === undefined || (p.identity ?? '').endsWith(opts.identitySuffix)) &&
      opts.now.getTime() - toMs(p.lastAccessTime?.seconds) < recentMs,
  );
}
