import type { CustomerIdentity } from '../domain/customer-identity.js';
import type { Stores } from '../store/index.js';
import { customerFootprint } from './customer-footprint.js';
import { statusRecord } from './status-record.js';

/**
 * Everything Recoup holds about one customer of an account, for the merchant to answer a data-subject
 * access request: the identifiers Recoup links to them, their recoveries (the status record, with each attempt, and
 * the request's personal fields), pulses, webhook events as sent, and hosted links. Reads only.
 * Used by `POST /api/customers/export` and `recoup customers export`.
 */
export async function exportCustomer(
  stores: Stores,
  accountId: string,
  identity: CustomerIdentity,
  now: Date,
) {
  const { refs, recoveries, links, events } = await customerFootprint(stores, accountId, identity);
  const pulses = await stores.pulses.ofCustomer(accountId, refs.emails);
  return {
    exportedAt: now.toISOString(),
    identifiers: {
      customerEmails: refs.emails,
      paymentMethodTokens: refs.tokens,
      customerIds: refs.customerIds,
    },
    recoveries: recoveries.map((doc) => ({
      ...statusRecord(doc),
      createdAt: doc.createdAt.toISOString(),
      customerEmail: doc.customerEmail,
      paymentMethodToken: doc.request.paymentMethodToken,
      fallbackPaymentMethodTokens: doc.request.fallbackPaymentMethodTokens ?? [],
      cardOrigin: doc.request.cardOrigin ?? null,
      binPrefix: doc.request.binPrefix ?? null,
    })),
    pulses: pulses.map((p) => ({
      transactionId: p._id,
      merchantTransactionId: p.merchantTransactionId,
      amount: p.amount,
      currency: p.currency,
      occurredAt: p.occurredAt.toISOString(),
    })),
    events: events.map((e) => ({
      eventId: e._id,
      event: e.type,
      createdAt: e.createdAt.toISOString(),
      deliveryStatus: e.deliveryStatus,
      payload: e.payload,
    })),
    links: links.map(({ link, consumption }) => ({
      kind: link.kind,
      createdAt: link.createdAt.toISOString(),
      expiresAt: link.expiresAt.toISOString(),
      usedAt: consumption?.at.toISOString() ?? null,
      outcome: consumption?.outcome ?? null,
      data: link.data,
    })),
  };
}
