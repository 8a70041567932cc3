import type { CustomerIdentity } from '../domain/customer-identity.js';
import { linkState } from '../domain/links.js';
import { sha256 } from '../runtime/crypto.js';
import { linkFields, type EventRecord } from '../store/events.js';
import type { Stores } from '../store/index.js';
import type { RecoveryDoc } from '../store/recoveries.js';
import { customerFootprint } from './customer-footprint.js';
import { statusRecord } from './status-record.js';

/**
 * A recovery as the export gives it: the status record, and everything else the record holds of the
 * customer's payment: what the request named (cards, email, card prefix, country, language), the card it
 * is charged on now (another after a card update), the billing platform's invoice, the prediction made for
 * it and whether Proof Mode drew it into a group.
 */
function exportedRecovery(doc: RecoveryDoc) {
  const { request, connector, ai } = doc;
  return {
    ...statusRecord(doc),
    createdAt: doc.createdAt.toISOString(),
    customerEmail: doc.customerEmail,
    paymentMethodToken: request.paymentMethodToken,
    currentPaymentMethodToken: doc.paymentMethodToken,
    fallbackPaymentMethodTokens: request.fallbackPaymentMethodTokens ?? [],
    paymentMethodType: request.paymentMethodType,
    cardOrigin: request.cardOrigin ?? null,
    binPrefix: request.binPrefix ?? null,
    locale: request.locale ?? null,
    originalDeclineCode: doc.originalDeclineCode,
    inProofMode: doc.inProofMode === true,
    ai: ai
      ? { score: ai.score, confidence: ai.confidence, reasoning: ai.reasoning, dataSource: ai.dataSource }
      : null,
    connector: connector
      ? {
          platform: connector.platform,
          invoiceId: connector.invoiceId,
          customerId: connector.customerId,
          subscriptionId: connector.subscriptionId ?? null,
        }
      : null,
  };
}

/** The token a link field carries: the field itself (`cancelFlowToken`), or the last part of the page's URL. */
function tokenIn(field: (typeof linkFields)[number], value: string): string | null {
  if (field === 'cancelFlowToken') return value;
  return URL.canParse(value) ? (new URL(value).pathname.split('/').at(-1) ?? null) : null;
}

/**
 * What an export shows instead of a hosted link an event carried: never the link itself, which would
 * still open the page (and save a card, or cancel a subscription) for whoever reads the export; but
 * whether it can still be used, and until when.
 */
async function linkNote(stores: Stores, accountId: string, token: string | null, now: Date): Promise<string> {
  const found = token ? await stores.links.find(sha256(token)) : null;
  if (found?.link.accountId !== accountId) return '[hosted link withheld; no longer valid]';
  const { link, consumption } = found;
  const state = linkState(
    { expiresAt: link.expiresAt, consumed: consumption !== null || link.consumedAt !== null },
    now,
  );
  if (state === 'used')
    return `[hosted link withheld; used ${(consumption?.at ?? link.consumedAt ?? now).toISOString()}]`;
  return `[hosted link withheld; ${state === 'expired' ? 'expired' : 'expires'} ${link.expiresAt.toISOString()}]`;
}

/** The event's body as sent, with the hosted links it carried withheld (`linkNote`). */
async function withoutLinks(stores: Stores, event: EventRecord, now: Date) {
  const payload: Record<string, unknown> = { ...event.payload };
  if (event.unreadable) return payload;
  for (const field of linkFields) {
    const value = payload[field];
    if (typeof value === 'string')
      payload[field] = await linkNote(stores, event.accountId, tokenIn(field, value), now);
  }
  return payload;
}

/**
 * Everything Recoup holds about one customer of an account, for the merchant to answer a data-subject
 * access request: the identifiers Recoup links to them, their recoveries (`exportedRecovery`), pulses,
 * webhook events as sent but for the hosted links they carried (withheld: each would still open its page),
 * and hosted links. Reads only. Used by `POST /api/customers/export` and `recoup customers export`.
 */
export async function exportCustomer(
  stores: Stores,
  accountId: string,
  identity: CustomerIdentity,
  now: Date,
) {
  const { refs, recoveries, links, events } = await customerFootprint(stores, accountId, identity);
  const pulses = await stores.pulses.ofCustomer(accountId, refs.emails);
  const exportedEvents = [];
  for (const e of events)
    exportedEvents.push({
      eventId: e._id,
      event: e.type,
      createdAt: e.createdAt.toISOString(),
      deliveryStatus: e.deliveryStatus,
      payload: await withoutLinks(stores, e, now),
    });
  return {
    exportedAt: now.toISOString(),
    identifiers: {
      customerEmails: refs.emails,
      paymentMethodTokens: refs.tokens,
      customerIds: refs.customerIds,
    },
    recoveries: recoveries.map(exportedRecovery),
    pulses: pulses.map((p) => ({
      transactionId: p._id,
      merchantTransactionId: p.merchantTransactionId,
      amount: p.amount,
      currency: p.currency,
      occurredAt: p.occurredAt.toISOString(),
      ...(p.paysTransactionId === undefined ? {} : { paysTransactionId: p.paysTransactionId }),
      ...(p.isSimulated ? { isSimulated: true } : {}),
    })),
    events: exportedEvents,
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
