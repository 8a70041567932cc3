import type { Client } from '@temporalio/client';
import type { CustomerIdentity } from '../domain/customer-identity.js';
import { statusOf } from '../domain/recovery.js';
import type { EventRecord } from '../store/events.js';
import type { Stores } from '../store/index.js';
import { erasedToken, type RecoveryDoc } from '../store/recoveries.js';
import { cardKeyOf } from '../runtime/crypto.js';
import { customerFootprint, type Footprint } from './customer-footprint.js';
import { beingDelivered, removeDelivered, removeWrittenMeanwhile } from './erasure-events.js';
import { deleteHistory, running } from './workflow-history.js';

/**
 * Something of the customer is still being worked on: the erasure is not done. `partly` when it erased what
 * it found before recoveries admitted while it ran, or webhook events about the customer published while
 * it ran and still being delivered, turned up (run it again once they end); else nothing was changed.
 */
type InFlight = { kind: 'in_flight'; transactionIds: string[]; eventIds: string[]; partly: boolean };

export type ErasureOutcome =
  | InFlight
  | {
      kind: 'erased';
      erasedAt: Date;
      /** Recoveries kept for the merchant's books, with nothing that names the customer. */
      recoveries: number;
      pulses: number;
      /** Deleted. */
      events: number;
      links: number;
      workflowHistories: number;
    };

/** The customer's recoveries and event deliveries under way (nothing may change while they run), or null. */
async function workUnderWay(
  temporal: Client,
  { recoveries, events }: Footprint,
  now: Date,
): Promise<InFlight | null> {
  const busy: RecoveryDoc[] = [];
  for (const r of recoveries)
    if (statusOf(r.state) === 'unknown' || (await running(temporal, r.workflowId))) busy.push(r);
  const delivering: EventRecord[] = [];
  for (const e of events) if (await beingDelivered(temporal, e, now)) delivering.push(e);
  if (busy.length === 0 && delivering.length === 0) return null;
  return {
    kind: 'in_flight',
    transactionIds: busy.map((r) => r.publicId),
    eventIds: delivering.map((e) => e._id),
    partly: false,
  };
}

/**
 * The customer index of their emails no longer leads to the recoveries found, and the retention notices and
 * Proof Mode groups of their emails and cards are forgotten. The index is unlinked entry by entry: a
 * recovery admitted since the footprint was read keeps its entry. Notices and groups name no recovery, so
 * such a recovery may lose its own with the customer's: `admittedMeanwhile` finds it afterwards.
 */
async function forgetCustomer(stores: Stores, accountId: string, { refs, recoveries }: Footprint) {
  const erased = recoveries.map((r) => r._id);
  for (const email of refs.emails) {
    await stores.recoveries.unlinkCustomer(accountId, email, erased);
    await stores.retentionNotices.forget(accountId, email);
  }
  await stores.holdouts.forget(accountId, [...refs.emails, ...refs.tokens]);
}

/**
 * Recoveries of the customer admitted after the footprint was read (an execute or a platform's report
 * racing the erasure). Looked up once their groups and notices are forgotten: one admitted after this look
 * drew its group, and claimed its notice, after that, and keeps them.
 */
async function admittedMeanwhile(stores: Stores, accountId: string, { refs, recoveries }: Footprint) {
  const found = new Set(recoveries.map((r) => r._id));
  const current = await stores.recoveries.ofCustomer(accountId, refs);
  return current.filter((r) => !found.has(r._id));
}

/**
 * The card-network attempt budgets of the customer's cards and the 5-minute duplicate claims of their
 * recoveries keep their counts (the networks' rules and the duplicate check stay exact) but no longer name
 * the recoveries: with a token, its card key would lead there. Before the recoveries, which an interrupted
 * erasure starts again from.
 */
async function forgetCardClaims(
  stores: Stores,
  accountId: string,
  tokens: string[],
  recoveries: RecoveryDoc[],
  now: Date,
): Promise<void> {
  const workflowIds = recoveries.map((r) => r.workflowId);
  for (const token of tokens)
    await stores.cardBudgets.forgetAttempts(cardKeyOf(accountId, token), workflowIds);
  // A claim of one of the erased recoveries, or of one data retention deleted since; not of a recovery
  // admitted while the erasure runs.
  const erasedIds = new Set(recoveries.map((r) => r._id));
  const erasable = async (transactionId: string) =>
    erasedIds.has(transactionId) || !(await stores.recoveries.find(accountId, transactionId));
  for (const { request } of recoveries)
    if (request.paymentMethodToken !== erasedToken)
      await stores.claims.forgetVelocity(
        accountId,
        cardKeyOf(accountId, request.paymentMethodToken),
        request.amount,
        request.currency,
        erasable,
        now,
      );
}

