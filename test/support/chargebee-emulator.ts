import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { closeServer, readForm, serveEmulator } from './emulator-http.js';

/**
 * A local emulator of the part of Chargebee's API the Chargebee connector uses (retrieve an invoice, record
 * an invoice payment, retrieve a transaction), with Chargebee's basic auth (the API key as username), its
 * idempotency-key replay and its error bodies, so the official SDK runs unchanged against loopback; and the
 * payment_succeeded event Chargebee posts for a payment of an invoice.
 */
export interface EmulatedInvoice {
  id: string;
  customer_id: string;
  status: 'paid' | 'posted' | 'payment_due' | 'not_paid' | 'voided' | 'pending';
  currency_code: string;
  total: number;
  amount_due: number;
  amount_paid: number;
  /** The payments applied to the invoice (the SDK's Invoice.LinkedPayment). */
  linked_payments: { txn_id: string; applied_amount: number; applied_at: number; txn_status: 'success' }[];
}

/** A payment transaction as Chargebee holds it. */
interface EmulatedTransaction {
  id: string;
  amount: number;
  payment_method: string;
  reference_number?: string;
  date: number;
  status: 'success';
  currency_code: string;
}

/** One request that reached the emulator with a valid key. */
export interface EmulatedCall {
  method: string;
  path: string;
  /** The form fields of a POST. */
  form: Record<string, string>;
  idempotencyKey: string | null;
}

export interface ChargebeeEmulator {
  url: string;
  site: string;
  apiKey: string;
  addInvoice(
    invoice: Pick<EmulatedInvoice, 'id' | 'customer_id' | 'amount_due' | 'currency_code'> & {
      status?: EmulatedInvoice['status'];
    },
  ): void;
  invoice(id: string): EmulatedInvoice | undefined;
  /**
   * The customer pays `amount` (all that is due when absent) of the invoice in Chargebee (the portal, the
   * hosted invoice page); returns the body of the payment_succeeded event Chargebee then posts.
   */
  payInvoiceInChargebee(id: string, amount?: number): string;
  /**
   * The body of the payment_succeeded event Chargebee posts for the invoice's latest payment, one recorded
   * through the API (Recoup's write-back) included.
   */
  paymentSucceededEvent(invoiceId: string): string;
  /** While on, every API request answers 503 with Chargebee's error body. */
  outage(on: boolean): void;
  /** While on, a record-payment request is carried out (or replayed) but its answer is lost: the connection drops. */
  loseRecordPaymentAnswers(on: boolean): void;
  calls(): EmulatedCall[];
  /** Record-payment requests that reached the emulator, idempotent replays included. */
  recordPayments(invoiceId: string): EmulatedCall[];
  close(): Promise<void>;
}

/** A Chargebee event as Chargebee posts it to a webhook (the envelope of the SDK's WebhookEvent type). */
export function chargebeeEvent(
  eventType: string,
  content: Record<string, unknown>,
  source = 'scheduled_job',
) {
  return {
    id: `ev_${randomBytes(8).toString('hex')}`,
    occurred_at: Math.floor(Date.now() / 1000),
    source,
    object: 'event',
    api_version: 'v2',
    event_type: eventType,
    webhook_status: 'scheduled',
    content,
  };
}

// Chargebee's error body: message, type, api_error_code, and the deprecated error_code/error_msg pair.
function error(status: number, type: string, code: string, message: string) {
  return {
    status,
    body: {
      message,
      type,
      api_error_code: code,
      error_code: code,
      error_msg: message,
      http_status_code: status,
    },
  };
}

function send(res: ServerResponse, reply: { status: number; body: unknown }, headers = {}) {
  res.writeHead(reply.status, { 'content-type': 'application/json;charset=utf-8', ...headers });
  res.end(JSON.stringify(reply.body));
}

