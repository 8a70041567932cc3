import type { Db } from 'mongodb';
import { randomBytes } from 'node:crypto';
import { generateKey, seal, sha256, unseal, type Sealed } from '../runtime/crypto.js';
import type { GatewayConfig, Settings } from '../domain/settings.js';
import type { GatewayKind } from '../domain/gateway-kinds.js';
import { collections } from './collections.js';

/** A gateway as stored: credentials sealed with the master key. */
interface StoredGateway {
  name: string;
  kind: GatewayKind;
  test: boolean;
  credentials: Sealed;
}

interface AccountDoc {
  _id: string;
  name: string;
  settings: Settings;
  gateways: StoredGateway[];
  signingSecret: Sealed;
  createdAt: Date;
  updatedAt: Date;
}

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
  testMode: boolean;
  createdAt: Date;
  updatedAt: Date;
}

/** Credentials shown once, at creation or rotation. */
export interface IssuedKeys {
  apiKey: string;
  publishableKey: string;
}

function toAccount(doc: AccountDoc): Account {
  const gateways = doc.gateways.map(({ name, kind, test }) => ({ name, kind, test }));
  return {
    id: doc._id,
    name: doc.name,
    settings: doc.settings,
    gateways,
    testMode: gateways[0]?.test ?? false,
    createdAt: doc.createdAt,
    updatedAt: doc.updatedAt,
  };
}

/** Accounts, their API keys (hashed) and their sealed secrets. */
export function createAccountStore(db: Db, masterKey: Buffer) {
  const accounts = db.collection<AccountDoc>(collections.accounts);
  const keys = db.collection<ApiKeyDoc>(collections.apiKeys);

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
      const now = new Date();
      await accounts.insertOne({
        _id: id,
        name: input.name,
        settings: input.settings,
        gateways: input.gateways.map((g) => ({
          name: g.name,
          kind: g.kind,
          test: g.test,
          credentials: seal(masterKey, g.credentials),
        })),
        signingSecret: seal(masterKey, webhookSigningSecret),
        createdAt: now,
        updatedAt: now,
      });
      const issued = await issueKeys(id);
      const doc = await accounts.findOne({ _id: id });
      if (!doc) throw new Error(`Account ${id} vanished after insert`);
      return { account: toAccount(doc), ...issued, webhookSigningSecret };
    },

    async find(id: string): Promise<Account | null> {
      const doc = await accounts.findOne({ _id: id });
      return doc ? toAccount(doc) : null;
    },

    async list(): Promise<Account[]> {
      return (await accounts.find().sort({ createdAt: 1 }).toArray()).map(toAccount);
    },

    /** Replaces the settings (already validated as a whole by the caller). */
    async updateSettings(id: string, settings: Settings): Promise<Account | null> {
      await accounts.updateOne({ _id: id }, { $set: { settings, updatedAt: new Date() } });
      return this.find(id);
    },

    /** Revokes every key of the account at once and issues new ones. */
    async rotateKeys(id: string): Promise<IssuedKeys> {
      await keys.deleteMany({ accountId: id });
      return issueKeys(id);
    },

    /** Resolves an API key to its account and kind, or null. Keys are looked up by hash only. */
    async authenticate(apiKey: string): Promise<{ account: Account; kind: ApiKeyDoc['kind'] } | null> {
      const key = await keys.findOne({ _id: sha256(apiKey) });
      if (!key) return null;
      const account = await this.find(key.accountId);
      return account ? { account, kind: key.kind } : null;
    },

    async signingSecret(id: string): Promise<string | null> {
      const doc = await accounts.findOne({ _id: id }, { projection: { signingSecret: 1 } });
      return doc ? unseal<string>(masterKey, doc.signingSecret) : null;
    },

    /** Every gateway of the account with decrypted credentials, in one read, in priority order. */
    /** The account and its gateways with decrypted credentials, in priority order, from one read. */
    async withGateways(id: string): Promise<{ account: Account; gateways: GatewayConfig[] } | null> {
      const doc = await accounts.findOne({ _id: id });
      if (!doc) return null;
      const gateways = doc.gateways.map((g) => ({
        name: g.name,
        kind: g.kind,
        test: g.test,
        credentials: unseal<Record<string, string>>(masterKey, g.credentials),
      }));
      return { account: toAccount(doc), gateways };
    },
  };
}

export type AccountStore = ReturnType<typeof createAccountStore>;
