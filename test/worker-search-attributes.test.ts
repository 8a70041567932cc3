import { randomUUID } from 'node:crypto';
import { InterceptingCall, Metadata, status, type Interceptor } from '@grpc/grpc-js';
import { Client, Connection } from '@temporalio/client';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { msToTs } from '@temporalio/common/lib/time.js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { RecoveryRequest } from '../domain/recovery-request.js';
import { allSearchAttributeKeys } from '../domain/search-attributes.js';
import { ConfigurationError } from '../runtime/configuration-error.js';
import { createLogger } from '../runtime/logger.js';
import { recoveryStartOptions } from '../services/recovery-start.js';
import { indexedValueTypes, ensureSearchAttributes } from '../worker/search-attributes.js';
import { taskQueues } from '../worker/task-queues.js';
import { recoveryWorkflow } from '../workflows/recovery.js';

// A worker against a Temporal cluster Recoup did not start: the namespace has none of Recoup's search
// attributes, and Temporal refuses every workflow start naming one, so no recovery could ever begin.

let connection: Connection;
const names = allSearchAttributeKeys.map((key) => key.name);
const silent = createLogger('silent', 'test');

beforeAll(async () => {
  connection = await Connection.connect({ address: inject('temporalAddress') });
});
afterAll(async () => {
  await connection.close();
});

/** A namespace registered just now, as an operator would create one on a cluster of their own. */
async function freshNamespace(): Promise<string> {
  const namespace = `sa-${randomUUID().slice(0, 8)}`;
  await connection.workflowService.registerNamespace({
    namespace,
    workflowExecutionRetentionPeriod: msToTs('1 day'),
  });
  return namespace;
}

async function customAttributes(namespace: string) {
  return (await connection.operatorService.listSearchAttributes({ namespace })).customAttributes ?? {};
}

/** Starts a recovery's workflow with the options the API's execute uses (no worker runs it), then ends it. */
async function startRecovery(namespace: string): Promise<void> {
  const transactionId = randomUUID();
  const input = {
    accountId: 'acct_sa',
    transactionId,
    request: RecoveryRequest.parse({ paymentMethodToken: 'tok_visa', amount: 1000 }),
  };
  const client = new Client({ connection, namespace });
  const options = recoveryStartOptions(
    taskQueues('t-sa'),
    `recovery/acct_sa/${transactionId}`,
    input,
    'FAIL',
  );
  const handle = await client.workflow.start(recoveryWorkflow, options);
  await handle.terminate('test done');
}

describe('a worker starting on a namespace without Recoup’s search attributes', () => {
  it('registers every one with its type, so recoveries start at once; a second worker start changes nothing', async () => {
    const namespace = await freshNamespace();
    await expect(startRecovery(namespace)).rejects.toThrow();

    expect(await ensureSearchAttributes(connection, namespace, silent)).toEqual(names);
    expect(await customAttributes(namespace)).toEqual(indexedValueTypes());
    await startRecovery(namespace);

    expect(await ensureSearchAttributes(connection, namespace, silent)).toEqual([]);
    expect(await customAttributes(namespace)).toEqual(indexedValueTypes());
  });

  it('is fine with several workers starting at once', async () => {
    const namespace = await freshNamespace();
    const runs = await Promise.all(
      [1, 2, 3].map(() => ensureSearchAttributes(connection, namespace, silent)),
    );
    expect(new Set(runs.flat())).toEqual(new Set(names));
    expect(await customAttributes(namespace)).toEqual(indexedValueTypes());
    await startRecovery(namespace);
  });

  it('adds only those missing, next to the operator’s own', async () => {
    const namespace = await freshNamespace();
    const [first, ...rest] = allSearchAttributeKeys;
    const theirs = indexedValueTypes([defineSearchAttributeKey('CustomerTier', SearchAttributeType.INT)]);
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: { ...indexedValueTypes(first ? [first] : []), ...theirs },
    });
    expect(await ensureSearchAttributes(connection, namespace, silent)).toEqual(rest.map((key) => key.name));
    expect(await customAttributes(namespace)).toEqual({ ...indexedValueTypes(), ...theirs });
  });
});

describe('a worker that cannot use the namespace', () => {
  it('stops with one sentence naming an attribute that exists with another type', async () => {
    const namespace = await freshNamespace();
    const accountIdAsText = defineSearchAttributeKey('AccountId', SearchAttributeType.TEXT);
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: indexedValueTypes([accountIdAsText]),
    });

    const failure = ensureSearchAttributes(connection, namespace, silent);
    await expect(failure).rejects.toBeInstanceOf(ConfigurationError);
    await expect(failure).rejects.toThrow(
      `Search attribute AccountId exists in Temporal namespace "${namespace}" as Text, but Recoup needs it as Keyword`,
    );
    await expect(failure).rejects.toThrow(/^[^\n]*\.$/);
    expect(Object.keys(await customAttributes(namespace))).toEqual(['AccountId']);
  });

  it('stops with one sentence naming TEMPORAL_NAMESPACE when the namespace does not exist', async () => {
    const failure = ensureSearchAttributes(connection, `missing-${randomUUID().slice(0, 8)}`, silent);
    await expect(failure).rejects.toBeInstanceOf(ConfigurationError);
    await expect(failure).rejects.toThrow(/does not exist at .*set TEMPORAL_NAMESPACE/);
  });
});

/** Temporal Cloud's answer to an API key adding search attributes through the operator service. */
const refuseAddingSearchAttributes: Interceptor = (options, nextCall) => {
  if (!options.method_definition.path.endsWith('/AddSearchAttributes'))
    return new InterceptingCall(nextCall(options));
  return new InterceptingCall(nextCall(options), {
    start: (_metadata, listener) =>
      listener.onReceiveStatus?.({
        code: status.PERMISSION_DENIED,
        details: 'Request unauthorized.',
        metadata: new Metadata(),
      }),
    sendMessage: () => undefined,
    halfClose: () => undefined,
  });
};

describe('a worker the server does not let register search attributes', () => {
  it('warns once with the command that creates the missing ones, and goes on', async () => {
    const namespace = await freshNamespace();
    const logged: string[] = [];
    const log = createLogger('warn', 'test', { write: (line: string) => void logged.push(line) });
    const refusing = await Connection.connect({
      address: inject('temporalAddress'),
      interceptors: [refuseAddingSearchAttributes],
    });
    try {
      expect(await ensureSearchAttributes(refusing, namespace, log)).toEqual([]);
    } finally {
      await refusing.close();
    }
    expect(logged).toHaveLength(1);
    const warning = JSON.parse(logged[0]!) as { level: number; msg: string; reason: string };
    expect(warning.level).toBe(40);
    expect(warning.reason).toBe('Request unauthorized.');
    expect(warning.msg).toContain(
      `temporal operator search-attribute create --namespace ${namespace} --name AccountId --type Keyword --name RecoveryState --type Keyword --name DeclineCode --type Keyword --name NextAttemptAt --type Datetime --name EventType --type Keyword`,
    );
    expect(await customAttributes(namespace)).toEqual({});
  });
});