export async function startChargebeeEmulator(): Promise<ChargebeeEmulator> {
  const site = 'recoup-test';
  const apiKey = `test_${randomBytes(16).toString('hex')}`;
  const invoices = new Map<string, EmulatedInvoice>();
  const calls: EmulatedCall[] = [];
  const replies = new Map<string, { status: number; body: unknown }>();
  const transactions = new Map<string, EmulatedTransaction>();
  let down = false;
  let loseRecords = false;

  /** A successful payment of `amount` applied to the invoice. */
  function pay(invoice: EmulatedInvoice, amount: number, details: Partial<EmulatedTransaction> = {}) {
    const now = Math.floor(Date.now() / 1000);
    const transaction: EmulatedTransaction = {
      id: `txn_${randomBytes(8).toString('hex')}`,
      amount,
      payment_method: 'card',
      date: now,
      status: 'success',
      currency_code: invoice.currency_code,
      ...details,
    };
    transactions.set(transaction.id, transaction);
    invoice.amount_due = Math.max(0, invoice.amount_due - amount);
    invoice.amount_paid += amount;
    if (invoice.amount_due === 0) invoice.status = 'paid';
    invoice.linked_payments.push({
      txn_id: transaction.id,
      applied_amount: amount,
      applied_at: now,
      txn_status: 'success',
    });
    return transaction;
  }

  /**
   * payment_succeeded for one payment of the invoice: the transaction with the invoice it paid (the SDK's
   * PaymentSucceededContent), the invoice as the payment left it, the customer.
   */
  function paymentSucceeded(invoice: EmulatedInvoice, transaction: EmulatedTransaction, source: string) {
    const applied = invoice.linked_payments.find((p) => p.txn_id === transaction.id);
    const content = {
      transaction: {
        ...transaction,
        customer_id: invoice.customer_id,
        type: 'payment',
        gateway: transaction.payment_method === 'card' ? 'stripe' : 'not_applicable',
        linked_invoices: [
          {
            invoice_id: invoice.id,
            applied_amount: applied?.applied_amount ?? transaction.amount,
            applied_at: applied?.applied_at ?? transaction.date,
            invoice_status: invoice.status,
          },
        ],
      },
      invoice: structuredClone(invoice),
      customer: { id: invoice.customer_id },
    };
    return JSON.stringify(chargebeeEvent('payment_succeeded', content, source));
  }

  function recordPayment(id: string, form: Record<string, string>) {
    const invoice = invoices.get(id);
    if (!invoice)
      return error(
        404,
        'invalid_request',
        'resource_not_found',
        `Sorry, we couldn't find that invoice ${id}`,
      );
    if (!['posted', 'payment_due', 'not_paid'].includes(invoice.status))
      return error(
        409,
        'invalid_request',
        'invalid_state_for_request',
        `Invoice is in ${invoice.status} state`,
      );
    if (!form['transaction[payment_method]'])
      return error(400, 'invalid_request', 'param_required', 'transaction[payment_method] : cannot be blank');
    const amount = Number(form['transaction[amount]'] ?? invoice.amount_due);
    const reference = form['transaction[reference_number]'];
    const transaction = pay(invoice, amount, {
      payment_method: form['transaction[payment_method]'],
      ...(reference ? { reference_number: reference } : {}),
      date: Number(form['transaction[date]']),
    });
    return { status: 200, body: { invoice: structuredClone(invoice), transaction } };
  }

  const { server, url } = await serveEmulator(async (req, res) => {
    const auth = req.headers.authorization ?? '';
    if (auth !== `Basic ${Buffer.from(`${apiKey}:`).toString('base64')}`)
      return send(
        res,
        error(
          401,
          'api_authentication_failed',
          'api_authentication_failed',
          'Sorry, authentication failed. Invalid api key',
        ),
      );
    if (down)
      return send(
        res,
        error(
          503,
          'internal_temporary_error',
          'internal_temporary_error',
          'Sorry, the server is currently unable to handle the request due to a temporary overload or scheduled maintenance.',
        ),
      );
    const path = new URL(req.url ?? '/', 'http://emulator').pathname;
    const form = req.method === 'POST' ? Object.fromEntries(await readForm(req)) : {};
    const key = req.headers['chargebee-idempotency-key'];
    const idempotencyKey = typeof key === 'string' ? key : null;
    calls.push({ method: req.method ?? '', path, form, idempotencyKey });
    const retrieve = /^\/api\/v2\/invoices\/([^/]+)$/.exec(path);
    if (req.method === 'GET' && retrieve) {
      const invoice = invoices.get(decodeURIComponent(retrieve[1]!));
      return send(
        res,
        invoice
          ? { status: 200, body: { invoice } }
          : error(404, 'invalid_request', 'resource_not_found', "Sorry, we couldn't find that resource"),
      );
    }
    const record = /^\/api\/v2\/invoices\/([^/]+)\/record_payment$/.exec(path);
    if (req.method === 'POST' && record) {
      const earlier = idempotencyKey ? replies.get(idempotencyKey) : undefined;
      const reply = earlier ?? recordPayment(decodeURIComponent(record[1]!), form);
      if (idempotencyKey) replies.set(idempotencyKey, reply);
      if (loseRecords) return req.socket.destroy();
      return send(res, reply, earlier ? { 'chargebee-idempotency-replayed': 'true' } : {});
    }
    const transaction = /^\/api\/v2\/transactions\/([^/]+)$/.exec(path);
    if (req.method === 'GET' && transaction) {
      const found = transactions.get(decodeURIComponent(transaction[1]!));
      return send(
        res,
        found
          ? { status: 200, body: { transaction: found } }
          : error(404, 'invalid_request', 'resource_not_found', "Sorry, we couldn't find that resource"),
      );
    }
    return send(
      res,
      error(404, 'invalid_request', 'resource_not_found', 'Sorry, we could not find that resource'),
    );
  });

  return {
    url,
    site,
    apiKey,
    addInvoice({ status = 'payment_due', ...invoice }) {
      invoices.set(invoice.id, {
        ...invoice,
        status,
        total: invoice.amount_due,
        amount_paid: 0,
        linked_payments: [],
      });
    },
    invoice: (id) => invoices.get(id),
    payInvoiceInChargebee(id, amount) {
      const invoice = invoices.get(id);
      if (!invoice) throw new Error(`No invoice ${id}`);
      return paymentSucceeded(invoice, pay(invoice, amount ?? invoice.amount_due), 'portal');
    },
    paymentSucceededEvent(invoiceId) {
      const invoice = invoices.get(invoiceId);
      const latest = transactions.get(invoice?.linked_payments.at(-1)?.txn_id ?? '');
      if (!invoice || !latest) throw new Error(`No payment of invoice ${invoiceId}`);
      return paymentSucceeded(invoice, latest, latest.payment_method === 'card' ? 'portal' : 'api');
    },
    outage: (on) => void (down = on),
    loseRecordPaymentAnswers: (on) => void (loseRecords = on),
    calls: () => [...calls],
    recordPayments: (invoiceId) =>
      calls.filter((c) => c.method === 'POST' && c.path === `/api/v2/invoices/${invoiceId}/record_payment`),
    close: () => closeServer(server),
  };
}
