import { randomBytes, randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { Settings } from '../domain/settings.js';
import { createAccountStore, type AccountStore } from '../store/accounts.js';
import { scratchDb } from './support/scratch-db.js';

const { client, db } = scratchDb('accounts', { monitorCommands: true });
const masterKey = randomBytes(32);
/** Commands sent to the server, by name. */
const sent: string[] = [];
let clock = 1_000_000;
/** A long-running process (API or worker) with a 5 s account cache, and the CLI beside it. */
let service: AccountStore;
let cli: AccountStore;

beforeAll(() => {
  client().on('commandStarted', (e) => sent.push(e.commandName));
  service = createAccountStore(db(), masterKey, { cacheMs: 5_000, now: () => clock });
  cli = createAccountStore(db(), masterKey);
});

const newAccount = (id?: string) =>
  cli.create({
    ...(id ? { id } : {}),
    name: 'cached',
    settings: Settings.parse({ webhookUrl: 'https://merchant.example.com/hooks' }),
    gateways: [{ name: 'test', kind: 'test', test: true, credentials: { latencyMs: '5' } }],
  });

describe('account cache', () => {
  it('answers repeated reads of an account from memory, and reads the key every time', async () => {
    const { account, apiKey } = await newAccount();
    expect(await service.authenticate(apiKey)).toMatchObject({ account: { id: account.id } });
    sent.length = 0;
    expect(await service.authenticate(apiKey)).toMatchObject({ account: { id: account.id } });
    expect(await service.withGateways(account.id)).toMatchObject({
      gateways: [{ name: 'test', credentials: { latencyMs: '5' } }],
    });
    expect(await service.signingSecret(account.id)).toMatch(/^whsec_/);
    expect(sent).toEqual(['find']); // the key, by hash
  });

  it('sees settings changed by another process once its copy expires, and a rotated key at once', async () => {
    const { account, apiKey } = await newAccount();
    await service.authenticate(apiKey);
    await cli.updateSettings(account.id, { ...account.settings, dunningEnabled: false });
    const rotated = await cli.rotateKeys(account.id);
    expect(await service.authenticate(apiKey)).toBeNull();
    expect(await service.authenticate(rotated.apiKey)).toMatchObject({ kind: 'secret' });
    expect((await service.find(account.id))?.settings.dunningEnabled).toBe(true);
    clock += 5_001;
    expect((await service.find(account.id))?.settings.dunningEnabled).toBe(false);
  });

  it('applies its own changes at once and never remembers a missing account', async () => {
    const { account } = await newAccount();
    await service.find(account.id);
    await service.updateSettings(account.id, { ...account.settings, riskSkipThreshold: 90 });
    expect((await service.find(account.id))?.settings.riskSkipThreshold).toBe(90);
    const id = `acct_later_${randomUUID().slice(0, 8)}`;
    expect(await service.find(id)).toBeNull();
    await newAccount(id);
    expect(await service.find(id)).not.toBeNull();
  });
});
