import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { closeServer, readForm, serveEmulator } from './emulator-http.js';

/**
 * A local emulator of the part of Chargebee's API the Chargebee connector's write-back uses (retrieve an
 * invoice, record an invoice payment), with Chargebee's basic auth (the API key as username), its
 * idempotency-key replay and its error bodies, so the official SDK runs unchanged against loopback.
 */
export interface EmulatedInvoice {
  id: string;
  customer_id: string;
  status: 'paid' | 'posted' | 'payment_due' | 'not_paid' | 'voided' | 'pending';
  currency_code: string;
  total: number;
  amount_due: number;
  amount_paid: number;
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
  calls(): EmulatedCall[];
  /** Record-payment requests that reached the emulator, idempotent replays included. */
  recordPayments(invoiceId: string): EmulatedCall[];
  close(): Promise<void>;
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
    invoice.amount_due = Math.max(0, invoice.amount_due - amount);
    invoice.amount_paid += amount;
    if (invoice.amount_due === 0) invoice.status = 'paid';
    const transaction = {
      id: `txn_${randomBytes(8).toString('hex')}`,
      amount,
      payment_method: form['transaction[payment_method]'],
      reference_number: form['transaction[reference_number]'],
      date: Number(form['transaction[date]']),
      status: 'success',
      currency_code: invoice.currency_code,
    };
    return { status: 200, body: { invoice, transaction } };
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
      if (earlier) return send(res, earlier, { 'chargebee-idempotency-replayed': 'true' });
      const reply = recordPayment(decodeURIComponent(record[1]!), form);
      if (idempotencyKey) replies.set(idempotencyKey, reply);
      return send(res, reply);
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
      invoices.set(invoice.id, { ...invoice, status, total: invoice.amount_due, amount_paid: 0 });
    },
    invoice: (id) => invoices.get(id),
    calls: () => [...calls],
    recordPayments: (invoiceId) =>
      calls.filter((c) => c.method === 'POST' && c.path === `/api/v2/invoices/${invoiceId}/record_payment`),
    close: () => closeServer(server),
  };
}
