import { gatewaysCharging } from '../../activities/gateways/routing.js';
import { createLinkOutcomes, sameCardUpdate, type LinkOutcomeDeps } from '../../services/link-outcomes.js';
import { createLinkService, type LinkServiceDeps } from '../../services/links.js';
import { accountOf } from '../context.js';
import { badRequest, forbidden, HttpError, notFound } from '../http-error.js';
import { reply, route } from '../route.js';
import { ErrorBody } from '../schemas/errors.js';
import {
  CancelFlowDisabledBody,
  CancelFlowLinkRequest,
  CardUpdateCompleteBody,
  CardUpdateCompleteRequest,
  CardUpdateLinkRequest,
  HostedLinkBody,
  LinkGoneBody,
} from '../schemas/links.js';

/** What minting, opening and finishing links needs: the link routes' and the hosted pages' dependencies. */
export type LinkDeps = LinkServiceDeps & LinkOutcomeDeps;

/**
 * POST /api/recovery/update-card/generate, POST /api/recovery/update-card/complete (the merchant's own card
 * form finished a link) and POST /api/cancel-flow/generate.
 */
export function linkRoutes(deps: LinkDeps) {
  const links = createLinkService(deps);
  const outcomes = createLinkOutcomes(deps);
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
        const account = accountOf(ctx);
        // The retry the link promises for that recovery would otherwise be dropped without a word.
        if (body.transactionId && !(await deps.stores.recoveries.find(account.id, body.transactionId)))
          throw badRequest({ transactionId: ['must be the transactionId of a recovery of this account'] });
        const link = await links.mintCardUpdateLink(account, {
          paymentMethodToken: body.paymentMethodToken,
          customerEmail: body.customerEmail ?? null,
          returnUrl: body.returnUrl ?? null,
          transactionId: body.transactionId ?? null,
          locale: body.locale ?? null,
        });
        return reply(200, link);
      },
    }),
    route({
      method: 'post',
      path: '/api/recovery/update-card/complete',
      tag: 'Hosted links',
      summary: "Completes a card-update link with the card the merchant's own form saved",
      description:
        "For a primary gateway whose card form the hosted page cannot show (Braintree, Adyen), the page sends the customer to the account's cardFormUrl with recoup_link=<token>. Once the merchant's form has saved the card at its gateway, this uses the link exactly as the page would: card.updated is sent and queued recoveries on the old token retry at once with the new one.",
      auth: 'secret',
      body: CardUpdateCompleteRequest,
      responses: {
        200: { description: 'The link is used and the new card is in place', schema: CardUpdateCompleteBody },
        404: { description: 'No card-update link of this account has this token', schema: ErrorBody },
        410: {
          description:
            'The link was used already (by another new payment method: a retry with the same one gets the 200 again), or has expired',
          schema: LinkGoneBody,
        },
      },
      async handle(ctx, { body }) {
        const account = accountOf(ctx);
        const opened = await links.open(body.token, 'card_update');
        if (!opened || opened.link.accountId !== account.id || opened.link.kind !== 'card_update')
          throw notFound('Card-update link not found');
        const { link } = opened;
        const gone = (state: 'used' | 'expired') =>
          new HttpError(410, {
            error: `Link ${state}`,
            message: `This card-update link was ${state === 'used' ? 'used already' : 'not used in time'}.`,
          });
        const method = { token: body.newPaymentMethodToken, paymentMethodType: body.paymentMethodType };
        const answer = (o: { eligibleGateways: string[] }) =>
          reply(200, {
            cardUpdated: true as const,
            oldPaymentMethodToken: link.data.paymentMethodToken,
            newPaymentMethodToken: body.newPaymentMethodToken,
            eligibleGateways: o.eligibleGateways,
          });
        if (opened.state !== 'usable') {
          await outcomes.finishInterrupted(link, opened.consumption);
          // A retry of the completion that used the link (its answer lost) gets that answer again; what the
          // first call left undone, the follow-up workflow (or finishInterrupted, after its minute) does.
          const earlier = sameCardUpdate(opened.consumption, method);
          if (earlier) return answer(earlier);
          throw gone(opened.state);
        }
        const eligibleGateways = await gatewaysCharging(deps.stores, account.id, method, deps);
        if (eligibleGateways.length === 0)
          throw badRequest({
            newPaymentMethodToken: [
              method.paymentMethodType === 'card'
                ? "must be a token one of the account's gateways can charge"
                : `must be a ${method.paymentMethodType} token one of the account's gateways charges for recurring payments`,
            ],
          });
        const used = await outcomes.updateCard(link, { ...method, eligibleGateways });
        if (used) return answer({ eligibleGateways });
        // Another call won the race: the same card sent twice at once is one completion, answered twice.
        const earlier = sameCardUpdate((await deps.stores.links.find(link._id))?.consumption ?? null, method);
        if (earlier) return answer(earlier);
        throw gone('used');
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
          locale: body.locale ?? null,
        });
        return reply(200, link);
      },
    }),
  ];
}
