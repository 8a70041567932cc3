import type { ConnectorPlatform } from '../../domain/connectors.js';
import type { GatewayConfig } from '../../domain/settings.js';
import { braintreeConnector } from './braintree.js';
import { chargebee } from './chargebee.js';
import { recurly } from './recurly.js';
import { shopifyRecharge } from './shopify-recharge.js';
import { stripeBilling } from './stripe-billing.js';
import type { PlatformConnector } from './types.js';
import { zuora } from './zuora.js';

type AnyConnector = PlatformConnector<Record<string, unknown>>;

const connectors: Partial<Record<ConnectorPlatform, AnyConnector>> = {
  'stripe-billing': stripeBilling,
  recurly,
  chargebee,
  zuora,
  'shopify-recharge': shopifyRecharge,
  braintree: braintreeConnector,
};

/** Platforms this version has a connector for; accounts may only configure these. */
export const supportedPlatforms = Object.keys(connectors) as ConnectorPlatform[];

/** The connector of `platform`, or null when this version has none. */
export function connectorFor(platform: ConnectorPlatform): AnyConnector | null {
  return connectors[platform] ?? null;
}

/**
 * The configuration as the platform's connector takes it, or what is wrong with it in words for an
 * operator (the account's gateways matter: a connector may read the platform through them).
 */
export function parseConnectorConfig(
  platform: ConnectorPlatform,
  input: unknown,
  gateways: GatewayConfig[],
): { config: Record<string, unknown> } | { problem: string } {
  const connector = connectorFor(platform);
  if (!connector) return { problem: `no connector for ${platform} in this version` };
  const parsed = connector.config.safeParse(input);
  if (!parsed.success)
    return {
      problem: parsed.error.issues.map((i) => `${i.path.join('.') || 'config'}: ${i.message}`).join('; '),
    };
  const problem = connector.configProblem?.(parsed.data, gateways) ?? null;
  return problem ? { problem } : { config: parsed.data };
}
