/** Task queue names, derived from one configurable prefix so several deployments can share a cluster. */
export function taskQueues(prefix: string) {
  return { recovery: `${prefix}-recovery`, critical: `${prefix}-critical`, webhooks: `${prefix}-webhooks` };
}
export type TaskQueues = ReturnType<typeof taskQueues>;
