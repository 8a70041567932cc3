import { connectorFor, supportedPlatforms } from '../../activities/connectors/registry.js';
import { ConnectorPlatform } from '../../domain/connectors.js';
import { createConnectorIntake, type ConnectorIntakeDeps } from '../connector-intake.js';
import { HttpError, notFound } from '../http-error.js';
import { rawBodyOf } from '../middleware/json-body.js';
import { reply, route } from '../route.js';
import { ConnectorParams, ConnectorReceipt } from '../schemas/connectors.js';
import { ErrorBody } from '../schemas/errors.js';
import { EngineUnavailableBody } from '../schemas/recovery.js';

/** Node gives header names in lower case; a repeated header becomes one comma-joined value. */
const headersOf = (raw: Record<string, string | string[] | undefined>) =>
  Object.fromEntries(
    Object.entries(raw).map(([name, value]) => [name, Array.isArray(value) ? value.join(',') : value]),
  );

/** The no-code path: a billing platform's own failed-payment webhooks, one intake URL per account and platform. */
export function connectorRoutes(deps: ConnectorIntakeDeps) {
  const { stores, clock } = deps;
  const intake = createConnectorIntake(deps);
  return [
    route({
      method: 'post',
      path: '/api/connectors/:platform/webhook/:clientId',
      tag: 'Connectors',
      summary: "A billing platform's webhook (paste this URL into the platform's webhook settings)",
      description: `Platforms: ${supportedPlatforms.join(', ')}. Authenticated with the platform's own scheme (Stripe-Signature, …), not an API key. Platform retries of one event are recognised by its event id.`,
      auth: 'none',
      params: ConnectorParams,
      responses: {
        200: { description: 'Received: what Recoup did with the event', schema: ConnectorReceipt },
        401: { description: 'The platform signature or credentials do not match the configured secret' },
        404: { description: 'Unknown platform or client, or the platform is not configured for the client' },
        409: { description: 'The same card and amount arrived within 5 minutes for another invoice' },
        413: { description: 'Request body too large (1 MiB)', schema: ErrorBody },
        503: {
          description:
            "Not handled yet, so the platform's retry handles it again: the invoice's recovery was stored under a minute ago and has not started (a retry after Retry-After starts it if its intake died), or the recovery engine (Temporal) is unreachable",
          schema: EngineUnavailableBody,
        },
      },
      async handle(ctx, { params }) {
        const platform = ConnectorPlatform.safeParse(params.platform);
        const connector = platform.success ? connectorFor(platform.data) : null;
        if (!platform.success || !connector)
          throw notFound(`Unknown platform "${params.platform.slice(0, 64)}"`);
        const loaded = await stores.accounts.withConnector(params.clientId, platform.data);
        if (!loaded) throw notFound('Unknown client, or this platform is not configured for it');
        const now = clock();
        const event = await connector.verify(
          {
            headers: headersOf(ctx.headers),
            rawBody: rawBodyOf(ctx),
            url: `${deps.publicBaseUrl}${ctx.originalUrl}`,
          },
          loaded.config,
          now,
          { gateways: loaded.gateways },
        );
        // The realm lets platforms that send basic auth only when challenged (Zuora's default) answer it.
        if (!event)
          throw new HttpError(
            401,
            { error: 'Invalid webhook signature or credentials' },
            { 'WWW-Authenticate': 'Basic realm="Recoup connector", charset="UTF-8"' },
          );
        const { account, gateways, config } = loaded;
        const earlier = await stores.connectorEvents.receive(
          account.id,
          platform.data,
          event.id,
          event.type,
          now,
        );
        if (earlier) return reply(200, { received: true, duplicate: true, action: earlier.outcome });
        const action = await connector.interpret(event, config, { gateways });
        const receipt = await intake.apply(account, platform.data, event.id, action, ctx.state.requestId);
        const handled = {
          outcome: receipt.action,
          ...(receipt.action === 'ignored' ? { reason: receipt.reason } : {}),
        };
        await stores.connectorEvents.done(account.id, platform.data, event.id, handled, clock());
        ctx.state.log.info(
          { platform: platform.data, eventId: event.id, type: event.type, ...receipt },
          'connector event',
        );
        return reply(200, { received: true, ...receipt });
      },
    }),
  ];
}
