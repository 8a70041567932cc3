import { activityInfo } from '@temporalio/activity';
import type { z } from 'zod';

/**
 * Where an earlier try of the running activity had got to, as the details of its last heartbeat say; a
 * first try, or one whose details are of another shape (an earlier version's), starts from `fresh`.
 */
export function resumedProgress<T>(schema: z.ZodType<T>, fresh: () => T): T {
  const resumed = schema.safeParse(activityInfo().heartbeatDetails);
  return resumed.success ? resumed.data : fresh();
}
