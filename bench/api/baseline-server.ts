/**
 * The floor execute is measured against: a plain Koa handler that validates the same body with the same
 * schema and calls the same test gateway with the same latency — no persistence, no workflow, no auth.
 * Run as its own process: `tsx bench/api/baseline-server.ts <port> <mongoUri> <latencyMs>`.
 */
import { randomUUID } from 'node:crypto';
import { createTestGateway, testGatewaySettings } from '../../activities/gateways/test-gateway.js';
import { connectMongo } from '../../store/mongo.js';
import { createTestGatewayStore } from '../../store/test-gateway.js';
import { serveExecute } from './execute-server.js';

const [port, mongoUri, latencyMs] = process.argv.slice(2);
const { db } = await connectMongo(mongoUri ?? 'mongodb://127.0.0.1:27017/recoup');
const gateway = createTestGateway(
  { accountId: 'baseline', name: 'baseline' },
  testGatewaySettings({ latencyMs: latencyMs ?? '0' }),
  createTestGatewayStore(db),
);

serveExecute(Number(port), 'baseline', async (r) => {
  const outcome = await gateway.charge({
    token: r.paymentMethodToken,
    amount: r.amount,
    currency: r.currency,
    paymentMethodType: r.paymentMethodType,
    idempotencyKey: randomUUID(),
  });
  return { success: outcome.kind === 'approved', transactionId: randomUUID() };
});
