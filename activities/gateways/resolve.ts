import type { GatewayKind } from '../../domain/gateway-kinds.js';
import type { GatewayConfig } from '../../domain/settings.js';
import type { Account } from '../../store/accounts.js';
import type { Stores } from '../../store/index.js';
import { createAdapter } from './registry.js';
import type { IssuerWorld } from './test-gateway.js';
import type { GatewayAdapter } from './types.js';

/** What every adapter of this process shares: Recoup's public URL, its clock and, for benchmarks, the world (AdapterContext). */
export interface AdapterEnv {
  publicBaseUrl: string;
  clock: () => Date;
  world?: IssuerWorld;
}

/** Adapters of an account's gateways (as loaded with their credentials), by name. */
export function adaptersFor(
  stores: Stores,
  accountId: string,
  gateways: GatewayConfig[],
  env: AdapterEnv,
): Map<string, GatewayAdapter> {
  return new Map(
    gateways.map((g) => [
      g.name,
      createAdapter(g.kind, {
        accountId,
        name: g.name,
        credentials: g.credentials,
        sandbox: stores.sandbox,
        adyenAuthorisations: stores.adyenAuthorisations,
        publicBaseUrl: env.publicBaseUrl,
        clock: env.clock,
        ...(env.world ? { world: env.world } : {}),
      }),
    ]),
  );
}

/** The account no longer has a gateway of that name (the operator replaced its gateways since). */
export class GatewayGoneError extends Error {
  override name = 'GatewayGoneError';
}

/** The adapter of one of an account's gateways, the gateway's kind and the account, from one read of it. */
export async function gatewayOf(
  stores: Stores,
  accountId: string,
  gatewayName: string,
  env: AdapterEnv,
): Promise<{ adapter: GatewayAdapter; kind: GatewayKind; test: boolean; account: Account }> {
  const loaded = await stores.accounts.withGateways(accountId);
  const gateway = loaded?.gateways.find((g) => g.name === gatewayName);
  const adapter = gateway && adaptersFor(stores, accountId, [gateway], env).get(gatewayName);
  if (loaded && !gateway)
    throw new GatewayGoneError(`Account ${accountId} has no gateway ${gatewayName} any more`);
  if (!loaded || !gateway || !adapter)
    throw new Error(`Gateway ${gatewayName} of account ${accountId} not found`);
  return { adapter, kind: gateway.kind, test: gateway.test, account: loaded.account };
}

/** The adapter of one of an account's gateways, from one read of the account. */
export async function gatewayFor(
  stores: Stores,
  accountId: string,
  gatewayName: string,
  env: AdapterEnv,
): Promise<GatewayAdapter> {
  return (await gatewayOf(stores, accountId, gatewayName, env)).adapter;
}
