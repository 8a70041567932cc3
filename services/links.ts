import { linkLifetimesMs, linkPaths, linkState, type LinkKind } from '../domain/links.js';
import { randomToken, sha256 } from '../runtime/crypto.js';
import type { Account } from '../store/accounts.js';
import type { Stores } from '../store/index.js';
import type { CancelFlowData, CardUpdateData, ConsumptionDoc, LinkDoc } from '../store/links.js';

/** A minted link as the API returns it (spec, "Hosted link"). The token is shown here once, never stored. */
export interface HostedLink {
  url: string;
  token: string;
  expiresAt: string;
}

/** A link found by its token, and whether it can still be used. */
export interface OpenedLink {
  link: LinkDoc;
  consumption: ConsumptionDoc | null;
  state: 'usable' | 'used' | 'expired';
}

type LinkAccount = Pick<Account, 'id' | 'settings'>;

/** Where an account's hosted pages live: its custom domain (CNAME to Recoup, always https) or the public URL. */
export function pagesOrigin(account: LinkAccount, publicBaseUrl: string): string {
  const domain = account.settings.customDomain;
  return domain ? `https://${domain}` : publicBaseUrl.replace(/\/$/, '');
}

export interface LinkServiceDeps {
  stores: Stores;
  publicBaseUrl: string;
  clock: () => Date;
}

/** Mints and opens hosted links. Tokens carry 256 random bits; only their SHA-256 is stored. */
export function createLinkService(deps: LinkServiceDeps) {
  const { stores, publicBaseUrl, clock } = deps;

  async function mint(
    account: LinkAccount,
    lifetimeMs: number,
    link: { kind: 'card_update'; data: CardUpdateData } | { kind: 'cancel_flow'; data: CancelFlowData },
  ): Promise<HostedLink> {
    const token = randomToken(32);
    const now = clock();
    const expiresAt = new Date(now.getTime() + lifetimeMs);
    await stores.links.insert({
      ...link,
      _id: sha256(token),
      accountId: account.id,
      expiresAt,
      consumedAt: null,
      formSecret: randomToken(32),
      createdAt: now,
    });
    const url = `${pagesOrigin(account, publicBaseUrl)}/${linkPaths[link.kind]}/${token}`;
    return { url, token, expiresAt: expiresAt.toISOString() };
  }

  return {
    /** A card-update link, valid 72 hours. */
    mintCardUpdateLink: (account: LinkAccount, data: CardUpdateData) =>
      mint(account, linkLifetimesMs.cardUpdate, { kind: 'card_update', data }),

    /** The pre-emptive card-update link of card.expiring_soon (card health sweep), valid 14 days. */
    mintCardExpiryLink: (account: LinkAccount, data: CardUpdateData) =>
      mint(account, linkLifetimesMs.cardExpiry, { kind: 'card_update', data }),

    /** A cancel-flow link, valid 48 hours. */
    mintCancelFlowLink: (account: LinkAccount, data: CancelFlowData) =>
      mint(account, linkLifetimesMs.cancelFlow, { kind: 'cancel_flow', data }),

    /** The link of `kind` behind a token, or null when there is none (a token of the other kind included). */
    async open(token: string, kind: LinkKind): Promise<OpenedLink | null> {
      const found = await stores.links.find(sha256(token));
      if (!found || found.link.kind !== kind) return null;
      const consumed = found.consumption !== null || found.link.consumedAt !== null;
      return { ...found, state: linkState({ expiresAt: found.link.expiresAt, consumed }, clock()) };
    },
  };
}

export type LinkService = ReturnType<typeof createLinkService>;
