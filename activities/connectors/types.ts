import type { z } from 'zod';
import type { ConnectorAction, WriteBackOutcome } from '../../domain/connectors.js';
import { minorUnitsOf } from '../../domain/money.js';
import type { GatewayConfig } from '../../domain/settings.js';

/** An event the connector acts on with nothing, and why (the receipt says so to the platform's log). */
export const ignored = (reason: string): ConnectorAction => ({ kind: 'ignored', reason });

/** A platform's webhook request as it arrived: header names in lower case, the exact body bytes. */
export interface InboundWebhook {
  headers: Record<string, string | undefined>;
  rawBody: Buffer;
  /** The URL the platform called (some platforms sign it). */
  url: string;
}

/** A platform event that passed the platform's own authentication. */
export interface VerifiedEvent {
  /** The platform's event id: its retries of one event carry the same one. */
  id: string;
  type: string;
  payload: unknown;
}

/** What interpreting an event may need besides the connector's own configuration. */
export interface ConnectorContext {
  /** The account's gateways with their credentials (a platform may reuse its gateway's API key). */
  gateways: GatewayConfig[];
}

/** A recovered payment, to be recorded on the platform's invoice. */
export interface WriteBack {
  invoiceId: string;
  amount: number;
  currency: string;
  gatewayTransactionId: string;
  /** Epoch ms. */
  recoveredAt: number;
}

/**
 * What the platform says of an invoice now, read just before Recoup charges it: still owed (what is due,
 * in minor units of `currency`, the recovery's own when the platform names none); no longer owed (paid,
 * voided, cancelled or unknown to it); or `unreadable` when the connector holds no API credentials to ask.
 */
export type InvoiceStanding =
  | { kind: 'owed'; amountDue: number; currency?: string }
  /** `paid`: collected on the platform (its own retry, the customer on its page), not voided or cancelled. */
  | { kind: 'not_owed'; reason: string; paid?: boolean }
  | { kind: 'unreadable' };

/**
 * What an invoice with `balance` left to pay owes, the balance written in the currency's major unit (a
 * decimal, as Recurly and Zuora give it): not owed when no charge can be exactly that amount.
 */
export function owedBalance(balance: string | number, currency: string): InvoiceStanding {
  const amountDue = minorUnitsOf(balance, currency);
  return amountDue === null
    ? { kind: 'not_owed', reason: `The invoice's balance ${balance} is not an amount Recoup can charge` }
    : { kind: 'owed', amountDue, currency };
}

/** The invoice a recovery collects: the platform's id, and the currency the recovery charges in. */
export interface RecoveredInvoice {
  id: string;
  currency: string;
}

/** One billing platform: how its webhooks are authenticated and read, and how a recovery is written back. */
export interface PlatformConnector<C extends Record<string, unknown>> {
  /** The connector's configuration (secrets): checked when an operator sets it, sealed at rest. */
  config: z.ZodType<C>;
  /** Why this configuration cannot work for this account (e.g. no API key to read invoices), or null. */
  configProblem?(config: C, gateways: GatewayConfig[]): string | null;
  /**
   * Authenticates the request with the platform's own scheme; null when it fails (401). `ctx` serves
   * platforms that sign with the gateway's API keys (Braintree).
   */
  verify(request: InboundWebhook, config: C, now: Date, ctx: ConnectorContext): Promise<VerifiedEvent | null>;
  /** What the event asks of Recoup; may read the platform's API. */
  interpret(event: VerifiedEvent, config: C, ctx: ConnectorContext): Promise<ConnectorAction>;
  /**
   * Whether the invoice is still owed, read from the platform's API; throws when the platform does not
   * answer (the caller retries, never charging blind). Absent where the charge itself cannot collect an
   * invoice no longer owed (Braintree charges through the subscription, which refuses then).
   */
  invoiceStanding?(config: C, invoice: RecoveredInvoice, ctx: ConnectorContext): Promise<InvoiceStanding>;
  /** Marks the invoice paid on the platform; absent where the platform has no such API. */
  writeBack?(config: C, payment: WriteBack, ctx: ConnectorContext): Promise<WriteBackOutcome>;
}
