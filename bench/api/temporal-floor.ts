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
import Koa from 'koa';
import { RecoveryRequest } from '../../domain/recovery-request.js';
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
void worker.run();
const client = new Client({ connection: await Connection.connect({ address }) });

const app = new Koa();
app.use(async (ctx) => {
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) chunks.push(chunk);
  const parsed = RecoveryRequest.safeParse(JSON.parse(Buffer.concat(chunks).toString('utf8')));
  if (!parsed.success) {
    ctx.status = 400;
    ctx.body = { error: 'Validation failed' };
    return;
  }
  const workflowId = `floor/${randomUUID()}`;
  const approved = await client.workflow.executeUpdateWithStart(floorAnswer, {
    startWorkflowOperation: new WithStartWorkflowOperation(floorWorkflow, {
      workflowId,
      taskQueue,
      workflowIdConflictPolicy: 'USE_EXISTING',
    }),
  });
  ctx.body = { success: approved, transactionId: workflowId };
});
app.listen(Number(port), '127.0.0.1', () => process.stdout.write('temporal floor listening\n'));
