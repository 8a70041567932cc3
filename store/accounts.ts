import type { Db, Filter } from 'mongodb';
import { randomBytes } from 'node:crypto';
import { generateKey, seal, sha256, unseal, type Sealed } from '../runtime/crypto.js';
import type { GatewayConfig, Settings } from '../domain/settings.js';
import type { GatewayKind } from '../domain/gateway-kinds.js';
import type { ConnectorPlatform } from '../domain/connectors.js';
import { defaultNetworkRules } from '../domain/network-rules.js';
import { collections } from './collections.js';

/** A gateway as stored: credentials sealed with the master key. */
interface StoredGateway {
  name: string;
  kind: GatewayKind;
  test: boolean;
  countries?: string[];
  credentials: Sealed;
}

interface AccountDoc {
  _id: string;
  name: string;
  settings: Settings;
  gateways: StoredGateway[];
  signingSecret: Sealed;
  /** A rotated signing secret and when it starts signing; the current one signs until then. */
  nextSigningSecret?: { secret: Sealed; from: Date };
  /** Billing-platform connectors: each platform's configuration (webhook secrets, API keys), sealed. */
  connectors?: Partial<Record<ConnectorPlatform, Sealed>>;
  /** Being closed since then (`recoup accounts close`): takes nothing new, and nothing is started for it. */
  closingAt?: Date;
  createdAt: Date;
  updatedAt: Date;
}

/** The accounts the card health sweep sweeps: enabled, and not being closed. */
const sweepOn: Filter<AccountDoc> = {
  'settings.cardHealthSweep.enabled': true,
  closingAt: { $exists: false },
};

interface ApiKeyDoc {
  _id: string; // SHA-256 of the key
  accountId: string;
  kind: 'secret' | 'publishable';
  createdAt: Date;
}

