import type { Stores } from '../../store/index.js';
import { createAdapter } from './registry.js';
import type { GatewayAdapter } from './types.js';

/** Builds the adapter of one of an account's gateways, loading its sealed credentials. */
export async function gatewayFor(
  stores: Stores,
  accountId: string,
  gatewayName: string,
): Promise<GatewayAdapter> {
  const account = await stores.accounts.find(accountId);
  const gateway = account?.gateways.find((g) => g.name === gatewayName);
  const credentials = await stores.accounts.gatewayCredentials(accountId, gatewayName);
  if (!account || !gateway || !credentials)
    throw new Error(`Gateway ${gatewayName} of account ${accountId} not found`);
  return createAdapter(gateway.kind, { name: gateway.name, credentials, sandbox: stores.sandbox });
}
