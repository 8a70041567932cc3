import { describe, expect, it } from 'vitest';
import { cardRefusalOf } from '../services/card-refusal.js';
import { createCardBudgetStore } from '../store/card-budgets.js';
import { createRecoveryStore } from '../store/recoveries.js';
import { scratchDb } from './support/scratch-db.js';

const { db } = scratchDb('card_refusal');

const day = 86_400_000;
const now = new Date('2027-06-01T00:00:00Z');
const daysAgo = (days: number) => new Date(now.getTime() - days * day);

describe('a card blocked on an earlier recovery', () => {
  it.each([
    ['179 days ago is still refused', 179, { kind: 'blocked_before', declineCode: 'stolen_card' }],
    ['181 days ago is no longer held against it: a block is remembered 180 days', 181, null],
  ] as const)('blocked %s', async (_, days, refusal) => {
    const stores = { recoveries: createRecoveryStore(db()), cardBudgets: createCardBudgetStore(db()) };
    const cardKey = `acct_1:card_${days}`;
    await stores.recoveries.rememberBlockedCard(cardKey, {
      transactionId: 'tx_earlier',
      declineCode: 'stolen_card',
      at: daysAgo(days),
    });
    expect(await cardRefusalOf(stores, cardKey, now)).toEqual(refusal);
  });
});
