import type { Stores } from '../../store/index.js';
import { createAdapter } from './registry.js';
import type { GatewayAdapter } from './types.js';

/** Adapters of all of an account's gateways, by name, from one read of its sealed credentials. */
export async function gatewaysOf(stores: Stores, accountId: string): Promise<Map<string, GatewayAdapter>> {
  const gateways = await stores.accounts.gatewaysWithCredentials(accountId);
  if (!gateways) throw new Error(`Account ${accountId} not found`);
  return new Map(
    gateways.map((g) => [
      g.name,
      createAdapter(g.kind, { name: g.name, credentials: g.credentials, sandbox: stores.sandbox }),
    ]),
  );
}

/** The adapter of one of an account's gateways. */
export async function gatewayFor(
  stores: Stores,
  accountId: string,
  gatewayName: string,
): Promise<GatewayAdapter> {
  const adapter = (await gatewaysOf(stores, accountId)).get(gatewayName);
  if (!adapter) throw new Error(`Gateway ${gatewayName} of account ${accountId} not found`);
  return adapter;
}
