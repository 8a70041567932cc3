import type braintree from 'braintree';
import { z } from 'zod';
import type { ConnectorAction } from '../../domain/connectors.js';
import { minorUnitsOf } from '../../domain/money.js';
import { isAttemptKey } from '../../domain/recovery.js';
import type { GatewayConfig } from '../../domain/settings.js';
import {
  BraintreeCredentials,
  braintreeClient,
  chargedStatuses,
  declineCodeOf,
} from '../gateways/braintree.js';
import { ignored, type ConnectorContext, type PlatformConnector, type VerifiedEvent } from './types.js';
import { notAnEvent, notAnEventIn } from './webhook-body.js';

/**
 * The Braintree connector's configuration: which of the account's Braintree gateways the subscriptions
 * live on (by name; the first Braintree gateway when absent). Its API keys verify Braintree's webhooks
 * (bt_signature is keyed with them), read the subscriptions and charge them.
 */
export const BraintreeConnectorConfig = z.object({ gateway: z.string().trim().min(1).optional() }).strict();
export type BraintreeConnectorConfig = z.infer<typeof BraintreeConnectorConfig>;

function credentialsOf(config: BraintreeConnectorConfig, gateways: GatewayConfig[]) {
  const gateway = gateways.find(
    (g) => g.kind === 'braintree' && (config.gateway === undefined || g.name === config.gateway),
  );
  const parsed = gateway && BraintreeCredentials.safeParse(gateway.credentials);
  return parsed?.success ? parsed.data : null;
}

function clientOf(config: BraintreeConnectorConfig, ctx: ConnectorContext): braintree.BraintreeGateway {
  const credentials = credentialsOf(config, ctx.gateways);
  if (!credentials)
    throw new Error('The Braintree connector has no Braintree gateway (checked when it was set)');
  return braintreeClient(credentials);
}

/** The fields of a parsed notification read here (the SDK's types are a union of every kind). */
const Notification = z.object({
  kind: z.string().min(1),
  timestamp: z.coerce.date(),
  subscription: z.object({ id: z.string().min(1) }).nullish(),
});

/** What `verify` keeps of a notification for `interpret`. */
const NotificationSubject = z.object({ subscriptionId: z.string().nullable() });

/** A transaction of a subscription that went through. */
const charged = (t: braintree.Transaction) => chargedStatuses.has(t.status);

/**
 * The failure that made the subscription past due: the oldest of the failed charges since its last
 * successful one. Braintree lists a subscription's transactions newest first; its own retries and Recoup's
 * failed attempts come after that first failure, so every event of one past-due spell finds the same one.
 */
function firstFailureOf(transactions: braintree.Transaction[]): braintree.Transaction | null {
  const end = transactions.findIndex(charged);
  return (end === -1 ? transactions : transactions.slice(0, end)).at(-1) ?? null;
}

/** One past-due spell of a subscription: what keys its recovery (one recovery per spell). */
const spellId = (subscriptionId: string, firstFailure: braintree.Transaction) =>
  `${subscriptionId}:${firstFailure.id}`;

/** The subscription as Braintree holds it now, or null when Braintree no longer knows it. */
async function subscriptionOf(
  client: braintree.BraintreeGateway,
  id: string,
): Promise<braintree.Subscription | null> {
  try {
    return await client.subscription.find(id);
  } catch (error) {
    if ((error as { type?: unknown }).type === 'notFoundError') return null;
    throw error;
  }
}

/** A subscription went past due: its balance becomes a recovery charged through the subscription. */
function wentPastDue(subscription: braintree.Subscription): ConnectorAction {
  // Read again: Braintree's own retry may have collected it since the webhook left.
  if (subscription.status !== 'Past Due')
    return ignored(`The subscription is ${subscription.status}, nothing is owed`);
  const failure = firstFailureOf(subscription.transactions ?? []);
  if (!failure) return ignored('The subscription shows no failed charge');
  const currency = failure.currencyIsoCode;
  const amount = minorUnitsOf(subscription.balance, currency);
  if (!amount || amount <= 0) return ignored('The subscription has no balance to collect');
  const customerId = failure.customer?.id;
  if (!customerId) return ignored('The failed charge names no customer, so the card cannot be named');
  const email = failure.customer.email;
  const bin = failure.creditCard?.bin;
  return {
    kind: 'failure',
    failure: {
      invoiceId: spellId(subscription.id, failure),
      customerId,
      subscriptionId: subscription.id,
      paymentMethodToken: `${subscription.paymentMethodToken}|${customerId}`,
      amount,
      currency,
      originalDeclineCode: declineCodeOf(failure),
      ...(email ? { customerEmail: email } : {}),
      ...(bin ? { binPrefix: bin } : {}),
    },
  };
}