/** An account as the rest of the code sees it: no secrets unless asked for. */
export interface Account {
  id: string;
  name: string;
  settings: Settings;
  gateways: Array<Omit<GatewayConfig, 'credentials'>>;
  /** Platforms with a configured connector. */
  connectors: ConnectorPlatform[];
  testMode: boolean;
  /** When a rotated webhook signing secret starts signing; null when none is waiting for its time. */
  nextSigningSecretFrom: Date | null;
  /** Being closed: its hosted pages and card health sweep stop (see `shut`). */
  closing: boolean;
  /** Since when it is being closed (`shut`); null for an open account. */
  closingAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** Credentials shown once, at creation or rotation. */
export interface IssuedKeys {
  apiKey: string;
  publishableKey: string;
}

/** A gateway without its credentials. */
function publicGateway({ name, kind, test, countries }: Omit<GatewayConfig, 'credentials'>) {
  return { name, kind, test, ...(countries ? { countries } : {}) };
}

function toAccount(doc: AccountDoc, now: number): Account {
  const next = doc.nextSigningSecret;
  const gateways = doc.gateways.map(publicGateway);
  return {
    id: doc._id,
    name: doc.name,
    // Accounts stored before a setting existed lack it: the setting's default stands in.
    settings: { ...doc.settings, networkRules: doc.settings.networkRules ?? defaultNetworkRules },
    gateways,
    connectors: (Object.keys(doc.connectors ?? {}) as ConnectorPlatform[]).sort(),
    testMode: gateways[0]?.test ?? false,
    nextSigningSecretFrom: next && next.from.getTime() > now ? next.from : null,
    closing: doc.closingAt !== undefined,
    closingAt: doc.closingAt ?? null,
    createdAt: doc.createdAt,
    updatedAt: doc.updatedAt,
  };
}

/** The sealed secret that signs a webhook sent at `now`: the rotated one once its time has come. */
function signingSecretAt(doc: AccountDoc, now: Date): Sealed {
  const next = doc.nextSigningSecret;
  return next && next.from.getTime() <= now.getTime() ? next.secret : doc.signingSecret;
}

/** How long a process may answer from its copy of an account; 0 reads the database every time. */
export interface AccountCaching {
  cacheMs?: number;
  now?: () => number;
}

/** Documents read by `_id`, kept for `ms` in this process; misses are not kept. */
function readThrough<T>(ms: number, now: () => number, read: (id: string) => Promise<T | null>) {
  const held = new Map<string, { doc: T; until: number }>();
  return {
    async get(id: string): Promise<T | null> {
      const hit = held.get(id);
      if (hit && hit.until > now()) return hit.doc;
      const doc = await read(id);
      if (ms > 0 && doc) {
        if (held.size >= 10_000) held.clear();
        held.set(id, { doc, until: now() + ms });
      } else held.delete(id);
      return doc;
    },
    forget: (id: string) => void held.delete(id),
  };
}

/**
 * Accounts, their API keys (hashed) and their sealed secrets. With `cacheMs`, a process answers account
 * reads from its own copy for that long: every execute, screen and webhook reads the account, and this is
 * the hottest read there is. Settings changed by another process (the CLI) take effect within `cacheMs`.
 * API keys are always read from the database, so a rotated key stops working at once everywhere.
 */
export function createAccountStore(db: Db, masterKey: Buffer, caching: AccountCaching = {}) {
  const accounts = db.collection<AccountDoc>(collections.accounts);
  const keys = db.collection<ApiKeyDoc>(collections.apiKeys);
  const ms = caching.cacheMs ?? 0;
  const now = caching.now ?? Date.now;
  const accountDocs = readThrough(ms, now, (id) => accounts.findOne({ _id: id }));

  const sealGateway = (g: GatewayConfig): StoredGateway => ({
    ...publicGateway(g),
    credentials: seal(masterKey, g.credentials),
  });
  const gatewaysOf = (doc: AccountDoc): GatewayConfig[] =>
    doc.gateways.map((g) => ({
      ...publicGateway(g),
      credentials: unseal<Record<string, string>>(masterKey, g.credentials),
    }));

  async function issueKeys(accountId: string): Promise<IssuedKeys> {
    const issued = { apiKey: generateKey('secret'), publishableKey: generateKey('publishable') };
    const now = new Date();
    await keys.insertMany([
      { _id: sha256(issued.apiKey), accountId, kind: 'secret', createdAt: now },
      { _id: sha256(issued.publishableKey), accountId, kind: 'publishable', createdAt: now },
    ]);
    return issued;
  }

  return {
    /** Creates an account with fresh keys and signing secret; returns them once. */
    async create(input: { name: string; settings: Settings; gateways: GatewayConfig[]; id?: string }) {
      const id = input.id ?? `acct_${randomBytes(12).toString('hex')}`;
      const webhookSigningSecret = generateKey('signing');
      const at = new Date();
      await accounts.insertOne({
        _id: id,
        name: input.name,
        settings: input.settings,
        gateways: input.gateways.map(sealGateway),
        signingSecret: seal(masterKey, webhookSigningSecret),
        createdAt: at,
        updatedAt: at,
      });
      const issued = await issueKeys(id);
      const doc = await accounts.findOne({ _id: id });
      if (!doc) throw new Error(`Account ${id} vanished after insert`);
      return { account: toAccount(doc, now()), ...issued, webhookSigningSecret };
    },

    async find(id: string): Promise<Account | null> {
      const doc = await accountDocs.get(id);
      return doc ? toAccount(doc, now()) : null;
    },

    async list(): Promise<Account[]> {
      return (await accounts.find().sort({ createdAt: 1 }).toArray()).map((doc) => toAccount(doc, now()));
    },

    /** The ids of the accounts whose card health sweep is enabled, all at once (the daily sweep pages them). */
    async sweepEnabled(): Promise<string[]> {
      const docs = await accounts
        .find(sweepOn, { projection: { _id: 1 } })
        .sort({ createdAt: 1 })
        .toArray();
      return docs.map((d) => d._id);
    },

    /**
     * A page of the ids of the accounts whose card health sweep is enabled, in id order: at most `limit`,
     * those after `after` (null: from the first). The last id of a page is the next page's `after`.
     */
    async sweepEnabledPage(after: string | null, limit: number): Promise<string[]> {
      const docs = await accounts
        .find(after === null ? sweepOn : { ...sweepOn, _id: { $gt: after } }, { projection: { _id: 1 } })
        .sort({ _id: 1 })
        .limit(limit)
        .toArray();
      return docs.map((d) => d._id);
    },

    /** The ids and retention of the accounts that keep their records for a limited time, oldest first. */
    async withRetention(): Promise<Array<{ id: string; days: number }>> {
      const docs = await accounts
        .find({ 'settings.dataRetentionDays': { $ne: null } }, { projection: { settings: 1 } })
        .sort({ createdAt: 1 })
        .toArray();
      return docs.flatMap((d) =>
        d.settings.dataRetentionDays === null ? [] : [{ id: d._id, days: d.settings.dataRetentionDays }],
      );
    },

    /** Replaces the settings (already validated as a whole by the caller). */
    async updateSettings(id: string, settings: Settings): Promise<Account | null> {
      await accounts.updateOne({ _id: id }, { $set: { settings, updatedAt: new Date() } });
      accountDocs.forget(id);
      return this.find(id);
    },

    /**
     * Replaces the account's gateways (primary first), their credentials sealed with the master key. Other
     * processes see them within `cacheMs`.
     */
    async setGateways(id: string, gateways: GatewayConfig[]): Promise<Account | null> {
      await accounts.updateOne(
        { _id: id },
        {
          $set: {
            gateways: gateways.map(sealGateway),
            updatedAt: new Date(),
          },
        },
      );
      accountDocs.forget(id);
      return this.find(id);
    },

    /** Sets (or replaces) one platform's connector; its configuration is sealed with the master key. */
    async setConnector(id: string, platform: ConnectorPlatform, config: Record<string, unknown>) {
      await accounts.updateOne(
        { _id: id },
        { $set: { [`connectors.${platform}`]: seal(masterKey, config), updatedAt: new Date() } },
      );
      accountDocs.forget(id);
      return this.find(id);
    },

    /** Removes one platform's connector: its intake URL answers 404 from then on. */
    async removeConnector(id: string, platform: ConnectorPlatform) {
      await accounts.updateOne(
        { _id: id },
        { $unset: { [`connectors.${platform}`]: '' }, $set: { updatedAt: new Date() } },
      );
      accountDocs.forget(id);
      return this.find(id);
    },

    /** The account, its gateways and one connector's configuration, decrypted; null when either is missing. */
    async withConnector(id: string, platform: ConnectorPlatform) {
      const doc = await accountDocs.get(id);
      const sealed = doc?.connectors?.[platform];
      if (!doc || !sealed) return null;
      return {
        account: toAccount(doc, now()),
        gateways: gatewaysOf(doc),
        config: unseal<Record<string, unknown>>(masterKey, sealed),
      };
    },

    /**
     * Takes nothing new for the account (its closure): revokes every key, turns every connector's intake
     * URL off, and marks it closing, which stops its hosted pages and card health sweep. Other processes see
     * it within their account cache.
     */
    async shut(id: string): Promise<void> {
      await keys.deleteMany({ accountId: id });
      const now = new Date();
      await accounts.updateOne({ _id: id }, { $set: { connectors: {}, closingAt: now, updatedAt: now } });
      accountDocs.forget(id);
    },

    /** Revokes every key of the account at once and issues new ones. */
    async rotateKeys(id: string): Promise<IssuedKeys> {
      await keys.deleteMany({ accountId: id });
      return issueKeys(id);
    },

    /**
     * Resolves an API key to its account and kind, or null. Keys are looked up by hash only. A key of an
     * account being closed is refused: `shut` revoked its keys, but one issued since (a rotation racing the
     * closure) must not open it again.
     */
    async authenticate(apiKey: string): Promise<{ account: Account; kind: ApiKeyDoc['kind'] } | null> {
      const key = await keys.findOne({ _id: sha256(apiKey) });
      if (!key) return null;
      const account = await this.find(key.accountId);
      return account && !account.closing ? { account, kind: key.kind } : null;
    },

    /** The secret that signs the account's webhooks at `now`. */
    async signingSecret(id: string, now = new Date()): Promise<string | null> {
      return (await this.webhookTarget(id, now))?.secret ?? null;
    },

    /** Where the account's webhooks go and the secret that signs one sent at `now`, from one read. */
    async webhookTarget(id: string, now = new Date()): Promise<{ url: string; secret: string } | null> {
      const doc = await accountDocs.get(id);
      return doc
        ? { url: doc.settings.webhookUrl, secret: unseal<string>(masterKey, signingSecretAt(doc, now)) }
        : null;
    },

    /**
     * Issues a new webhook signing secret that signs from `from`; the one signing at `now` goes on signing
     * until then (none, when `from` is not after `now`). A rotation still waiting for its time is replaced,
     * its secret never used. Returns the new secret (shown once), or null for an unknown account.
     */
    async rotateSigningSecret(id: string, from: Date, now: Date): Promise<string | null> {
      const doc = await accounts.findOne({ _id: id });
      if (!doc) return null;
      const secret = generateKey('signing');
      const sealed = seal(masterKey, secret);
      await accounts.updateOne(
        { _id: id },
        from.getTime() <= now.getTime()
          ? { $set: { signingSecret: sealed, updatedAt: now }, $unset: { nextSigningSecret: '' } }
          : {
              $set: {
                signingSecret: signingSecretAt(doc, now),
                nextSigningSecret: { secret: sealed, from },
                updatedAt: now,
              },
            },
      );
      accountDocs.forget(id);
      return secret;
    },

    /** The account and its gateways with decrypted credentials, in priority order, from one read. */
    async withGateways(id: string): Promise<{ account: Account; gateways: GatewayConfig[] } | null> {
      const doc = await accountDocs.get(id);
      return doc ? { account: toAccount(doc, now()), gateways: gatewaysOf(doc) } : null;
    },
  };
}

export type AccountStore = ReturnType<typeof createAccountStore>;
