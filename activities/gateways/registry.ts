import type { z } from 'zod';
import type { GatewayKind } from '../../domain/gateway-kinds.js';
import type { AdyenAuthorisationStore } from '../../store/adyen-authorisations.js';
import type { TestGatewayStore } from '../../store/test-gateway.js';
import { AdyenCredentials, createAdyenGateway } from './adyen.js';
import { BraintreeCredentials, createBraintreeGateway } from './braintree.js';
import { createGoCardlessGateway, GoCardlessCredentials } from './gocardless.js';
import { createPayPalGateway, PayPalCredentials } from './paypal.js';
import { createStripeGateway, StripeCredentials } from './stripe.js';
import {
  createTestGateway,
  TestGatewayCredentials,
  testGatewaySettings,
  type IssuerWorld,
} from './test-gateway.js';
import type { GatewayAdapter } from './types.js';

/**
 * What an adapter factory gets: the gateway's account and name, its decrypted credentials, the sandbox store
 * and what gateways' webhooks brought.
 */
export interface AdapterContext {
  accountId: string;
  name: string;
  credentials: Record<string, string>;
  sandbox: TestGatewayStore;
  /** The AUTHORISATION results Adyen's webhook brought (api/routes/gateway-webhooks.ts). */
  adyenAuthorisations: AdyenAuthorisationStore;
  /** Recoup's public URL (a gateway that wants a return URL for a shopper gets one here). */
  publicBaseUrl: string;
  /** The service's clock (an activity's: the workflow's time on the time-skipping server). */
  clock: () => Date;
  /**
   * The recovery benchmark's world (bench/recovery/workflows): test gateways answer from it instead of their
   * token conventions. Only a composition root sets it (through ActivityDeps), never a request or credentials.
   */
  world?: IssuerWorld;
}

interface AdapterKind {
  /** The credentials this kind takes; an operator's are checked against it when the gateway is configured. */
  credentials?: z.ZodType<Record<string, string | undefined>>;
  create(ctx: AdapterContext): GatewayAdapter;
}

/** Every gateway kind the spec names, with its adapter: typed so that none can be left without one. */
const kinds: Record<GatewayKind, AdapterKind> = {
  test: {
    credentials: TestGatewayCredentials,
    create: (ctx) => createTestGateway(ctx, testGatewaySettings(ctx.credentials), ctx.sandbox, ctx.world),
  },
  stripe: {
    credentials: StripeCredentials,
    create: (ctx) => createStripeGateway(StripeCredentials.parse(ctx.credentials), ctx.clock),
  },
  braintree: {
    credentials: BraintreeCredentials,
    create: (ctx) => createBraintreeGateway(BraintreeCredentials.parse(ctx.credentials), ctx.clock),
  },
  adyen: {
    credentials: AdyenCredentials,
    create: (ctx) =>
      createAdyenGateway(
        AdyenCredentials.parse(ctx.credentials),
        ctx.publicBaseUrl,
        (pspReference) => ctx.adyenAuthorisations.find(ctx.accountId, pspReference),
        ctx.clock,
      ),
  },
  gocardless: {
    credentials: GoCardlessCredentials,
    create: (ctx) => createGoCardlessGateway(GoCardlessCredentials.parse(ctx.credentials), ctx.clock),
  },
  paypal: {
    credentials: PayPalCredentials,
    create: (ctx) => createPayPalGateway(PayPalCredentials.parse(ctx.credentials)),
  },
};

/** What is wrong with `credentials` for a gateway of `kind`, in words for an operator; null when nothing. */
export function credentialsProblem(kind: GatewayKind, credentials: Record<string, string>): string | null {
  const parsed = kinds[kind].credentials?.safeParse(credentials);
  if (!parsed || parsed.success) return null;
  return parsed.error.issues.map((i) => `${i.path.join('.') || 'credentials'}: ${i.message}`).join('; ');
}

/** Builds the adapter for one configured gateway. */
export function createAdapter(kind: GatewayKind, ctx: AdapterContext): GatewayAdapter {
  return kinds[kind].create(ctx);
}
