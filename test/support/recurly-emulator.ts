import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { closeServer, sendJson, serveEmulator } from './emulator-http.js';

/**
 * A local emulator of the part of Recurly's v3 API (2021-02-25) the Recurly connector reads and writes:
 * transactions (declined and successful), invoices, an account's billing info and marking an invoice
 * successful. It answers with Recurly's auth (HTTP Basic, the API key as user), its `Accept` version check
 * and its error bodies, so the official client runs unchanged against loopback.
 */
export interface RecurlyEmulator {
  url: string;
  apiKey: string;
  /**
   * A renewal the card declined: an account whose card is `token`, its past-due invoice and the failed
   * transaction. Returns the ids a `payment.failed` notification and its checks name.
   */
  addFailedRenewal(renewal: {
    accountCode: string;
    email: string;
    token: string;
    /** In the currency's major unit, as Recurly writes amounts. */
    amount: number;
    currency: string;
    statusCode: string;
    firstSix?: string;
    country?: string;
  }): { transactionUuid: string; invoiceId: string };
  /**
   * The customer pays `amount` (what the invoice owes, unless told) on Recurly's hosted page: a successful
   * transaction on the invoice, which is paid once nothing is owed. Returns the transaction's uuid, which a
   * `payment.succeeded` notification names.
   */
  payOnRecurly(invoiceId: string, amount?: number): string;
  /** The customer saves a new card on Recurly. */
  setCard(accountCode: string, token: string): void;
  /** Sets an invoice's state as Recurly would (the customer paid it, the merchant voided it). */
  setInvoiceState(invoiceId: string, state: string): void;
  /** Invoice ids of every `mark_successful` that reached the emulator, in order. */
  markedSuccessful(): string[];
  /** While on, a `mark_successful` is carried out but its answer is lost (the connection is dropped). */
  loseMarkAnswers(on: boolean): void;
  close(): Promise<void>;
}

interface Invoice {
  id: string;
  number: string;
  state: string;
  currency: string;
  total: number;
  /** What transactions have paid of it (a `mark_successful` pays it without one). */
  paid: number;
  accountCode: string;
  /** Uuids of its transactions, oldest first. */
  transactions: string[];
  /** ISO time it was marked paid or failed. */
  closedAt: string | null;
}

const newId = () => randomBytes(6).toString('hex');

const send = (res: ServerResponse, status: number, body: unknown) =>
  sendJson(res, status, body, { 'content-type': 'application/json; charset=utf-8', 'x-request-id': newId() });

const error = (type: string, message: string) => ({ error: { type, message } });

