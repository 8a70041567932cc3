import type { LinkKind } from '../../domain/links.js';
import type { LinkOutcomes } from '../../services/link-outcomes.js';
import type { LinkService } from '../../services/links.js';
import type { Account } from '../../store/accounts.js';
import type { Stores } from '../../store/index.js';
import type { ConsumptionDoc, LinkDoc } from '../../store/links.js';
import type { AppContext } from '../context.js';
import { messagesFor, type PageMessages } from './i18n/index.js';
import { brandOf, type PageBrand } from './layout.js';
import { goneLinkPage, unknownLinkPage } from './notices.js';

/** What the page handlers need. */
export interface PageDeps {
  stores: Stores;
  /** Where pages live when the account has no custom domain. */
  publicBaseUrl: string;
  links: LinkService;
  outcomes: LinkOutcomes;
  clock: () => Date;
}

/** A usable link with its account, branding and the customer's language. */
export interface LoadedLink<K extends LinkKind> {
  link: Extract<LinkDoc, { kind: K }>;
  account: Account;
  brand: PageBrand;
  messages: PageMessages;
}

/**
 * Answers a request for a link that is used already, when it can (the submission that used it, sent again):
 * true when it did, false to let the "already used" page answer.
 */
export type UsedLinkAnswer<K extends LinkKind> = (
  used: LoadedLink<K>,
  consumption: ConsumptionDoc,
) => boolean;

/**
 * Answers a request for a link that has expired, when it can (a use begun in time and finished since):
 * true when it did, false to let the "expired" page answer.
 */
export type ExpiredLinkAnswer<K extends LinkKind> = (expired: LoadedLink<K>) => Promise<boolean>;

const tokenShape = /^[A-Za-z0-9_-]{22,128}$/;

function isKind<K extends LinkKind>(link: LinkDoc, kind: K): link is Extract<LinkDoc, { kind: K }> {
  return link.kind === kind;
}

/**
 * Finds the usable link of `kind` behind the token, or renders why there is none: 404 for no such link,
 * 410 for a used or expired one (after finishing a use that was interrupted, so its event still goes out),
 * unless `answerUsed` answers for the use or `answerExpired` for the expired link.
 */
export async function loadLink<K extends LinkKind>(
  deps: PageDeps,
  ctx: AppContext,
  token: string,
  kind: K,
  answerUsed?: UsedLinkAnswer<K>,
  answerExpired?: ExpiredLinkAnswer<K>,
): Promise<LoadedLink<K> | null> {
  const opened = tokenShape.test(token) ? await deps.links.open(token, kind) : null;
  const account = opened ? await deps.stores.accounts.find(opened.link.accountId) : null;
  if (!opened || !account || !isKind(opened.link, kind)) {
    unknownLinkPage(ctx, messagesFor(ctx));
    return null;
  }
  const look = { brand: brandOf(account), messages: messagesFor(ctx, opened.link.data.locale) };
  // An account being closed takes no more uses: its closure deletes its links and what they would send.
  if (account.closing) {
    goneLinkPage(ctx, look, 'expired');
    return null;
  }
  if (opened.state !== 'usable') {
    await deps.outcomes.finishInterrupted(opened.link, opened.consumption);
    const { consumption, state } = opened;
    const gone = { link: opened.link, account, ...look };
    if (consumption && answerUsed?.(gone, consumption)) return null;
    if (state === 'expired' && (await answerExpired?.(gone))) return null;
    goneLinkPage(ctx, look, state);
    return null;
  }
  return { link: opened.link, account, ...look };
}
