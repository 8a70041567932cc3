import type { GatewayConfig } from '../../domain/settings.js';
import type { Stores } from '../../store/index.js';
import { createAdapter } from './registry.js';
import type { IssuerWorld } from './test-gateway.js';
import type { GatewayAdapter } from './types.js';

/** Adapters of an account's gateways (as loaded with their credentials), by name; `world`: see AdapterContext. */
export function adaptersFor(
  stores: Stores,
  accountId: string,
  gateways: GatewayConfig[],
  world?: IssuerWorld,
): Map<string, GatewayAdapter> {
  return new Map(
    gateways.map((g) => [
      g.name,
      createAdapter(g.kind, {
        accountId,
        name: g.name,
        credentials: g.credentials,
        sandbox: stores.sandbox,
        ...(world ? { world } : {}),
      }),
    ]),
  );
}

/** The adapter of one of an account's gateways, from one read of the account. */
export async function gatewayFor(
  stores: Stores,
  accountId: string,
  gatewayName: string,
  world?: IssuerWorld,
): Promise<GatewayAdapter> {
  const loaded = await stores.accounts.withGateways(accountId);
  const adapter = loaded && adaptersFor(stores, accountId, loaded.gateways, world).get(gatewayName);
  if (!adapter) throw new Error(`Gateway ${gatewayName} of account ${accountId} not found`);
  return adapter;
}
