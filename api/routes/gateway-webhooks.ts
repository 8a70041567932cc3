import {
  AdyenNotification,
  adyenWebhookKeys,
  authorisationsOf,
  signerOf,
} from '../../activities/gateways/adyen-notifications.js';
import type { Stores } from '../../store/index.js';
import { HttpError, notFound } from '../http-error.js';
import { reply, route } from '../route.js';
import { ErrorBody } from '../schemas/errors.js';
import { GatewayWebhookParams } from '../schemas/gateways.js';

/** What Adyen reads as "received": anything else, or no answer within 10 s, and it sends the webhook again. */
const accepted = '[accepted]';

/**
 * Gateways' own webhooks, one URL per account: Adyen's standard webhook, whose AUTHORISATION items settle
 * payments Adyen answered `Received` or `Pending` (read by the Adyen gateway's lookup). The route only
 * verifies, stores and answers.
 */
export function gatewayWebhookRoutes(deps: { stores: Stores; clock: () => Date }) {
  const { stores, clock } = deps;
  return [
    route({
      method: 'post',
      path: '/api/gateways/adyen/webhook/:clientId',
      tag: 'Gateways',
      summary: "Adyen's standard webhook (paste this URL into the webhook settings of Adyen's Customer Area)",
      description:
        "Authenticated by every item's HMAC signature (and the basic-auth pair, where one is configured) against the hmacKey of each of the account's Adyen gateways, not by an API key. The AUTHORISATION items of Recoup's own payments are kept, once per PSP reference, for the Adyen gateway's lookup; other items are acknowledged and ignored. Answers Adyen's acknowledgement, the text `[accepted]`.",
      auth: 'none',
      params: GatewayWebhookParams,
      body: AdyenNotification,
      responses: {
        200: { description: 'Received and stored: the text `[accepted]` (text/plain), as Adyen expects' },
        401: {
          description:
            "An item's HMAC signature (or the request's basic-auth pair) matches none of the account's Adyen gateways: nothing is stored",
          schema: ErrorBody,
        },
        404: {
          description: 'Unknown client, or none of its Adyen gateways has an hmacKey',
          schema: ErrorBody,
        },
      },
      async handle(ctx, { params, body }) {
        const loaded = await stores.accounts.withGateways(params.clientId);
        if (!loaded) throw notFound('Unknown client');
        const keys = adyenWebhookKeys(loaded.gateways);
        if (keys.length === 0) throw notFound('No Adyen gateway of this client has an hmacKey');
        const authorization = ctx.get('Authorization') || undefined;
        const signers = body.notificationItems.map((i) =>
          signerOf(i.NotificationRequestItem, keys, authorization),
        );
        if (signers.includes(null))
          throw new HttpError(
            401,
            { error: 'Invalid Adyen HMAC signature or credentials' },
            keys.some((k) => k.basicAuth)
              ? { 'WWW-Authenticate': 'Basic realm="Recoup Adyen webhook", charset="UTF-8"' }
              : {},
          );
        const kept = authorisationsOf(body, loaded.account.id);
        const now = clock();
        for (const authorisation of kept)
          await stores.adyenAuthorisations.record(loaded.account.id, authorisation, now);
        ctx.state.log.info(
          {
            gateways: [...new Set(signers)],
            items: signers.length,
            authorisations: kept.map((a) => a.pspReference),
          },
          'adyen webhook',
        );
        return reply(200, accepted);
      },
    }),
  ];
}
