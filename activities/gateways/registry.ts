import type { GatewayKind } from '../../domain/gateway-kinds.js';
import type { TestGatewayStore } from '../../store/test-gateway.js';
import { createTestGateway, testGatewaySettings, type IssuerWorld } from './test-gateway.js';
import type { GatewayAdapter } from './types.js';

/** What an adapter factory gets: the gateway's name, its decrypted credentials and the sandbox store. */
export interface AdapterContext {
  name: string;
  credentials: Record<string, string>;
  sandbox: TestGatewayStore;
  /**
   * The recovery benchmark's world (bench/recovery/workflows): test gateways answer from it instead of their
   * token conventions. Only a composition root sets it (through ActivityDeps), never a request or credentials.
   */
  world?: IssuerWorld;
}

const factories: Partial<Record<GatewayKind, (ctx: AdapterContext) => GatewayAdapter>> = {
  test: (ctx) => createTestGateway(ctx.name, testGatewaySettings(ctx.credentials), ctx.sandbox, ctx.world),
};

/** Gateway kinds that have an adapter; accounts may only be configured with these. */
export const supportedGatewayKinds = Object.keys(factories) as GatewayKind[];

/** Builds the adapter for one configured gateway. */
export function createAdapter(kind: GatewayKind, ctx: AdapterContext): GatewayAdapter {
  const factory = factories[kind];
  if (!factory) throw new Error(`No adapter for gateway kind "${kind}"`);
  return factory(ctx);
}
