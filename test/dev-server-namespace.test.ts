import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTemporal, type Running } from '../scripts/servers.js';
import { readToolchain } from '../scripts/toolchain-paths.js';
import { indexedValueTypes } from '../worker/search-attributes.js';

// `TEMPORAL_NAMESPACE=recoup npm start`: the dev server must have that namespace, with Recoup's search
// attributes, also when its database was created by an earlier start on `default`.

let dir: string;
const running: Running[] = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'recoup-dev-server-'));
});
afterAll(async () => {
  await Promise.all(running.map((server) => server.stop()));
  rmSync(dir, { recursive: true, force: true });
});

async function start(namespace?: string): Promise<Running> {
  const opts = { dbFile: join(dir, 'temporal.db'), ...(namespace ? { namespace } : {}) };
  const server = await startTemporal(readToolchain(), opts);
  running.push(server);
  return server;
}

async function customAttributes(address: string, namespace: string) {
  const connection = await Connection.connect({ address });
  try {
    return (await connection.operatorService.listSearchAttributes({ namespace })).customAttributes;
  } finally {
    await connection.close();
  }
}

describe('the Temporal dev server npm start runs', () => {
  it('serves the configured namespace and default, both with Recoup’s search attributes, on a database made before', async () => {
    const before = await start();
    expect(await customAttributes(before.address, 'default')).toEqual(indexedValueTypes());
    await before.stop();

    const after = await start('recoup');
    expect(await customAttributes(after.address, 'recoup')).toEqual(indexedValueTypes());
    expect(await customAttributes(after.address, 'default')).toEqual(indexedValueTypes());
  });
});
