import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { z } from 'zod';
import { parseGateways } from '../cli/gateway-spec.js';
import { newAccountSettings } from '../cli/settings-input.js';
import type { AccountStore } from '../store/accounts.js';

export const demoAccountId = 'acct_demo';
/** Loopback and closed: the demo account's webhooks never leave this machine. */
const demoWebhookUrl = 'https://127.0.0.1:9/demo-webhooks';

const DemoCredentials = z.object({
  clientId: z.string(),
  apiKey: z.string(),
  publishableKey: z.string(),
  webhookSigningSecret: z.string(),
});
export type DemoCredentials = z.infer<typeof DemoCredentials>;

function readSaved(file: string): DemoCredentials | null {
  if (!existsSync(file)) return null;
  const parsed = DemoCredentials.safeParse(JSON.parse(readFileSync(file, 'utf8')));
  return parsed.success ? parsed.data : null;
}

async function issue(accounts: AccountStore): Promise<DemoCredentials> {
  if (await accounts.find(demoAccountId)) {
    // The saved file is gone or stale: keys are kept only as hashes, so the demo account gets new ones.
    const keys = await accounts.rotateKeys(demoAccountId);
    const webhookSigningSecret = await accounts.signingSecret(demoAccountId);
    if (!webhookSigningSecret) throw new Error('The demo account disappeared while its keys were rotated');
    return { clientId: demoAccountId, ...keys, webhookSigningSecret };
  }
  // The same path as `recoup accounts create --gateway test --webhook-url …`.
  const created = await accounts.create({
    id: demoAccountId,
    name: 'Demo (sandbox)',
    settings: newAccountSettings(demoWebhookUrl, undefined),
    gateways: parseGateways('test', []),
  });
  const { apiKey, publishableKey, webhookSigningSecret } = created;
  return { clientId: demoAccountId, apiKey, publishableKey, webhookSigningSecret };
}

/**
 * The demo sandbox account's credentials: created on the first start and saved (mode 0600) in `file`,
 * then read back on every later start as long as they still authenticate.
 */
export async function ensureDemoAccount(accounts: AccountStore, file: string): Promise<DemoCredentials> {
  const saved = readSaved(file);
  if (saved && (await accounts.authenticate(saved.apiKey))?.account.id === saved.clientId) return saved;
  const credentials = await issue(accounts);
  writeFileSync(file, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return credentials;
}