/**
 * Erases one customer of an account (a data-protection request): deletes the webhook events and hosted links
 * about them and their workflows' histories in Temporal, and replaces their email, payment-method tokens
 * (and the card keys hashed from them), card number prefix and platform customer id in the recoveries and
 * pulses kept for the merchant's books by one pseudonym; its cards' attempt budgets and duplicate claims
 * no longer name the recoveries. Refuses while a recovery of theirs or a delivery
 * of one of their events is under way. A payment they still owed is no longer held for the paywall: data
 * retention deletes it as a settled one. A recovery of theirs admitted while it runs is left as it is and
 * answered as under way: the erasure is not finished until it is run again once that recovery ends. What
 * else names them and was written while it ran (a link minted, an event published) is looked for once the
 * records are pseudonymised and deleted; such an event still being delivered is answered as under way.
 * Safe to run again after an interruption, as the same request or one naming any identifier the first
 * found: it finishes what is left, under the same pseudonym. Used by `POST /api/customers/erase` and
 * `recoup customers erase`.
 */
export async function eraseCustomer(
  deps: { stores: Stores; temporal: Client; clock: () => Date },
  accountId: string,
  request: CustomerIdentity,
): Promise<ErasureOutcome> {
  const { stores, temporal } = deps;
  const now = deps.clock();
  // As the merchant named the customer: running the same request again continues with the same pseudonym,
  // from what the first run found (it may have unlinked the record that led to another card or address).
  const who = JSON.stringify([
    request.customerEmail ?? null,
    request.customerId ?? null,
    [...new Set(request.paymentMethodTokens ?? [])].toSorted(),
  ]);
  // Or begun by a request naming them otherwise, that found what this one names.
  const named = {
    emails: request.customerEmail ? [request.customerEmail] : [],
    tokens: request.paymentMethodTokens ?? [],
    customerIds: request.customerId ? [request.customerId] : [],
  };
  const earlier = await stores.erasures.underWay(accountId, who, named);
  const footprint = await customerFootprint(stores, accountId, request, earlier?.refs);
  const underWay = await workUnderWay(temporal, footprint, now);
  if (underWay) return underWay;

  const { refs, recoveries, links, events } = footprint;
  const { emails, tokens, customerIds } = refs;
  const pseudonym = await stores.erasures.begin(
    accountId,
    who,
    earlier,
    { emails, tokens, customerIds },
    now,
  );
  // Histories first, then what leads to the records, then the records: a run interrupted anywhere still
  // finds what is left when run again, from what it recorded above and the recoveries, changed last.
  let workflowHistories = 0;
  for (const r of recoveries) if (await deleteHistory(temporal, r.workflowId)) workflowHistories++;
  const removed = await removeDelivered(temporal, stores, events, now);
  workflowHistories += removed.histories;
  const removedLinks = await stores.links.remove(links.map(({ link }) => link._id));
  const pulses = await stores.pulses.pseudonymise(accountId, refs.emails, pseudonym);
  await forgetCustomer(stores, accountId, footprint);
  await forgetCardClaims(stores, accountId, refs.tokens, recoveries, now);
  for (const r of recoveries) await stores.recoveries.pseudonymise(r, pseudonym, now);
  // Unfinished, the erasure is run again with the same pseudonym and what it recorded above.
  const unfinished = (transactionIds: string[], delivering: EventRecord[]): InFlight => ({
    kind: 'in_flight',
    transactionIds,
    // One kept by the first look is found again by the second.
    eventIds: [...new Set(delivering.map((e) => e._id))],
    partly: true,
  });
  const admitted = await admittedMeanwhile(stores, accountId, footprint);
  if (admitted.length > 0)
    return unfinished(
      admitted.map((r) => r.publicId),
      removed.delivering,
    );
  const late = await removeWrittenMeanwhile(temporal, stores, accountId, refs, now);
  const delivering = [...removed.delivering, ...late.delivering];
  if (delivering.length > 0) return unfinished([], delivering);
  await stores.erasures.finish(accountId, who, earlier);
  return {
    kind: 'erased',
    erasedAt: now,
    recoveries: recoveries.length,
    pulses,
    events: removed.events + late.events,
    links: removedLinks + late.links,
    workflowHistories: workflowHistories + late.histories,
  };
}
