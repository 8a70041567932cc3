import { parseConnectorConfig } from '../activities/connectors/registry.js';
import type { GatewayConfig } from '../domain/settings.js';
import type { Account } from '../store/accounts.js';
import type { Stores } from '../store/index.js';

export type GatewaysOutcome =
  { kind: 'not_found' } | { kind: 'refused'; reason: string } | { kind: 'replaced'; account: Account };

/** Credentials that only authenticate the gateway's webhooks to Recoup, never Recoup's calls to it. */
const webhookOnly = new Set(['hmacKey', 'notificationUsername', 'notificationPassword']);

/** A gateway's credentials as text, but for the keys in `leaving`: equal texts, the same credentials. */
const credentialsText = (g: GatewayConfig, leaving = new Set<string>()) =>
  JSON.stringify(
    Object.entries(g.credentials)
      .filter(([key]) => !leaving.has(key))
      .sort(),
  );

/** Two gateways with the very same kind and credentials: the same gateway account. */
const sameGateway = (a: GatewayConfig, b: GatewayConfig) =>
  a.kind === b.kind && credentialsText(a) === credentialsText(b);

/**
 * The new gateways, named so that each gateway that stays keeps its name, wherever it now stands: a
 * recovery's planned attempts and its lookups name their gateway. One given with a current gateway's very
 * credentials is that gateway; the others take the names left of their kind in order (a rotated key), then
 * new ones (`stripe-3`).
 */
function keepNames(current: GatewayConfig[], next: GatewayConfig[]): GatewayConfig[] {
  const names: Array<string | null> = next.map(() => null);
  const taken = new Set<string>();
  const claim = (i: number, name: string) => {
    names[i] = name;
    taken.add(name);
  };
  next.forEach((g, i) => {
    const same = current.find((c) => !taken.has(c.name) && sameGateway(c, g));
    if (same) claim(i, same.name);
  });
  next.forEach((g, i) => {
    const left = current.find((c) => !taken.has(c.name) && c.kind === g.kind);
    if (names[i] === null && left) claim(i, left.name);
  });
  next.forEach((g, i) => {
    for (let n = 1; names[i] === null; n += 1) {
      const name = n === 1 ? g.kind : `${g.kind}-${n}`;
      if (!taken.has(name) && !current.some((c) => c.name === name)) claim(i, name);
    }
  });
  return next.map((g, i) => ({ ...g, name: names[i]! }));
}

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
  given: GatewayConfig[],
): Promise<GatewaysOutcome> {
  const loaded = await stores.accounts.withGateways(accountId);
  if (!loaded) return { kind: 'not_found' };
  const { account } = loaded;
  const gateways = keepNames(loaded.gateways, given);
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
  // A kept name given other credentials (a rotated key, or another gateway account): a lookup of an
  // ambiguous charge asks whoever holds the name now, and an account that never saw the charge answers that
  // it was never made. So not while one is being looked up (credentials of the gateway's webhook aside).
  const changed = gateways.filter((g) => {
    const before = loaded.gateways.find((c) => c.name === g.name);
    return before && credentialsText(before, webhookOnly) !== credentialsText(g, webhookOnly);
  });
  if (changed.length > 0) {
    const reconciling = (await stores.recoveries.underWay(accountId)).filter(
      (r) => r.state === 'reconciling',
    );
    if (reconciling.length > 0)
      return {
        kind: 'refused',
        reason: `${reconciling.length} recoveries are confirming a charge at the gateways (reconciling), and ${changed.map((g) => g.name).join(', ')} would answer with other credentials: wait until they are resolved`,
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
