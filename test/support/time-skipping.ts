import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { inject } from 'vitest';
import { startTimeSkippingServer } from '../../scripts/time-skipping.js';

/** The toolchain's time-skipping test server (see scripts/time-skipping.ts), as the global setup found it. */
export function startTimeSkipping(): Promise<TestWorkflowEnvironment> {
  return startTimeSkippingServer(inject('testServerPath'));
}
