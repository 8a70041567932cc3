import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { eraseCustomer, type ErasureOutcome } from '../services/customer-erasure.js';
import { collections } from '../store/collections.js';
import type { Stores } from '../store/index.js';
import { onServer, submitPage } from './support/pages.js';
import { poll } from './support/poll.js';
import { call, startStack, type Stack } from './support/stack.js';
import { startReceiver, type Receiver } from './support/webhook-receiver.js';

// What an erasure must not leave behind: records of the customer written while it ran, and the record of
// the erasure itself when it is run again under another name.

let stack: Stack;
let receiver: Receiver;
let clientId: string;
let key: string;
/** Whether the merchant's endpoint acknowledges deliveries (else it answers 500, and they are retried). */
let acknowledging = true;

beforeAll(async () => {
  receiver = await startReceiver({ answer: () => ({ status: acknowledging ? 200 : 500 }) });
  stack = await startStack();
  const created = await stack.createAccount({ webhookUrl: receiver.url });
  clientId = created.account.id;
  key = created.apiKey;
});
afterEach(() => {
  acknowledging = true;
});
afterAll(async () => {
  await stack.close();
  await receiver.close();
});

const post = <T = Record<string, unknown>>(path: string, body: unknown) =>
  call<T>(stack.baseUrl, 'POST', path, { key, body });

/** A customer with a recovered payment (its webhook delivered) and an unused card-update link for the card. */
async function customer(name: string) {
  const email = `${name}@example.com`;
  const card = `tok_${name}_card`;
  const recovered = await post<{ transactionId: string }>('/api/recovery/execute', {
    paymentMethodToken: card,
    originalDeclineCode: 'try_again_later',
    amount: 2500,
    customerEmail: email,
  });
  expect(recovered.status).toBe(200);
  const link = await post<{ url: string }>('/api/recovery/update-card/generate', {
    paymentMethodToken: card,
    customerEmail: email,
  });
  expect(link.status).toBe(200);
  const refs = { emails: [email], tokens: [card], transactionIds: [], customerIds: [] };
  await poll(
    () => stack.stores.events.ofCustomer(clientId, refs),
    (events) => events.length > 0 && events.every((e) => e.deliveryStatus === 'delivered'),
  );
  return { email, card, transactionId: recovered.body.transactionId, linkUrl: link.body.url, refs };
}

/** Every document of the database as text, but the test gateway's own ledger (the gateway's data). */
async function everything(): Promise<string> {
  const names = Object.values(collections).filter((n) => !n.startsWith('sandbox'));
  const docs = await Promise.all(names.map((n) => stack.stores.db.collection(n).find({}).toArray()));
  return JSON.stringify(docs);
}

const erasing = (stores: Stores, body: Parameters<typeof eraseCustomer>[2]): Promise<ErasureOutcome> =>
  eraseCustomer({ stores, temporal: stack.temporal, clock: () => new Date() }, clientId, body);

const erasuresLeft = () => stack.stores.db.collection(collections.erasures).countDocuments();

