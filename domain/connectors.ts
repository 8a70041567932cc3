import { z } from 'zod';
import type { PageLocale } from './links.js';

/** Billing platforms whose failed-payment webhooks Recoup takes in (decisions.md). */
export const connectorPlatforms = [
  'stripe-billing',
  'chargebee',
  'recurly',
  'braintree',
  'zuora',
  'shopify-recharge',
] as const;
export const ConnectorPlatform = z.enum(connectorPlatforms);
export type ConnectorPlatform = z.infer<typeof ConnectorPlatform>;

/** Where a recovery that a platform reported came from: what write-back and card updates need. */
export interface ConnectorSource {
  platform: ConnectorPlatform;
  invoiceId: string;
  /** The platform's customer id; a later payment-method update of this customer retries the recovery. */
  customerId: string | null;
  /**
   * The subscription of the gateway's own recurring billing that owes the payment (Braintree): every attempt
   * charges through it, which clears its balance, so the platform never collects the payment a second time.
   */
  subscriptionId?: string;
}

/** What a failed-payment event says about the payment, before it is validated as a recovery request. */
export interface ReportedFailure {
  invoiceId: string;
  customerId: string | null;
  subscriptionId?: string;
  paymentMethodToken: string;
  amount: number;
  currency: string;
  originalDeclineCode?: string;
  customerEmail?: string;
  cardOrigin?: string;
  binPrefix?: string;
  /** The customer's language as the platform records it, when the hosted pages speak it. */
  locale?: PageLocale;
}

/** A card the platform says is about to expire. */
export interface ExpiringCard {
  token: string;
  expMonth: number;
  expYear: number;
  brand: string;
  last4: string;
  customerEmail: string | null;
}

/** What one platform event asks of Recoup. */
export type ConnectorAction =
  | { kind: 'failure'; failure: ReportedFailure }
  /** The customer saved a new payment method on the platform: queued recoveries retry with it. */
  | { kind: 'card_updated'; customerId: string; newToken: string }
  /** The invoice was paid outside Recoup (the platform's own retry, the customer): stop retrying it. */
  | { kind: 'paid'; invoiceId: string }
  /**
   * A payment outside Recoup covered part of the invoice: its recovery collects what is still due (minor
   * units of `currency`), never more.
   */
  | { kind: 'partly_paid'; invoiceId: string; amountDue: number; currency: string }
  /** The platform's own expiry notice: forwarded to the merchant as card.expiring_soon. */
  | { kind: 'card_expiring'; card: ExpiringCard }
  | { kind: 'ignored'; reason: string };

/**
 * What a write-back did: recorded the payment; found the invoice paid already; found it closed without
 * payment (voided: the merchant must refund or re-invoice by hand); or had no API credentials to do it.
 */
export type WriteBackOutcome = 'recorded' | 'already_paid' | 'closed' | 'not_configured';

/** The intake URL of one account's connector, to paste into the platform's webhook settings. */
export function connectorIntakeUrl(baseUrl: string, platform: ConnectorPlatform, clientId: string): string {
  return `${baseUrl}/api/connectors/${platform}/webhook/${encodeURIComponent(clientId)}`;
}
