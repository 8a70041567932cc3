import type { CancelOffer } from './settings.js';

const hour = 3_600_000;

/** How long a hosted link can be used (spec, "Link lifecycle"). */
export const linkLifetimesMs = {
  cardUpdate: 72 * hour,
  cancelFlow: 48 * hour,
  /** The pre-emptive card-update link of card.expiring_soon (card health sweep). */
  cardExpiry: 14 * 24 * hour,
} as const;

/**
 * A use whose effects are still undone after this long was interrupted (the request died): the link's
 * follow-up workflow, or the next visit of the link, finishes it.
 */
export const interruptedUseAfterMs = 60_000;

/**
 * How long the hosted form (or gateway session) that used a link is answered with that use's result when it
 * is sent again (a double click, a reload during a slow save); after that, or for any other use, the link
 * reads as used.
 */
export const resubmissionWindowMs = 10 * 60_000;

/** The follow-up workflow of one use of a link (its hash: never the token itself). */
export function linkUseWorkflowId(hash: string): string {
  return `link-use-${hash}`;
}

/** The two kinds of hosted link and the page path each lives under. */
export type LinkKind = 'card_update' | 'cancel_flow';

/** The languages of the hosted pages (ISO 639-1); a link may fix one, else the browser's preference decides. */
export const pageLocales = ['en', 'de', 'fr', 'es', 'it', 'nl', 'pt'] as const;
export type PageLocale = (typeof pageLocales)[number];

/** The pages' language for a platform's locale tag (`fr-CA`, `pt_BR`, `de`), or null when they do not speak it. */
export function pageLocaleOf(tag: string | null | undefined): PageLocale | null {
  const language = tag?.trim().split(/[-_]/)[0]?.toLowerCase();
  return pageLocales.find((l) => l === language) ?? null;
}
export const linkPaths: Record<LinkKind, string> = {
  card_update: 'update-card',
  cancel_flow: 'cancel-flow',
};

/** What a customer can end the cancel flow with. */
export type ChurnOutcome = 'retained' | 'paused' | 'downgraded' | 'cancelled';

/** The customer's choice on the cancel-flow page. */
export type CancelChoice = { kind: 'offer'; offer: CancelOffer } | { kind: 'keep' } | { kind: 'cancel' };

/** The churn outcome of a choice; a discount keeps the subscription, so it counts as retained. */
export function churnOutcomeOf(choice: CancelChoice): ChurnOutcome {
  if (choice.kind === 'keep') return 'retained';
  if (choice.kind === 'cancel') return 'cancelled';
  if (choice.offer.type === 'pause') return 'paused';
  if (choice.offer.type === 'downgrade') return 'downgraded';
  return 'retained';
}

/** The choice a recorded churn outcome stands for: the offer taken, else keeping or cancelling. */
export function choiceOfOutcome(outcome: ChurnOutcome, offer: CancelOffer | null): CancelChoice {
  if (offer) return { kind: 'offer', offer };
  return outcome === 'cancelled' ? { kind: 'cancel' } : { kind: 'keep' };
}

/** Whether a link can still be used at `now`: neither consumed nor past its expiry. */
export function linkState(
  link: { expiresAt: Date; consumed: boolean },
  now: Date,
): 'usable' | 'used' | 'expired' {
  if (link.consumed) return 'used';
  return now.getTime() >= link.expiresAt.getTime() ? 'expired' : 'usable';
}
