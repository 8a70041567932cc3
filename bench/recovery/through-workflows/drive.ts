import { recoveryWorkflowId } from '../../../domain/recovery.js';
import { Settings } from '../../../domain/settings.js';
import type { RecoveryDoc } from '../../../store/recoveries.js';
import { tokensOf } from '../payment-run.js';
import type { Payment } from '../payments.js';
import { accountOf } from '../strategies/engine.js';
import type { World } from '../world.js';
import type { Sequencer } from './sequencer.js';
import type { WorkflowStack } from './stack.js';

/** Webhooks go to a loopback port that refuses them: the check never sends traffic off this machine. */
const unreachableWebhookUrl = 'https://127.0.0.1:9/webhooks';

/** The execute request a merchant's billing code sends for a payment: what the pure run's screen reads. */
function requestOf(p: Payment) {
  const tokens = tokensOf(p);
  return {
    paymentMethodToken: tokens.primary,
    amount: p.amount,
    currency: p.currency,
    originalDeclineCode: p.code,
    cardOrigin: p.country,
    binPrefix: p.bin,
    idempotencyKey: `payment-${p.index}`,
    ...(p.fallbackBrand ? { fallbackPaymentMethodTokens: [tokens.fallback] } : {}),
  };
}

/**
 * Runs the payments through the real API and workflows: one Recoup account per merchant (its benchmark
 * settings; a rate limit the burst of requests cannot hit, as bench:api does), each execute sent at its
 * payment's failure time on the time-skipping clock, then every recovery run to its end. Returns each
 * payment's read model, in the order of `payments`.
 */
export async function runThroughApi(
  stack: WorkflowStack,
  sequencer: Sequencer,
  world: World,
  payments: Payment[],
) {
  const accounts = new Map<string, { id: string; apiKey: string }>();
  for (const m of world.merchants) {
    const settings = Settings.parse({
      ...accountOf(world, m),
      webhookUrl: unreachableWebhookUrl,
      rateLimitPerMinute: 100_000,
    });
    const gateways = world.gateways.map((g) => ({
      name: g.name,
      kind: 'test' as const,
      test: true,
      credentials: {},
    }));
    const created = await stack.stores.accounts.create({ name: m.id, settings, gateways });
    accounts.set(m.id, { id: created.account.id, apiKey: created.apiKey });
  }
  const accountOfPayment = (p: Payment) => accounts.get(p.merchant.id)!;
  const workflowIdOf = (p: Payment) => recoveryWorkflowId(accountOfPayment(p).id, `payment-${p.index}`);
  for (const p of payments) sequencer.expect(workflowIdOf(p), p.merchant.id, p.index, p.failedAt);

  for (const p of [...payments].sort((a, b) => a.failedAt - b.failedAt || a.index - b.index)) {
    // Payments failing in the same minute go one after another, milliseconds apart.
    const wait = p.failedAt - (await stack.env.currentTimeMs());
    if (wait < -60_000) throw new Error(`Payment ${p.index} is sent ${-wait} ms after it failed`);
    if (wait > 0) await stack.env.sleep(wait);
    const res = await fetch(`${stack.baseUrl}/api/recovery/execute`, {
      method: 'POST',
      headers: { 'X-API-KEY': accountOfPayment(p).apiKey, 'Content-Type': 'application/json' },
      body: JSON.stringify(requestOf(p)),
    });
    if (![200, 202, 403].includes(res.status))
      throw new Error(`execute of payment ${p.index} answered ${res.status}: ${await res.text()}`);
    await res.arrayBuffer();
  }

  // One waiter at a time: each lets the server skip time, and every recovery advances while it waits.
  for (const p of payments) await stack.env.client.workflow.getHandle(workflowIdOf(p)).result();
  const docs: RecoveryDoc[] = [];
  for (const p of payments) {
    const doc = await stack.stores.recoveries.findByKey(accountOfPayment(p).id, `payment-${p.index}`);
    if (!doc) throw new Error(`No recovery was recorded for payment ${p.index}`);
    docs.push(doc);
  }
  return docs;
}
