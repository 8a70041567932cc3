import { TestWorkflowEnvironment } from '@temporalio/testing';
import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes.js';
import { inject } from 'vitest';
import { searchAttributes } from '../../scripts/servers.js';
import { quietTemporalRuntime } from './stack.js';

/**
 * Temporal's time-skipping test server from the toolchain (never downloaded), with the same custom search
 * attributes the dev server registers, so workflows start there exactly as in production.
 */
export async function startTimeSkipping(): Promise<TestWorkflowEnvironment> {
  quietTemporalRuntime();
  const env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: inject('testServerPath') } },
  });
  const types: Record<string, number> = {};
  for (const [name, type] of Object.entries(searchAttributes)) {
    const encoded = encodeSearchAttributeIndexedValueType(type.toUpperCase() as Uppercase<typeof type>);
    if (encoded === undefined) throw new Error(`Unknown search attribute type ${type}`);
    types[name] = encoded;
  }
  await env.connection.operatorService.addSearchAttributes({ namespace: 'default', searchAttributes: types });
  return env;
}
