/**
 * The Temporal floor: a plain Koa handler that validates the same body, then starts `floorWorkflow` with
 * update-with-start on the same Temporal server and waits for its answer; a worker in this process runs it,
 * and its one local activity waits the gateway's latency. No MongoDB, no auth, no events.
 * Run as its own process: `tsx bench/api/temporal-floor.ts <port> <temporalAddress> <latencyMs>`.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { Client, Connection, WithStartWorkflowOperation } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { serveExecute } from './execute-server.js';
import { floorAnswer, floorWorkflow } from './floor-workflow.js';

const [port, address, latencyMs] = process.argv.slice(2);
const taskQueue = `floor-${randomUUID().slice(0, 8)}`;
const latency = Number(latencyMs ?? '0');

const worker = await Worker.create({
  connection: await NativeConnection.connect({ address }),
  taskQueue,
  workflowsPath: new URL('./floor-workflow.ts', import.meta.url).pathname,
  activities: {
    chargeFloor: async () => {
      await delay(latency);
      return true;
    },
  },
});
// SIGTERM shuts the worker down (the SDK's shutdown signals); then the process ends, HTTP server and all.
worker.run().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
const client = new Client({ connection: await Connection.connect({ address }) });

serveExecute(Number(port), 'temporal floor', async () => {
  const workflowId = `floor/${randomUUID()}`;
  const approved = await client.workflow.executeUpdateWithStart(floorAnswer, {
    startWorkflowOperation: new WithStartWorkflowOperation(floorWorkflow, {
      workflowId,
      taskQueue,
      workflowIdConflictPolicy: 'USE_EXISTING',
    }),
  });
  return { success: approved, transactionId: workflowId };
});
