import { isGrpcServiceError, type Connection } from '@temporalio/client';
import { SearchAttributeType } from '@temporalio/common';
import {
  encodeSearchAttributeIndexedValueType,
  type SearchAttributeKey,
} from '@temporalio/common/lib/search-attributes.js';
import type { temporal } from '@temporalio/proto';
import { allSearchAttributeKeys, cliTypeName } from '../domain/search-attributes.js';
import { ConfigurationError } from '../runtime/configuration-error.js';
import type { Logger } from '../runtime/logger.js';

type IndexedValueType = temporal.api.enums.v1.IndexedValueType;
type Key = SearchAttributeKey<SearchAttributeType>;

const grpcStatus = {
  invalidArgument: 3,
  notFound: 5,
  alreadyExists: 6,
  permissionDenied: 7,
  unimplemented: 12,
};

/** Adding attributes the namespace already has is no error; a few rounds cover workers adding them at once. */
const maxRounds = 3;
/** How long the server may take to let workflows use attributes just added. */
const usableWithinMs = 30_000;

function indexedValueType(type: SearchAttributeType): IndexedValueType {
  const encoded = encodeSearchAttributeIndexedValueType(type);
  if (encoded === undefined) throw new Error(`Unknown search attribute type ${type}`);
  return encoded;
}

/** The attributes by name with their types as Temporal's API numbers them, for `addSearchAttributes`. */
export function indexedValueTypes(
  keys: ReadonlyArray<Key> = allSearchAttributeKeys,
): Record<string, IndexedValueType> {
  return Object.fromEntries(keys.map((key) => [key.name, indexedValueType(key.type)]));
}

function typeName(type: IndexedValueType): string {
  const known = Object.values(SearchAttributeType).find((t) => indexedValueType(t) === type);
  return known ? cliTypeName(known) : `type ${type}`;
}

function hasStatus(error: unknown, ...codes: number[]): boolean {
  return isGrpcServiceError(error) && codes.includes(Number(error.code));
}

/** A connection without operator permission: the attributes are then the operator's to create. */
function refused(error: unknown): boolean {
  return hasStatus(error, grpcStatus.permissionDenied, grpcStatus.unimplemented);
}

async function requireNamespace(connection: Connection, namespace: string): Promise<void> {
  try {
    await connection.workflowService.describeNamespace({ namespace });
  } catch (error) {
    if (!hasStatus(error, grpcStatus.notFound)) throw error;
    throw new ConfigurationError(
      `Temporal namespace "${namespace}" does not exist at ${connection.options.address}: create it (temporal operator namespace create --namespace ${namespace}) or set TEMPORAL_NAMESPACE to one that does.`,
    );
  }
}

/** The namespace's custom attributes by name; null when the server will not tell. */
async function listCustom(
  connection: Connection,
  namespace: string,
): Promise<Map<string, IndexedValueType> | null> {
  try {
    const listed = await connection.operatorService.listSearchAttributes({ namespace });
    return new Map(Object.entries(listed.customAttributes ?? {}));
  } catch (error) {
    if (refused(error)) return null;
    throw error;
  }
}

/** Ours that the namespace lacks; a ConfigurationError when one of ours exists with another type. */
function missingFrom(existing: Map<string, IndexedValueType>, namespace: string): Key[] {
  for (const key of allSearchAttributeKeys) {
    const type = existing.get(key.name);
    if (type !== undefined && type !== indexedValueType(key.type))
      throw new ConfigurationError(
        `Search attribute ${key.name} exists in Temporal namespace "${namespace}" as ${typeName(type)}, but Recoup needs it as ${cliTypeName(key.type)}: remove it or set TEMPORAL_NAMESPACE to another namespace.`,
      );
  }
  return allSearchAttributeKeys.filter((key) => !existing.has(key.name));
}

function warnToCreate(log: Logger, namespace: string, keys: ReadonlyArray<Key>, reason: string): void {
  const flags = keys.map((key) => `--name ${key.name} --type ${cliTypeName(key.type)}`).join(' ');
  log.warn(
    { namespace, searchAttributes: keys.map((key) => key.name), reason },
    `Temporal does not let this worker register search attributes, and no recovery can start until namespace "${namespace}" has them: create them with \`temporal operator search-attribute create --namespace ${namespace} ${flags}\``,
  );
}

type AddOutcome = { outcome: 'added' } | { outcome: 'raced' } | { outcome: 'refused'; reason: string };

async function add(connection: Connection, namespace: string, keys: ReadonlyArray<Key>): Promise<AddOutcome> {
  try {
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: indexedValueTypes(keys),
    });
    return { outcome: 'added' };
  } catch (error) {
    if (refused(error))
      return { outcome: 'refused', reason: isGrpcServiceError(error) ? error.details : String(error) };
    // Another worker added some of them first: the next round lists again and checks their types.
    if (hasStatus(error, grpcStatus.alreadyExists)) return { outcome: 'raced' };
    throw error;
  }
}

/**
 * Waits until the server takes queries (and so starts) naming the attributes: it learns of new ones when it
 * next refreshes its namespace cache, a second or two after the add on the dev server (a cluster's
 * frontends may take longer: past the wait the worker warns and starts anyway, and starts refused meanwhile
 * answer 503 "safe to retry").
 */
async function waitUntilUsable(
  connection: Connection,
  namespace: string,
  names: string[],
  log: Logger,
): Promise<void> {
  const query = names.map((name) => `${name} IS NULL`).join(' OR ');
  const deadline = Date.now() + usableWithinMs;
  for (;;) {
    try {
      await connection.workflowService.countWorkflowExecutions({ namespace, query });
      return;
    } catch (error) {
      if (!hasStatus(error, grpcStatus.invalidArgument)) throw error;
      if (Date.now() > deadline) {
        log.warn(
          { namespace, searchAttributes: names, err: error },
          `Temporal does not take the search attributes yet, ${usableWithinMs / 1000} s after they were added: recoveries start once it does`,
        );
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/** Adds ours that the namespace lacks, listing again after each add until none is; the names it added. */
async function addMissing(connection: Connection, namespace: string, log: Logger): Promise<string[]> {
  const added: string[] = [];
  for (let round = 1; round <= maxRounds; round += 1) {
    const existing = await listCustom(connection, namespace);
    const missing = existing ? missingFrom(existing, namespace) : allSearchAttributeKeys;
    if (missing.length === 0) return added;
    const result = await add(connection, namespace, missing);
    if (result.outcome === 'refused') {
      warnToCreate(log, namespace, missing, result.reason);
      return [];
    }
    if (result.outcome === 'added') added.push(...missing.map((key) => key.name));
    // A server that will not list them cannot show the add took either: trust its answer.
    if (!existing) return added;
  }
  throw new Error(
    `Search attributes still missing in Temporal namespace "${namespace}" after ${maxRounds} attempts to add them`,
  );
}

/**
 * Makes sure the namespace has every custom search attribute Recoup starts workflows with (Temporal refuses
 * a start naming an undefined one): adds those missing, waits until the server uses them, and returns their
 * names. One that exists with another type stops the worker (ConfigurationError); a server that refuses the
 * operator call gets a warning saying how to create them, and the worker goes on.
 */
export async function ensureSearchAttributes(
  connection: Connection,
  namespace: string,
  log: Logger,
): Promise<string[]> {
  await requireNamespace(connection, namespace);
  const added = await addMissing(connection, namespace, log);
  if (added.length > 0) await waitUntilUsable(connection, namespace, added, log);
  return added;
}
