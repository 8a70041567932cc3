import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { collections } from '../store/collections.js';
import { createLinkStore, type ConsumptionDoc, type LinkDoc } from '../store/links.js';
import { scratchDb } from './support/scratch-db.js';

const { db } = scratchDb('link_uses');

/** A card-update link of a customer, as minted. */
function cardLink(): LinkDoc {
  const now = new Date();
  return {
    _id: randomUUID(),
    accountId: 'acct_uses',
    kind: 'card_update',
    data: {
      paymentMethodToken: 'tok_old',
      customerEmail: 'uma@example.com',
      returnUrl: null,
      transactionId: null,
    },
    expiresAt: new Date(now.getTime() + 3_600_000),
    consumedAt: null,
    formSecret: 'secret',
    createdAt: now,
  };
}

/** The use of the link that saves the customer's new card. */
const newCard = (link: LinkDoc): ConsumptionDoc => ({
  _id: link._id,
  accountId: link.accountId,
  at: new Date(),
  eventId: randomUUID(),
  outcome: { kind: 'card_updated', newPaymentMethodToken: 'tok_new_card', eligibleGateways: ['test'] },
  effectsDoneAt: null,
});

const usesOf = (link: LinkDoc) =>
  db().collection<{ _id: string }>(collections.linkConsumptions).countDocuments({ _id: link._id });

describe('the use of a hosted link', () => {
  it('is recorded once, while the link is there', async () => {
    const links = createLinkStore(db());
    const link = cardLink();
    await links.insert(link);
    expect(await links.consume(newCard(link))).toBe(true);
    expect(await links.consume(newCard(link))).toBe(false);
    expect(await links.find(link._id)).toMatchObject({ consumption: { outcome: { kind: 'card_updated' } } });
  });

  it('is refused once the link is gone (erased while the customer was on its page), and leaves no record of the card', async () => {
    const links = createLinkStore(db());
    const link = cardLink();
    await links.insert(link);
    // The page was loaded before the erasure deleted the link; the customer submits after.
    expect(await links.remove([link._id])).toBe(1);
    expect(await links.consume(newCard(link))).toBe(false);
    expect(await usesOf(link)).toBe(0);
  });

  it('whose link is gone is deleted by the daily purge, in every account; a use of a link still there stays', async () => {
    const links = createLinkStore(db());
    const [kept, gone] = [cardLink(), cardLink()];
    for (const link of [kept, gone]) {
      await links.insert(link);
      expect(await links.consume(newCard(link))).toBe(true);
    }
    // Left by an earlier version, which recorded a use without looking for its link.
    await db().collection<LinkDoc>(collections.links).deleteOne({ _id: gone._id });
    expect(await links.purgeOrphanedUses()).toBe(1);
    expect([await usesOf(kept), await usesOf(gone)]).toEqual([1, 0]);
    expect(await links.purgeOrphanedUses()).toBe(0);
  });
});
