import { asyncLocalStorage } from '@temporalio/activity';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, makeTelemetryFilterString, Runtime } from '@temporalio/worker';
import { indexedValueTypes } from '../worker/search-attributes.js';

let runtimeInstalled = false;
/** The SDK logs every worker state change at INFO, and the time-skipping server's stale tasks at WARN. */
export function quietTemporalRuntime(): void {
  if (runtimeInstalled) return;
  Runtime.install({
    logger: new DefaultLogger('WARN'),
    telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }), forward: {} } },
  });
  runtimeInstalled = true;
}

/**
 * Temporal's time-skipping test server from the toolchain (`testServerPath`, never downloaded), with the
 * same custom search attributes the dev server registers, so workflows start there exactly as in production.
 */
export async function startTimeSkippingServer(testServerPath: string): Promise<TestWorkflowEnvironment> {
  quietTemporalRuntime();
  const env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: testServerPath } },
  });
  await env.connection.operatorService.addSearchAttributes({
    namespace: 'default',
    searchAttributes: indexedValueTypes(),
  });
  return env;
}

/**
 * The clock of a stack on the time-skipping server: inside an activity, the time the server scheduled it
 * (the workflow's clock, not the wall clock); elsewhere, the wall clock.
 */
export function serverClock(): Date {
  const activity = asyncLocalStorage.getStore();
  return activity ? new Date(activity.info.currentAttemptScheduledTimestampMs) : new Date();
}
