import { tokenFitsKind, type GatewayKind, type PaymentMethodType } from '../../domain/gateway-kinds.js';
import type { PlanOption } from '../../domain/plan.js';
import type { GatewayConfig } from '../../domain/settings.js';
import type { Account } from '../../store/accounts.js';
import type { Stores } from '../../store/index.js';
import { adaptersFor, type AdapterEnv } from './resolve.js';
import type { GatewayCapabilities } from './types.js';

/** A gateway as routing sees it: its name, its kind (token shapes) and what it can charge. */
export interface RouteGateway extends GatewayCapabilities {
  name: string;
  kind: GatewayKind;
  /** The card-issuing countries it acquires locally. */
  countries?: string[];
}

/**
 * Whether `g` can charge `token` in `currency` (null: in some currency): a token of its kind's shapes that
 * its credentials can charge (a PayPal reference transaction needs NVP credentials), in a currency it takes
 * (a Braintree account without a merchant account in it does not).
 */
function charges(g: RouteGateway, token: string, currency: string | null): boolean {
  return (
    (currency === null || g.currencies === null || g.currencies.includes(currency)) &&
    tokenFitsKind(g.kind, token) &&
    (g.takesToken?.(token) ?? true)
  );
}

/** Whether `g` can charge `token` as a payment method of `type`: a card anywhere, a wallet where it is supported. */
function chargesAs(
  g: RouteGateway,
  token: string,
  type: PaymentMethodType,
  currency: string | null,
): boolean {
  return (type === 'card' || g.wallets.includes(type)) && charges(g, token, currency);
}

/**
 * Cascade order (spec): the primary token on each gateway that can charge it, then each fallback token. A
 * gateway that cannot charge the currency, the token or its wallet is skipped. Geographic routing: with the
 * card's issuing country (`cardOrigin`), the gateways that acquire cards of that country locally (their
 * `countries`) come first, the others after, each in the account's order; the account's first gateway is
 * still the `primary` and the others `backup_gateway`. (The planner tries one gateway per card unless its
 * learned outcomes favour another: ties keep this order.)
 */
export function routeOptions(
  gateways: RouteGateway[],
  primary: string,
  paymentMethodType: PaymentMethodType,
  fallbacks: string[],
  currency: string,
  cardOrigin?: string,
): PlanOption[] {
  const local = (g: RouteGateway) => cardOrigin !== undefined && (g.countries?.includes(cardOrigin) ?? false);
  const ordered = [...gateways.filter(local), ...gateways.filter((g) => !local(g))];
  const options: PlanOption[] = [];
  for (const g of ordered)
    if (chargesAs(g, primary, paymentMethodType, currency))
      options.push({
        gateway: g.name,
        token: primary,
        role: g === gateways[0] ? 'primary' : 'backup_gateway',
      });
  for (const token of fallbacks) {
    for (const g of ordered)
      if (charges(g, token, currency)) options.push({ gateway: g.name, token, role: 'fallback_token' });
  }
  return options;
}

/** The account's gateway adapters, and its gateways as routing sees them, in the account's order. */
export function routing(
  stores: Stores,
  loaded: { account: Account; gateways: GatewayConfig[] },
  env: AdapterEnv,
) {
  const byName = adaptersFor(stores, loaded.account.id, loaded.gateways, env);
  const adapters = loaded.account.gateways.map((g) => byName.get(g.name)!);
  const gateways: RouteGateway[] = loaded.account.gateways.map((g, i) => ({
    ...g,
    ...adapters[i]!.capabilities,
  }));
  return { adapters, gateways };
}

/**
 * The names of an account's gateways that can charge a customer's new payment method (its token's shape, the
 * gateway's credentials and wallets), in the account's order: where a retry with it may go, whatever the
 * currency of the payment it replaces a card for.
 */
export async function gatewaysCharging(
  stores: Stores,
  accountId: string,
  method: { token: string; paymentMethodType: PaymentMethodType },
  env: AdapterEnv,
): Promise<string[]> {
  const loaded = await stores.accounts.withGateways(accountId);
  if (!loaded) return [];
  return routing(stores, loaded, env)
    .gateways.filter((g) => chargesAs(g, method.token, method.paymentMethodType, null))
    .map((g) => g.name);
}
