import {
  allHandlersFinished,
  condition,
  defineUpdate,
  proxyLocalActivities,
  setHandler,
} from '@temporalio/workflow';

/** The floor's activity: the gateway call, and nothing else. */
export interface FloorActivities {
  chargeFloor(): Promise<boolean>;
}

const { chargeFloor } = proxyLocalActivities<FloorActivities>({ startToCloseTimeout: '30 seconds' });

/** Answers with the charge's outcome, like the recovery workflow's `execute` update. */
export const floorAnswer = defineUpdate<boolean>('answer');

/**
 * The least a Temporal-backed execute can do: started with update-with-start, one local activity (the
 * gateway call), the answer. No persistence, no events. What it achieves is the ceiling the Temporal
 * server and SDK put on execute on this machine.
 */
export async function floorWorkflow(): Promise<void> {
  const charge: { approved?: boolean } = {};
  setHandler(floorAnswer, async () => {
    await condition(() => charge.approved !== undefined);
    return charge.approved!;
  });
  charge.approved = await chargeFloor();
  await condition(allHandlersFinished);
}
