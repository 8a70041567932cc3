import { createLinkService } from '../../services/links.js';
import type { Stores } from '../../store/index.js';
import { accountOf } from '../context.js';
import { forbidden } from '../http-error.js';
import { reply, route } from '../route.js';
import {
  CancelFlowDisabledBody,
  CancelFlowLinkRequest,
  CardUpdateLinkRequest,
  HostedLinkBody,
} from '../schemas/links.js';

/** POST /api/recovery/update-card/generate and POST /api/cancel-flow/generate. */
export function linkRoutes(deps: { stores: Stores; publicBaseUrl: string; clock: () => Date }) {
  const links = createLinkService(deps);
  return [
    route({
      method: 'post',
      path: '/api/recovery/update-card/generate',
      tag: 'Hosted links',
      summary: 'A single-use card-update link, valid 72 hours',
      description:
        'When the customer saves a card, card.updated is sent and queued recoveries on the old token retry at once with the new one.',
      auth: 'secret',
      body: CardUpdateLinkRequest,
      responses: { 200: { description: 'Hosted link', schema: HostedLinkBody } },
      async handle(ctx, { body }) {
        const link = await links.mintCardUpdateLink(accountOf(ctx), {
          paymentMethodToken: body.paymentMethodToken,
          customerEmail: body.customerEmail ?? null,
          returnUrl: body.returnUrl ?? null,
          transactionId: body.transactionId ?? null,
        });
        return reply(200, link);
      },
    }),
    route({
      method: 'post',
      path: '/api/cancel-flow/generate',
      tag: 'Hosted links',
      summary: 'A single-use cancel-flow link, valid 48 hours',
      description: "The customer's choice produces churn.flow.{retained|paused|downgraded|cancelled}.",
      auth: 'secret',
      body: CancelFlowLinkRequest,
      responses: {
        200: { description: 'Hosted link', schema: HostedLinkBody },
        403: { description: 'The cancel flow is not enabled on the account', schema: CancelFlowDisabledBody },
      },
      async handle(ctx, { body }) {
        const account = accountOf(ctx);
        if (!account.settings.cancelFlow.enabled)
          throw forbidden({
            error: 'Cancel flow not enabled',
            message:
              'The cancel flow is not enabled on this account; the operator can enable it in its settings.',
          });
        const link = await links.mintCancelFlowLink(account, {
          customerId: body.customerId,
          customerEmail: body.customerEmail ?? null,
          subscriptionId: body.subscriptionId ?? null,
          amount: body.amount ?? null,
          currency: body.currency,
          returnUrl: body.returnUrl ?? null,
        });
        return reply(200, link);
      },
    }),
  ];
}
