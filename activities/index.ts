import { cardSweepActivities } from './card-sweep.js';
import { retentionActivities } from './data-retention.js';
import type { ActivityDeps } from './deps.js';
import { linkActivities } from './links.js';
import { attemptActivities } from './recovery-attempt.js';
import { recordActivities } from './recovery-record.js';
import { screenActivities } from './recovery-screen.js';
import { webhookActivities } from './webhooks.js';
import { writeBackActivities } from './write-back.js';

/** Every activity, bound to its dependencies. Workflows import this module's type only. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...screenActivities(deps),
    ...attemptActivities(deps),
    ...recordActivities(deps),
    ...webhookActivities(deps),
    ...linkActivities(deps),
    ...writeBackActivities(deps),
    ...cardSweepActivities(deps),
    ...retentionActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
