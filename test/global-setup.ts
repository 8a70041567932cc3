import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { readToolchain } from '../scripts/toolchain-paths.js';
import { startMongo, startTemporal, type Running } from '../scripts/servers.js';
import { bundleWorkflows } from '../worker/create-worker.js';
import { createTestTls } from './support/tls.js';

declare module 'vitest' {
  export interface ProvidedContext {
    mongoUri: string;
    temporalAddress: string;
    workflowBundlePath: string;
    testServerPath: string;
    chromiumPath: string | null;
    /** A server certificate for 127.0.0.1 from a test CA that every test process trusts. */
    tlsCertFile: string;
    tlsKeyFile: string;
  }
}

/** Starts one FerretDB (or mongod) and one Temporal dev server for the whole run, and bundles workflows once. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const tools = readToolchain();
  if (!tools.testServer)
    throw new Error('The toolchain has no time-skipping test server: run `npm run toolchain`.');
  const dir = mkdtempSync(join(tmpdir(), 'recoup-test-'));
  const started: Running[] = [];
  const teardown = async () => {
    await Promise.all(started.map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  };
  const start = async (server: Promise<Running>) => started[started.push(await server) - 1]!.address;
  try {
    // Test processes are forked after this runs, so they trust the test CA exactly as an operator's worker
    // would trust a private CA: through NODE_EXTRA_CA_CERTS, read by Node at start.
    const tls = createTestTls(dir);
    process.env.NODE_EXTRA_CA_CERTS = tls.trustFile;
    // Servers of the tester's own only under names of their own: an operator's MONGODB_URI and
    // TEMPORAL_ADDRESS (exported for `npm start`, or a deployment's) never get the suite's scratch data.
    const mongoUri =
      process.env.RECOUP_TEST_MONGODB_URI ?? (await start(startMongo(tools, { dataDir: dir })));
    const temporalAddress =
      process.env.RECOUP_TEST_TEMPORAL_ADDRESS ?? (await start(startTemporal(tools, {})));
    const bundle = await bundleWorkflows();
    const workflowBundlePath = join(dir, 'workflows.js');
    writeFileSync(workflowBundlePath, bundle.code);
    project.provide('mongoUri', mongoUri);
    project.provide('temporalAddress', temporalAddress);
    project.provide('workflowBundlePath', workflowBundlePath);
    project.provide('testServerPath', tools.testServer);
    project.provide('chromiumPath', tools.chromium);
    project.provide('tlsCertFile', tls.certFile);
    project.provide('tlsKeyFile', tls.keyFile);
  } catch (error) {
    // Never leave servers behind when setup fails half-way (a workflow that does not bundle, say).
    await teardown();
    throw error;
  }
  return teardown;
}