export async function startRecurlyEmulator(): Promise<RecurlyEmulator> {
  const apiKey = randomBytes(16).toString('hex');
  const accounts = new Map<string, { id: string; email: string; token: string | null }>();
  const invoices = new Map<string, Invoice>();
  const transactions = new Map<string, Record<string, unknown>>();
  const marks: string[] = [];
  let loseMarks = false;
  let invoiceNumber = 1000;

  /** Sets the invoice's state; a paid or failed one is closed now. */
  function moveTo(invoice: Invoice, state: string) {
    invoice.state = state;
    if (['paid', 'failed'].includes(state)) invoice.closedAt ??= new Date().toISOString();
  }

  const invoiceBody = (i: Invoice) => ({
    id: i.id,
    object: 'invoice',
    type: 'charge',
    number: i.number,
    state: i.state,
    collection_method: 'automatic',
    currency: i.currency,
    total: i.total,
    balance: i.state === 'paid' ? 0 : Math.round((i.total - i.paid) * 100) / 100,
    paid: i.state === 'paid' ? i.total : i.paid,
    account: { id: accounts.get(i.accountCode)?.id, object: 'account', code: i.accountCode },
    closed_at: i.closedAt,
    transactions: i.transactions.map((uuid) => transactions.get(uuid)),
    credit_payments: [],
  });

  function billingInfo(code: string) {
    const account = accounts.get(code);
    if (!account?.token) return null;
    return {
      id: newId(),
      object: 'billing_info',
      account_id: account.id,
      valid: true,
      primary_payment_method: true,
      payment_method: {
        object: 'credit_card',
        card_type: 'Visa',
        last_four: '4242',
        gateway_token: account.token,
      },
      payment_gateway_references: [],
    };
  }

  /** A transaction on the invoice, as `GET /transactions/uuid-…` answers it; returns its uuid. */
  function addTransaction(invoice: Invoice, fields: Record<string, unknown>): string {
    const account = accounts.get(invoice.accountCode);
    const uuid = randomBytes(16).toString('hex');
    transactions.set(uuid, {
      id: newId(),
      object: 'transaction',
      uuid,
      type: 'purchase',
      currency: invoice.currency,
      invoice: { id: invoice.id, object: 'invoice', number: invoice.number, type: 'charge' },
      account: { id: account?.id, object: 'account', code: invoice.accountCode, email: account?.email },
      ...fields,
    });
    invoice.transactions.push(uuid);
    return uuid;
  }

  function route(method: string, path: string): { status: number; body: unknown; lost?: true } {
    const transaction = /^\/transactions\/uuid-([^/]+)$/.exec(path);
    if (method === 'GET' && transaction) {
      const found = transactions.get(transaction[1]!);
      return found
        ? { status: 200, body: found }
        : {
            status: 404,
            body: error('not_found', `Couldn't find Transaction with uuid = ${transaction[1]}`),
          };
    }
    const billing = /^\/accounts\/code-([^/]+)\/billing_info$/.exec(path);
    if (method === 'GET' && billing) {
      const info = billingInfo(decodeURIComponent(billing[1]!));
      return info
        ? { status: 200, body: info }
        : { status: 404, body: error('not_found', "Couldn't find BillingInfo with account_id") };
    }
    const invoice = /^\/invoices\/([^/]+)(\/mark_successful)?$/.exec(path);
    const found = invoice && invoices.get(invoice[1]!);
    if (invoice && !found) return { status: 404, body: error('not_found', `Couldn't find Invoice`) };
    if (method === 'GET' && found && !invoice[2]) return { status: 200, body: invoiceBody(found) };
    if (method === 'PUT' && found && invoice[2]) {
      marks.push(found.id);
      if (!['pending', 'processing', 'past_due', 'failed'].includes(found.state))
        return { status: 422, body: error('validation', `Invoice is ${found.state} and cannot be marked`) };
      moveTo(found, 'paid');
      return { status: 200, body: invoiceBody(found), ...(loseMarks ? { lost: true as const } : {}) };
    }
    return { status: 404, body: error('not_found', `No route ${method} ${path}`) };
  }

  const basic = `Basic ${Buffer.from(`${apiKey}:`).toString('base64')}`;
  const { server, url } = await serveEmulator((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.headers.authorization !== basic)
        return send(res, 401, error('unauthorized', 'Invalid API key'));
      if (req.headers.accept !== 'application/vnd.recurly.v2021-02-25')
        return send(res, 406, error('invalid_api_version', 'Unknown or missing API version'));
      const reply = route(req.method ?? 'GET', new URL(req.url ?? '/', 'http://emulator').pathname);
      if (reply.lost) return req.socket.destroy();
      send(res, reply.status, reply.body);
    });
  });

  return {
    url,
    apiKey,
    addFailedRenewal(r) {
      const account = { id: newId(), email: r.email, token: r.token };
      accounts.set(r.accountCode, account);
      const invoice: Invoice = {
        id: newId(),
        number: String((invoiceNumber += 1)),
        state: 'past_due',
        currency: r.currency,
        total: r.amount,
        paid: 0,
        accountCode: r.accountCode,
        transactions: [],
        closedAt: null,
      };
      invoices.set(invoice.id, invoice);
      const uuid = addTransaction(invoice, {
        origin: 'recurring',
        amount: r.amount,
        status: 'declined',
        success: false,
        status_code: r.statusCode,
        payment_method: {
          object: 'credit_card',
          card_type: 'Visa',
          last_four: '0002',
          gateway_token: r.token,
          ...(r.firstSix ? { first_six: r.firstSix } : {}),
          ...(r.country ? { cc_bin_country: r.country } : {}),
        },
      });
      return { transactionUuid: uuid, invoiceId: invoice.id };
    },
    payOnRecurly(invoiceId, amount) {
      const invoice = invoices.get(invoiceId);
      if (!invoice) throw new Error(`No invoice ${invoiceId}`);
      const paid = amount ?? invoice.total - invoice.paid;
      invoice.paid = Math.round((invoice.paid + paid) * 100) / 100;
      if (invoice.paid >= invoice.total) moveTo(invoice, 'paid');
      return addTransaction(invoice, { origin: 'hpp', amount: paid, status: 'success', success: true });
    },
    setCard(code, token) {
      const account = accounts.get(code);
      if (!account) throw new Error(`No account ${code}`);
      account.token = token;
    },
    setInvoiceState(id, state) {
      const invoice = invoices.get(id);
      if (!invoice) throw new Error(`No invoice ${id}`);
      moveTo(invoice, state);
    },
    markedSuccessful: () => [...marks],
    loseMarkAnswers: (on) => void (loseMarks = on),
    close: () => closeServer(server),
  };
}
