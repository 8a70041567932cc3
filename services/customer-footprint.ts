import type { CustomerIdentity } from '../domain/customer-identity.js';
import type { CustomerRefs } from '../store/customer-refs.js';
import type { EventRecord } from '../store/events.js';
import type { Stores } from '../store/index.js';
import type { ConsumptionDoc, LinkDoc } from '../store/links.js';
import { erasedToken, type RecoveryDoc } from '../store/recoveries.js';

/** What Recoup holds about one customer, and every identifier it links to them. */
export interface Footprint {
  refs: CustomerRefs;
  recoveries: RecoveryDoc[];
  links: Array<{ link: LinkDoc; consumption: ConsumptionDoc | null }>;
  events: EventRecord[];
}

const unique = (values: Array<string | null | undefined>): string[] => [
  ...new Set(values.filter((v): v is string => typeof v === 'string' && v !== erasedToken)),
];

/**
 * Everything stored that names the customer: their recoveries (by what the merchant named), then, with the
 * emails, tokens and ids those add, the links minted for them (and the cards saved and customer ids named
 * through those), then the webhook events about any of it.
 */
export async function customerFootprint(
  stores: Stores,
  accountId: string,
  request: CustomerIdentity,
): Promise<Footprint> {
  const named = {
    emails: unique([request.customerEmail]),
    tokens: unique(request.paymentMethodTokens ?? []),
    customerIds: unique([request.customerId]),
  };
  const recoveries = await stores.recoveries.ofCustomer(accountId, named);
  const refs: CustomerRefs = {
    emails: unique([...named.emails, ...recoveries.map((r) => r.customerEmail)]),
    tokens: unique([
      ...named.tokens,
      ...recoveries.flatMap((r) => [
        r.paymentMethodToken,
        r.request.paymentMethodToken,
        ...(r.request.fallbackPaymentMethodTokens ?? []),
      ]),
    ]),
    transactionIds: unique(recoveries.flatMap((r) => [r._id, r.publicId])),
    customerIds: unique([...named.customerIds, ...recoveries.map((r) => r.connector?.customerId)]),
  };
  const links = await stores.links.ofCustomer(accountId, refs);
  refs.tokens = unique([
    ...refs.tokens,
    ...links.map(({ consumption: c }) =>
      c?.outcome.kind === 'card_updated' ? c.outcome.newPaymentMethodToken : null,
    ),
  ]);
  // A cancel flow names the customer by the merchant's id; the proactive one by the email, already known.
  refs.customerIds = unique([
    ...refs.customerIds,
    ...links.map(({ link }) =>
      link.kind === 'cancel_flow' && !refs.emails.includes(link.data.customerId)
        ? link.data.customerId
        : null,
    ),
  ]);
  const events = await stores.events.ofCustomer(accountId, refs);
  return { refs, recoveries, links, events };
}
