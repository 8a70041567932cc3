import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linkUseWorkflowId } from '../domain/links.js';
import { createLogger } from '../runtime/logger.js';
import { sha256 } from '../runtime/crypto.js';
import { serverClock } from '../scripts/time-skipping.js';
import { createLinkOutcomes } from '../services/link-outcomes.js';
import type { LinkDoc } from '../store/links.js';
import { poll } from './support/poll.js';
import { call, type Stack } from './support/stack.js';
import { stackOnTimeSkipping, startTimeSkipping } from './support/time-skipping.js';

// A link's use whose request dies after recording it: its follow-up workflow finishes the effects once the
// use has had its minute, with no one opening the link again. On the time-skipping server, with the real
// workers, activities and FerretDB.

let env: TestWorkflowEnvironment;
let stack: Stack;

beforeAll(async () => {
  env = await startTimeSkipping();
  stack = await stackOnTimeSkipping(env);
});
afterAll(async () => {
  await stack?.close();
  await env?.teardown();
});

/** A recovery queued on `tok_visa` and a card-update link for it, as the database holds the link. */
async function queuedWithLink() {
  const { account, apiKey } = await stack.createAccount();
  const post = (path: string, body: unknown) =>
    call<{ transactionId: string; token: string }>(stack.baseUrl, 'POST', path, { key: apiKey, body });
  const queued = await post('/api/recovery/execute', {
    paymentMethodToken: 'tok_visa',
    originalDeclineCode: 'insufficient_funds',
    amount: 4200,
  });
  expect(queued.status).toBe(202);
  const transactionId = queued.body.transactionId;
  const minted = await post('/api/recovery/update-card/generate', {
    paymentMethodToken: 'tok_visa',
    transactionId,
  });
  const hash = sha256(minted.body.token);
  const found = await stack.stores.links.find(hash);
  return {
    accountId: account.id,
    transactionId,
    hash,
    link: found!.link as Extract<LinkDoc, { kind: 'card_update' }>,
  };
}

/** The link outcomes an API process uses, with its event publisher (or stores) standing for whatever fails. */
const outcomesWith = (publish: Stack['events']['publish'], stores = stack.stores) =>
  createLinkOutcomes({
    stores,
    temporal: env.client,
    queues: stack.queues,
    events: { ...stack.events, publish },
    clock: serverClock,
    log: createLogger('silent', 'test'),
  });

const newCard = { token: 'tok_mastercard', paymentMethodType: 'card' as const, eligibleGateways: ['test'] };

const cardUpdates = async (accountId: string) =>
  (await stack.stores.events.list({ accountId })).filter((e) => e.type === 'card.updated');

describe('the follow-up of a link use', () => {
  it('finishes a use whose request died after recording it: card.updated once, and the queued recovery retried', async () => {
    const { accountId, transactionId, hash, link } = await queuedWithLink();
    const failing = outcomesWith(() => Promise.reject(new Error('MongoDB unreachable')));
    await expect(failing.updateCard(link, newCard)).rejects.toThrow('MongoDB unreachable');
    const { consumption } = (await stack.stores.links.find(hash))!;
    expect(consumption).toMatchObject({ effectsDoneAt: null });
    expect(await cardUpdates(accountId)).toEqual([]);

    // Nobody opens the link again: the follow-up workflow, a minute on, does what the request could not.
    await env.client.workflow.getHandle(linkUseWorkflowId(hash)).result();
    const [sent, ...more] = await cardUpdates(accountId);
    expect(more).toEqual([]);
    expect(sent).toMatchObject({
      _id: consumption!.eventId,
      payload: { newPaymentMethodToken: 'tok_mastercard' },
    });
    expect((await stack.stores.links.find(hash))!.consumption?.effectsDoneAt).toBeInstanceOf(Date);
    const recovered = await poll(
      () => stack.stores.recoveries.find(accountId, transactionId),
      (r) => r?.state === 'succeeded',
    );
    expect(recovered).toMatchObject({ state: 'succeeded', paymentMethodToken: 'tok_mastercard' });
  });

  it('does not tell the recovery a second time once it has taken the new card on: it keeps its planned retry', async () => {
    const { accountId, transactionId, hash, link } = await queuedWithLink();
    // The request tells the recovery, then cannot record that the effects are done.
    const stores = {
      ...stack.stores,
      links: {
        ...stack.stores.links,
        markEffectsDone: () => Promise.reject(new Error('MongoDB unreachable')),
      },
    };
    const failing = outcomesWith((...args) => stack.events.publish(...args), stores);
    const declining = { ...newCard, token: 'tok_decline_insufficient_funds' };
    await expect(failing.updateCard(link, declining)).rejects.toThrow('MongoDB unreachable');
    // The recovery charges the new card, which declines, and waits for its next planned retry.
    const requeued = await poll(
      () => stack.stores.recoveries.find(accountId, transactionId),
      (r) => r?.state === 'queued' && r.attempts.length === 2,
    );
    expect(requeued).toMatchObject({ paymentMethodToken: 'tok_decline_insufficient_funds' });

    // The follow-up finishes the use (the event) but leaves the recovery to its plan.
    await env.client.workflow.getHandle(linkUseWorkflowId(hash)).result();
    expect(await cardUpdates(accountId)).toHaveLength(1);
    const history = await env.client.workflow.getHandle(requeued!.workflowId).fetchHistory();
    const signals = (history.events ?? []).filter(
      (e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'cardUpdated',
    );
    expect(signals).toHaveLength(1);
  });

  it('does nothing more after a use that finished: still one card.updated', async () => {
    const { accountId, hash, link } = await queuedWithLink();
    const working = outcomesWith((...args) => stack.events.publish(...args));
    expect(await working.updateCard(link, newCard)).not.toBeNull();
    await env.client.workflow.getHandle(linkUseWorkflowId(hash)).result();
    expect(await cardUpdates(accountId)).toHaveLength(1);
  });
});
