import { parseConnectorConfig } from '../activities/connectors/registry.js';
import type { GatewayConfig } from '../domain/settings.js';
import type { Account } from '../store/accounts.js';
import type { Stores } from '../store/index.js';

export type GatewaysOutcome =
  { kind: 'not_found' } | { kind: 'refused'; reason: string } | { kind: 'replaced'; account: Account };

/**
 * Replaces an account's gateways (a rotated API key, an Adyen webhook's HMAC key, a new backup), primary
 * first, unless something running still needs one that goes: a recovery under way may charge through any of
 * the account's gateways at its next attempt (it names them), so a gateway is removed only once none is under
 * way; and every configured billing-platform connector must still work with the new gateways (Stripe
 * Billing, Braintree and Recharge read their platform with a gateway's credentials). Used by `recoup
 * accounts set-gateways`; workers and the API see the change within the account cache's time.
 */
export async function replaceGateways(
  stores: Stores,
  accountId: string,
  gateways: GatewayConfig[],
): Promise<GatewaysOutcome> {
  const account = await stores.accounts.find(accountId);
  if (!account) return { kind: 'not_found' };
  const kept = new Set(gateways.map((g) => g.name));
  const removed = account.gateways.map((g) => g.name).filter((name) => !kept.has(name));
  if (removed.length > 0) {
    const underWay = (await stores.recoveries.underWay(accountId)).length;
    if (underWay > 0)
      return {
        kind: 'refused',
        reason: `${underWay} recoveries under way may still charge through ${removed.join(', ')}: keep it (as a backup gateway) until they have ended, or stop them first`,
      };
  }
  for (const platform of account.connectors) {
    const connector = await stores.accounts.withConnector(accountId, platform);
    const parsed = connector && parseConnectorConfig(platform, connector.config, gateways);
    if (parsed && 'problem' in parsed)
      return { kind: 'refused', reason: `the ${platform} connector would no longer work: ${parsed.problem}` };
  }
  const replaced = await stores.accounts.setGateways(accountId, gateways);
  return replaced ? { kind: 'replaced', account: replaced } : { kind: 'not_found' };
}
