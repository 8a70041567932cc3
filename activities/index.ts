import type { ActivityDeps } from './deps.js';

/** Every activity, bound to its dependencies. Workflows import this module's type only. */
export function createActivities(_deps: ActivityDeps) {
  return {};
}

export type Activities = ReturnType<typeof createActivities>;
