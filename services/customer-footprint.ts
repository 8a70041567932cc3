import type { CustomerIdentity } from '../domain/customer-identity.js';
import type { CustomerRefs } from '../store/customer-refs.js';
import type { ErasedRefs } from '../store/erasures.js';
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

/**
 * How many times the footprint looks the recoveries up again by what the last look found. Each look must
 * find a record linking a new identifier, so a real customer settles in two or three; a chain longer than
 * this ties records of many people together one after another (cards and addresses they share), and the
 * footprint refuses to guess (an error, before anything is read out or changed).
 */
export const maxFootprintRounds = 8;

/** The customer's identifiers spread through so many records that their footprint would not settle. */
export class FootprintTooWideError extends Error {
  override name = 'FootprintTooWideError';
}

const unique = (values: Array<string | null | undefined>): string[] => [
  ...new Set(values.filter((v): v is string => typeof v === 'string' && v !== erasedToken)),
];

type FoundLink = Footprint['links'][number];

/** Every token a recovery charged or could charge. */
const cardsOfRecovery = (r: RecoveryDoc) => [
  r.paymentMethodToken,
  r.request.paymentMethodToken,
  ...(r.request.fallbackPaymentMethodTokens ?? []),
];

/** The cards a link names: the one a card-update link was minted for, and the one saved through it. */
const cardsOfLink = ({ link, consumption: c }: FoundLink) => [
  link.kind === 'card_update' ? link.data.paymentMethodToken : null,
  c?.outcome.kind === 'card_updated' ? c.outcome.newPaymentMethodToken : null,
];

/** Both forms of a recovery's id. */
const idsOf = (r: RecoveryDoc) => [r._id, r.publicId];

/** What names the customer: what the merchant named, and what their recoveries and links add to it. */
function refsOf(named: CustomerRefs, recoveries: RecoveryDoc[], links: FoundLink[]): CustomerRefs {
  const emails = unique([
    ...named.emails,
    ...recoveries.map((r) => r.customerEmail),
    ...links.map(({ link }) => link.data.customerEmail),
  ]);
  return {
    emails,
    tokens: unique([...named.tokens, ...recoveries.flatMap(cardsOfRecovery), ...links.flatMap(cardsOfLink)]),
    transactionIds: unique([
      ...recoveries.flatMap(idsOf),
      // The recovery a card-update link was minted for, which may not name the customer itself.
      ...links.map(({ link }) => (link.kind === 'card_update' ? link.data.transactionId : null)),
    ]),
    customerIds: unique([
      ...named.customerIds,
      ...recoveries.map((r) => r.connector?.customerId),
      // A cancel flow names the customer by the merchant's id; the proactive one by the email, known already.
      ...links.map(({ link }) =>
        link.kind === 'cancel_flow' && !emails.includes(link.data.customerId) ? link.data.customerId : null,
      ),
    ]),
  };
}

/** Whether `refs` holds an identifier the recoveries were not looked up by (nor, for an id, found with). */
const addsTo = (searched: CustomerRefs, refs: CustomerRefs): boolean =>
  (['emails', 'tokens', 'transactionIds', 'customerIds'] as const).some((k) =>
    refs[k].some((value) => !searched[k].includes(value)),
  );

/**
 * Everything stored that names the customer: their recoveries and the links minted for them, looked up by
 * what the merchant named and again by every email, token (charged, a fallback, or the card a link was
 * minted for or saved), customer id and recovery (one a link was minted for) those add, until nothing new
 * appears; then the webhook events about any of it. So a recovery on another card of the same email is
 * found from one token, one of another email from a card they share, and one executed without an email
 * from the card-update link minted for its card with the email. Throws FootprintTooWideError when that
 * takes more than `maxFootprintRounds` looks.
 */
export async function customerFootprint(
  stores: Stores,
  accountId: string,
  request: CustomerIdentity,
  /** Identifiers an earlier, interrupted erasure of the same request found: named as if the merchant had. */
  found: ErasedRefs = { emails: [], tokens: [], customerIds: [] },
): Promise<Footprint> {
  const named: CustomerRefs = {
    emails: unique([request.customerEmail, ...found.emails]),
    tokens: unique([...(request.paymentMethodTokens ?? []), ...found.tokens]),
    transactionIds: [],
    customerIds: unique([request.customerId, ...found.customerIds]),
  };
  let searched: CustomerRefs = { emails: [], tokens: [], transactionIds: [], customerIds: [] };
  let refs = named;
  let recoveries: RecoveryDoc[] = [];
  let links: FoundLink[] = [];
  for (let round = 0; addsTo(searched, refs); round++) {
    if (round === maxFootprintRounds)
      throw new FootprintTooWideError(
        `The customer's records did not settle after ${maxFootprintRounds} lookups: their identifiers tie together more than one customer's records`,
      );
    // Each look asks for everything known so far: what it finds includes what the last one found.
    recoveries = await stores.recoveries.ofCustomer(accountId, refs);
    // A recovery found needs no look by its own ids; one a link names but no look found does.
    searched = { ...refs, transactionIds: unique([...refs.transactionIds, ...recoveries.flatMap(idsOf)]) };
    links = await stores.links.ofCustomer(accountId, refsOf(named, recoveries, links));
    refs = refsOf(named, recoveries, links);
  }
  const events = await stores.events.ofCustomer(accountId, refs);
  return { refs, recoveries, links, events };
}
