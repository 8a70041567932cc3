/**
 * The floor execute is measured against: a plain Koa handler that validates the same body with the same
 * schema and calls the same test gateway with the same latency — no persistence, no workflow, no auth.
 * Run as its own process: `tsx bench/api/baseline-server.ts <port> <mongoUri> <latencyMs>`.
 */
import { randomUUID } from 'node:crypto';
import Koa from 'koa';
import { createTestGateway, testGatewaySettings } from '../../activities/gateways/test-gateway.js';
import { RecoveryRequest } from '../../domain/recovery-request.js';
import { connectMongo } from '../../store/mongo.js';
import { createTestGatewayStore } from '../../store/test-gateway.js';

const [port, mongoUri, latencyMs] = process.argv.slice(2);
const { db } = await connectMongo(mongoUri ?? 'mongodb://127.0.0.1:27017/recoup');
const gateway = createTestGateway(
  'baseline',
  testGatewaySettings({ latencyMs: latencyMs ?? '0' }),
  createTestGatewayStore(db),
);

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
  const r = parsed.data;
  const outcome = await gateway.charge({
    token: r.paymentMethodToken,
    amount: r.amount,
    currency: r.currency,
    paymentMethodType: r.paymentMethodType,
    idempotencyKey: randomUUID(),
  });
  ctx.body = { success: outcome.kind === 'approved', transactionId: randomUUID() };
});
app.listen(Number(port), '127.0.0.1', () => process.stdout.write('baseline listening\n'));
