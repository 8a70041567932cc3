import { Context } from '@temporalio/activity';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statusOf } from '../domain/recovery.js';
import { cardUpdatedSignal } from '../workflows/recovery-definitions.js';
import { eventsOf } from './support/events.js';
import { poll } from './support/poll.js';
import { call, startStack, type Stack } from './support/stack.js';

// An ending's record and events are written by local activities inside a workflow task. A card update
// that comes while they are written must not make Temporal retake that task on another path (the new card
// charged, a success published under the id of the ending already sent): the ending stands as published.

let stack: Stack;
/** Workflows told of a new card while their recovery.card_expired was being written. */
const toldMidEnding = new Set<string>();
const newCard = 'tok_visa';

beforeAll(async () => {
  stack = await startStack({
    activities: (made) => ({
      ...made,
      async emitEvent(input) {
        const workflowId = Context.current().info.workflowExecution?.workflowId;
        if (workflowId && input.payload.event === 'recovery.card_expired' && !toldMidEnding.has(workflowId)) {
          toldMidEnding.add(workflowId);
          await stack.temporal.workflow
            .getHandle(workflowId)
            .signal(cardUpdatedSignal, { newToken: newCard, paymentMethodType: 'card' });
        }
        await made.emitEvent(input);
      },
    }),
  });
});
afterAll(() => stack.close());

describe('a card update that comes while an ending is being published', () => {
  it('leaves the ending as published: the status, the answer and the events agree, the new card is not charged', async () => {
    const { apiKey, account } = await stack.createAccount();
    const res = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: apiKey,
      body: {
        paymentMethodToken: 'tok_decline_expired_card',
        originalDeclineCode: 'expired_card',
        amount: 4321,
      },
    });
    expect(res).toMatchObject({
      status: 200,
      body: { success: false, recommendedAction: 'request_card_update' },
    });
    const doc = await poll(
      async () => (await stack.stores.recoveries.page(account.id, { limit: 1 }))[0],
      (d) => d !== undefined && statusOf(d.state) !== 'unknown',
    );
    await stack.temporal.workflow.getHandle(doc!.workflowId).result();
    // The update did come mid-ending, and the workflow saw it (after the ending, in its last task).
    expect(toldMidEnding.has(doc!.workflowId)).toBe(true);
    const history = await stack.temporal.workflow.getHandle(doc!.workflowId).fetchHistory();
    expect(history.events?.some((e) => e.workflowExecutionSignaledEventAttributes)).toBe(true);

    const recorded = await stack.stores.recoveries.find(account.id, doc!._id);
    expect(recorded).toMatchObject({ state: 'failed', paymentMethodToken: 'tok_decline_expired_card' });
    const events = await eventsOf(stack, account.id, ['recovery.card_expired', 'recovery.failed']);
    expect(events.map((e) => e.type).sort()).toEqual(['recovery.card_expired', 'recovery.failed']);
    expect(await stack.stores.sandbox.countForToken('test', newCard)).toBe(0);
  });
});