/**
 * A subscription was charged: when Braintree's own retry (or the customer in the merchant's app) paid a
 * past-due spell, its recovery stops. Recoup's own charges carry their attempt key as order id and are
 * skipped: their recovery has already succeeded.
 */
function chargedSuccessfully(subscription: braintree.Subscription): ConnectorAction {
  const [paid, ...earlier] = subscription.transactions ?? [];
  if (!paid || !charged(paid)) return ignored('The subscription shows no successful charge');
  if (paid.orderId && isAttemptKey(paid.orderId)) return ignored("The charge was Recoup's own");
  const failure = firstFailureOf(earlier);
  if (!failure) return ignored('The charge paid no past-due spell');
  return { kind: 'paid', invoiceId: spellId(subscription.id, failure) };
}

const handlers: Record<string, (subscription: braintree.Subscription) => ConnectorAction> = {
  subscription_went_past_due: wentPastDue,
  subscription_charged_successfully: chargedSuccessfully,
};

/**
 * Braintree's recurring billing: webhooks verified with the official SDK (bt_signature over bt_payload,
 * keyed with the Braintree gateway's API keys), subscriptions read through its API. A past-due
 * subscription is recovered through the subscription itself (each attempt a sale with its subscription
 * id, as the SDK's retryCharge makes, carrying the attempt key as order id), which clears its balance and
 * makes it active again: there is nothing to write back, and Braintree cannot collect the payment twice
 * (it refuses to charge a subscription that is no longer past due).
 */
export const braintreeConnector: PlatformConnector<BraintreeConnectorConfig> = {
  config: BraintreeConnectorConfig,
  configProblem(config, gateways) {
    if (credentialsOf(config, gateways)) return null;
    return config.gateway === undefined
      ? 'needs a Braintree gateway on the account: its API keys verify the webhooks and charge the subscriptions'
      : `the account has no Braintree gateway named ${config.gateway}`;
  },
  async verify(request, config, _now, ctx) {
    const form = new URLSearchParams(request.rawBody.toString('utf8'));
    const signature = form.get('bt_signature');
    const payload = form.get('bt_payload');
    if (!signature || !payload) return null;
    const client = clientOf(config, ctx);
    let parsed: unknown;
    try {
      parsed = await client.webhookNotification.parse(signature, payload);
    } catch (error) {
      if ((error as { type?: unknown }).type === 'invalidSignatureError') return null;
      // Signed with the account's keys, but not XML: the SDK's parse reads nothing else (no network), so
      // a resend would fail alike.
      return notAnEventIn(request.rawBody);
    }
    const notification = Notification.safeParse(parsed);
    if (!notification.success) return notAnEventIn(request.rawBody);
    const { kind, timestamp, subscription } = notification.data;
    const subscriptionId = subscription?.id ?? null;
    // Braintree's notifications carry no id; a redelivery repeats the kind, subject and timestamp.
    const event: VerifiedEvent = {
      id: `${kind}:${subscriptionId ?? '-'}:${timestamp.toISOString()}`,
      type: kind,
      payload: { subscriptionId },
    };
    return event;
  },
  async interpret(event, config, ctx) {
    if (event.type === notAnEvent) return ignored('The notification is not in the shape Braintree sends');
    const handler = handlers[event.type];
    if (!handler) return ignored(`Recoup does not act on ${event.type}`);
    const { subscriptionId } = NotificationSubject.parse(event.payload);
    if (!subscriptionId) return ignored('The notification names no subscription');
    const subscription = await subscriptionOf(clientOf(config, ctx), subscriptionId);
    return subscription ? handler(subscription) : ignored('Braintree no longer knows the subscription');
  },
  async writeBack(config, payment, ctx) {
    // The recovery charged the subscription itself, so Braintree already holds the payment there.
    const transaction = await clientOf(config, ctx).transaction.find(payment.gatewayTransactionId);
    const subscriptionId = payment.invoiceId.slice(0, payment.invoiceId.lastIndexOf(':'));
    if (transaction.subscriptionId !== subscriptionId)
      throw new Error(
        `Braintree transaction ${payment.gatewayTransactionId} was not charged through subscription ${subscriptionId}`,
      );
    return 'recorded';
  },
};
