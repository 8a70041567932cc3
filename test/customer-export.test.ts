import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../runtime/crypto.js';
import { collections } from '../store/collections.js';
import { onServer } from './support/pages.js';
import { call, startStack, type Stack } from './support/stack.js';

// What an access request reads out: all the store holds of the customer's payments, and never a hosted
// link that would still open its page for whoever reads the export.

let stack: Stack;
let clientId: string;
let key: string;

beforeAll(async () => {
  stack = await startStack();
  const created = await stack.createAccount();
  clientId = created.account.id;
  key = created.apiKey;
});
afterAll(() => stack.close());

const post = <T = Record<string, unknown>>(path: string, body: unknown) =>
  call<T>(stack.baseUrl, 'POST', path, { key, body });

interface Export {
  recoveries: Array<Record<string, unknown>>;
  events: Array<{ event: string; payload: Record<string, unknown> }>;
}

/** Publishes an event carrying a card-update link of the customer's card, as a skipped retry does. */
async function skippedRetry(card: string, transactionId: string) {
  const link = await post<{ url: string; token: string; expiresAt: string }>(
    '/api/recovery/update-card/generate',
    { paymentMethodToken: card },
  );
  expect(link.status).toBe(200);
  await stack.events.publish(clientId, {
    event: 'recovery.skipped_high_risk',
    paymentMethodToken: card,
    amount: 2500,
    currency: 'USD',
    riskScore: 91,
    confidence: 60,
    reasoning: 'Three declines this week',
    cardUpdateUrl: link.body.url,
    skippedChargeId: transactionId,
    timestamp: new Date().toISOString(),
  });
  return link.body;
}

describe('POST /api/customers/export', () => {
  it('withholds the hosted links the customer’s events carried, saying until when each could be used', async () => {
    const card = 'tok_uli_card';
    const res = await post<{ transactionId: string }>('/api/recovery/execute', {
      paymentMethodToken: card,
      originalDeclineCode: 'try_again_later',
      amount: 2500,
      customerEmail: 'uli@example.com',
    });
    expect(res.status).toBe(200);
    const usable = await skippedRetry(card, res.body.transactionId);
    const gone = await skippedRetry(card, res.body.transactionId);
    // One of the links was purged since (it expired long ago): nothing opens it any more.
    await stack.stores.links.remove([sha256(gone.token)]);

    const exported = await post<Export>('/api/customers/export', { customerEmail: 'uli@example.com' });
    expect(exported.status).toBe(200);
    const notes = exported.body.events
      .filter((e) => e.event === 'recovery.skipped_high_risk')
      .map((e) => e.payload.cardUpdateUrl)
      .sort();
    expect(notes).toEqual(
      [
        `[hosted link withheld; expires ${usable.expiresAt}]`,
        '[hosted link withheld; no longer valid]',
      ].sort(),
    );
    const text = JSON.stringify(exported.body);
    for (const link of [usable, gone]) {
      expect(text).not.toContain(link.token);
      expect(text).not.toContain(new URL(link.url).pathname);
    }
    // The link still works for the customer it was sent to.
    expect((await fetch(onServer(stack.baseUrl, usable.url))).status).toBe(200);
  });

  it('gives what the store holds of each payment: the card charged now, the platform’s invoice, the prediction, Proof Mode', async () => {
    const res = await post<{ transactionId: string }>('/api/recovery/execute', {
      paymentMethodToken: 'tok_vic_card',
      originalDeclineCode: 'insufficient_funds',
      amount: 3100,
      customerEmail: 'vic@example.com',
      cardOrigin: 'DE',
      binPrefix: '424242',
    });
    expect(res.status).toBe(202);
    const id = res.body.transactionId;
    // Drawn into Proof Mode, and reported by a billing platform; the customer saved another card since.
    await stack.stores.db.collection<{ _id: string }>(collections.recoveries).updateOne(
      { _id: id },
      {
        $set: {
          inProofMode: true,
          paymentMethodToken: 'tok_vic_new',
          connector: {
            platform: 'chargebee',
            invoiceId: 'inv_7',
            customerId: 'cus_vic',
            subscriptionId: 'sub_7',
          },
        },
      },
    );
    const doc = await stack.stores.recoveries.find(clientId, id);
    expect(doc?.ai).not.toBeNull();

    const exported = await post<Export>('/api/customers/export', { customerEmail: 'vic@example.com' });
    expect(exported.status).toBe(200);
    expect(exported.body.recoveries).toEqual([
      expect.objectContaining({
        transactionId: id,
        paymentMethodToken: 'tok_vic_card',
        currentPaymentMethodToken: 'tok_vic_new',
        cardOrigin: 'DE',
        binPrefix: '424242',
        originalDeclineCode: 'insufficient_funds',
        inProofMode: true,
        ai: {
          score: doc?.ai?.score,
          confidence: doc?.ai?.confidence,
          reasoning: doc?.ai?.reasoning,
          dataSource: doc?.ai?.dataSource,
        },
        connector: {
          platform: 'chargebee',
          invoiceId: 'inv_7',
          customerId: 'cus_vic',
          subscriptionId: 'sub_7',
        },
      }),
    ]);
    await post('/api/recovery/stop', { transactionId: id, reason: 'not_owed' });
  });
});
