import { randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expiryWarningEventId } from '../activities/card-sweep.js';
import { createActivities } from '../activities/index.js';
import type { LinkKind } from '../domain/links.js';
import { recoveryWorkflowId } from '../domain/recovery.js';
import { Settings } from '../domain/settings.js';
import { createEventPublisher } from '../services/events.js';
import { collections } from '../store/collections.js';
import { cardOnFile } from './support/cards.js';
import { poll } from './support/poll.js';
import { activityDeps, call, startStack, type Stack } from './support/stack.js';
import { startReceiver, type Receiver } from './support/webhook-receiver.js';

// An activity that mints a link and publishes its event retries after Temporal refused to start the
// event's delivery once (the event was already stored, pending): the retry must see that delivery done,
// with the event and the link of the first try, never a second one.

let stack: Stack;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
  stack = await startStack();
});
afterAll(async () => {
  await stack?.close();
  await receiver?.close();
});

/** The stack's activities, publishing through a Temporal client whose first workflow start fails. */
function activitiesStartFailingOnce() {
  const temporal = new Client({ connection: stack.temporal.connection, namespace: 'default' });
  const start = temporal.workflow.start.bind(temporal.workflow);
  let failures = 1;
  temporal.workflow.start = ((...args: Parameters<typeof start>) => {
    if (failures-- > 0) return Promise.reject(new Error('Temporal is briefly unreachable'));
    return start(...args);
  }) as typeof start;
  const events = createEventPublisher({
    stores: stack.stores,
    temporal,
    queues: stack.queues,
    clock: () => new Date(),
  });
  return createActivities({ ...activityDeps(stack), events });
}

/** Runs an activity the way Temporal does after a failure: once, and again once the first try threw. */
async function runAndRetry(activity: () => Promise<unknown>): Promise<void> {
  // The first try's failure is expected: its warning would only clutter the output.
  const env = new MockActivityEnvironment({}, { logger: new DefaultLogger('ERROR') });
  await expect(env.run(activity)).rejects.toThrow('briefly unreachable');
  await env.run(activity);
}

/** The event once delivered (or as it stands after 15 s), with the account's links of its kind. */
async function settled(accountId: string, eventId: string, kind: LinkKind) {
  const event = await poll(
    () => stack.stores.events.get(eventId),
    (e) => e?.deliveryStatus === 'delivered',
  );
  const sameType = await stack.stores.events.list({ accountId, types: event ? [event.type] : [] });
  const links = await stack.stores.db.collection(collections.links).countDocuments({ accountId, kind });
  const posted = receiver.received.filter(
    (r) => (JSON.parse(r.raw.toString('utf8')) as { eventId?: string }).eventId === eventId,
  );
  return { event, sameType: sameType.map((e) => e._id), links, posted: posted.length };
}

const webhookAccount = (settings: Record<string, unknown> = {}) =>
  stack.createAccount({ webhookUrl: receiver.url, ...settings });

describe('an event stored before its delivery could start', () => {
  it('recovery.skipped_high_risk: the retry delivers the stored event and mints no second link', async () => {
    const { account, apiKey } = await webhookAccount();
    const res = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: apiKey,
      body: { paymentMethodToken: 'tok_visa', originalDeclineCode: 'try_again_later', amount: 2600 },
    });
    expect(res.status).toBe(200);
    const activities = activitiesStartFailingOnce();
    const eventId = randomUUID();
    await runAndRetry(() =>
      activities.reportHighRiskSkip({
        accountId: account.id,
        transactionId: String(res.body.transactionId),
        skippedChargeId: String(res.body.transactionId),
        eventId,
        successScore: 12,
        confidence: 80,
        reasoning: 'Too unlikely to succeed',
      }),
    );
    const { event, sameType, links, posted } = await settled(account.id, eventId, 'card_update');
    expect(event?.deliveryStatus).toBe('delivered');
    expect(sameType).toEqual([eventId]);
    expect(posted).toBe(1);
    expect(links).toBe(1);
  });

  it('card.expiring_soon: a retried sweep delivers the stored warning and mints no second link', async () => {
    const { account } = await webhookAccount({ cardHealthSweep: { enabled: true, daysBeforeExpiry: 31 } });
    const card = cardOnFile(account.id, `tok_sweep_${randomUUID().slice(0, 8)}`);
    await stack.stores.sandbox.saveCard(card);
    const activities = activitiesStartFailingOnce();
    await runAndRetry(() =>
      activities.sweepAccountCards({ accountId: account.id, asOf: card.createdAt.getTime() }),
    );
    const eventId = expiryWarningEventId(account.id, { token: card._id, ...card });
    const { event, sameType, links, posted } = await settled(account.id, eventId, 'card_update');
    expect(event?.deliveryStatus).toBe('delivered');
    expect(sameType).toEqual([eventId]);
    expect(posted).toBe(1);
    expect(links).toBe(1);
  });

  it('recovery.proactive_retention: the retry delivers the stored offer and mints no second link', async () => {
    const { account, apiKey } = await webhookAccount();
    const email = 'grace@example.com';
    let transactionId = '';
    for (let i = 0; i < 3; i += 1) {
      const res = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
        key: apiKey,
        body: {
          paymentMethodToken: 'tok_decline_expired_card',
          originalDeclineCode: 'expired_card',
          amount: 3000 + i,
          customerEmail: email,
        },
      });
      transactionId = String(res.body.transactionId).replace(/^FAILED_API_/, '');
      await stack.temporal.workflow.getHandle(recoveryWorkflowId(account.id, transactionId)).result();
    }
    // Enabled only now, so the recoveries' own workflows made no offer of their own.
    const offers = [{ type: 'pause', months: 2 }];
    await stack.stores.accounts.updateSettings(
      account.id,
      Settings.parse({ ...account.settings, cancelFlow: { enabled: true, offers } }),
    );
    const activities = activitiesStartFailingOnce();
    const eventId = randomUUID();
    await runAndRetry(() =>
      activities.offerProactiveRetention({ accountId: account.id, transactionId, eventId }),
    );
    const { event, sameType, links, posted } = await settled(account.id, eventId, 'cancel_flow');
    expect(event?.deliveryStatus).toBe('delivered');
    expect(sameType).toEqual([eventId]);
    expect(posted).toBe(1);
    expect(links).toBe(1);
  });
});