describe('an erasure racing the customer’s own writes', () => {
  it('a card saved through their link as it is deleted: the card.updated waits for its delivery, then goes, and no use of the link is left', async () => {
    const ray = await customer('ray');
    let saved = false;
    const stores: Stores = {
      ...stack.stores,
      links: {
        ...stack.stores.links,
        async remove(hashes) {
          // The customer saves a new card on the page of the link the erasure found, just before it goes.
          if (!saved) {
            saved = true;
            // Its card.updated is not acknowledged at once: its delivery is still under way when looked for.
            acknowledging = false;
            const page = await submitPage(onServer(stack.baseUrl, ray.linkUrl), {
              number: '4242 4242 4242 4242',
              expiry: '12/34',
              cvc: '123',
            });
            expect(page.status).toBe(200);
          }
          return stack.stores.links.remove(hashes);
        },
      },
    };
    const outcome = await erasing(stores, { customerEmail: ray.email });
    const [updated] = await stack.stores.events.ofCustomer(clientId, ray.refs);
    // Its card.updated is still being delivered: not finished, and said so.
    expect(updated?.type).toBe('card.updated');
    expect(outcome).toEqual({
      kind: 'in_flight',
      transactionIds: [],
      eventIds: [updated?._id],
      partly: true,
    });
    const newCard = updated?.payload.event === 'card.updated' ? updated.payload.newPaymentMethodToken : '';
    expect(newCard).not.toBe('');
    expect(await stack.stores.db.collection(collections.linkConsumptions).countDocuments()).toBe(0);

    acknowledging = true;
    // Once delivered, the same request finishes.
    const done = await poll(
      () => erasing(stack.stores, { customerEmail: ray.email }),
      (outcome) => outcome.kind === 'erased',
    );
    expect(done).toMatchObject({ kind: 'erased', events: 1 });
    const dump = await everything();
    for (const text of [ray.email, ray.card, newCard]) expect(dump).not.toContain(text);
    expect(await erasuresLeft()).toBe(0);
  });

  it('a link minted for them while it runs is deleted with the rest', async () => {
    const sue = await customer('sue');
    let minted = '';
    const stores: Stores = {
      ...stack.stores,
      events: {
        ...stack.stores.events,
        async remove(eventIds) {
          // The merchant mints a card-update link for her once the erasure has looked.
          if (!minted) {
            const link = await post<{ url: string }>('/api/recovery/update-card/generate', {
              paymentMethodToken: sue.card,
              customerEmail: sue.email,
            });
            minted = link.body.url;
          }
          return stack.stores.events.remove(eventIds);
        },
      },
    };
    const outcome = await erasing(stores, { customerEmail: sue.email });
    // The link the footprint found, and the one minted meanwhile.
    expect(outcome).toMatchObject({ kind: 'erased', recoveries: 1, links: 2 });
    expect((await fetch(onServer(stack.baseUrl, minted))).status).toBe(404);
    const dump = await everything();
    for (const text of [sue.email, sue.card]) expect(dump).not.toContain(text);
  });
});

describe('an erasure run again', () => {
  it('naming the customer by a card the first run found, finishes it under the same pseudonym', async () => {
    const tia = await customer('tia');
    const other = await post<{ transactionId: string }>('/api/recovery/execute', {
      paymentMethodToken: 'tok_tia_other',
      originalDeclineCode: 'try_again_later',
      amount: 1700,
      customerEmail: tia.email,
    });
    expect(other.status).toBe(200);
    let pseudonymised = 0;
    const stores: Stores = {
      ...stack.stores,
      recoveries: {
        ...stack.stores.recoveries,
        async pseudonymise(doc, pseudonym, now) {
          // The process dies after the first recovery.
          if (pseudonymised++ > 0) throw new Error('process died');
          await stack.stores.recoveries.pseudonymise(doc, pseudonym, now);
        },
      },
    };
    await poll(
      () => erasing(stores, { customerEmail: tia.email }).catch((error: unknown) => error),
      () => pseudonymised > 1,
    );
    expect(await erasuresLeft()).toBe(1);
    const [first] = await Promise.all(
      [tia.transactionId, other.body.transactionId].map((id) => stack.stores.recoveries.find(clientId, id)),
    );
    const left = first?.customerEmail === tia.email ? tia.card : 'tok_tia_other';

    // The merchant tries again, naming her by the card not erased yet.
    const finished = await erasing(stack.stores, { paymentMethodTokens: [left] });
    // The other recovery, and the record of the first run.
    expect(finished).toMatchObject({ kind: 'erased', recoveries: 1 });
    const kept = await Promise.all(
      [tia.transactionId, other.body.transactionId].map((id) => stack.stores.recoveries.find(clientId, id)),
    );
    expect(new Set(kept.map((r) => r?.customerEmail)).size).toBe(1);
    expect(kept[0]?.customerEmail).toMatch(/@erased\.invalid$/);
    expect(await erasuresLeft()).toBe(0);
    const dump = await everything();
    for (const text of [tia.email, tia.card, 'tok_tia_other']) expect(dump).not.toContain(text);
  });
});
