import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { inject } from 'vitest';
import { serverClock, startTimeSkippingServer } from '../../scripts/time-skipping.js';
import { startStack, type Stack } from './stack.js';

/** The toolchain's time-skipping test server (see scripts/time-skipping.ts), as the global setup found it. */
export function startTimeSkipping(): Promise<TestWorkflowEnvironment> {
  return startTimeSkippingServer(inject('testServerPath'));
}

/** The real service on the time-skipping server: its workers and client, and the server's clock. */
export function stackOnTimeSkipping(
  env: TestWorkflowEnvironment,
  opts: Omit<NonNullable<Parameters<typeof startStack>[0]>, 'temporal' | 'clock'> = {},
): Promise<Stack> {
  return startStack({
    ...opts,
    temporal: { client: env.client, nativeConnection: env.nativeConnection },
    clock: serverClock,
  });
}

/** Skips the server's clock forward to `at` (epoch ms); nothing when it is there already. */
export async function skipTo(env: TestWorkflowEnvironment, at: number): Promise<void> {
  const now = await env.currentTimeMs();
  if (at > now) await env.sleep(at - now);
}
