import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local emulator of the part of Braintree's gateway API the Braintree adapter uses (a sale of a vaulted
 * payment method; transaction search by order id), speaking Braintree's wire format — JSON requests, XML
 * answers, 422 `api-error-response` bodies for declines and validation errors — with its basic
 * authentication, its duplicate checking and an optional search-index lag, so the official SDK runs
 * unchanged against loopback. Each vaulted payment method answers from a script.
 */
export type EmulatedAnswer =
  | 'approve'
  /** processor_declined with Braintree's processor response code, and Mastercard's merchant advice code. */
  | { decline: string; advice?: string }
  /** gateway_rejected by Braintree's own checks (fraud, cvv, avs, three_d_secure, …). */
  | { reject: string }
  /** status failed: the processor answered with an error. */
  | 'failed'
  /** The sale stays `authorizing`: the processor has not answered yet. */
  | 'authorizing'
  /** The sale is approved, but the connection is cut before the answer. */
  | 'lost'
  /** 500 before anything is created. */
  | 'server_error';

export interface EmulatedTransaction {
  id: string;
  status: string;
  amount: string;
  currencyIsoCode: string;
  merchantAccountId: string;
  orderId: string;
  customerId: string;
  paymentMethodToken: string;
  transactionSource: string | null;
  submitForSettlement: boolean;
  processorResponseCode: string;
  gatewayRejectionReason: string | null;
  merchantAdviceCode: string | null;
  createdAt: Date;
}

interface PaymentMethod {
  customerId: string;
  answers: EmulatedAnswer[];
  sales: number;
}

/** A vaulted customer with its cards, as the customer search returns them. */
export interface EmulatedCustomer {
  id: string;
  email: string | null;
  cards: Array<{
    token: string;
    cardType: string;
    last4: string;
    expMonth: number;
    expYear: number;
    default: boolean;
  }>;
}

export interface BraintreeEmulator {
  url: string;
  /** Credentials of the emulated gateway: a Braintree gateway's, pointed at the emulator. */
  credentials: Record<string, string>;
  /** A vaulted payment method of `customerId` and what its sales answer, in order (the last repeats). */
  addPaymentMethod(token: string, method: { customerId: string; answers: EmulatedAnswer[] }): void;
  transactions(): EmulatedTransaction[];
  /** A customer the customer search finds (by one of its cards' expiry). */
  addCustomer(customer: EmulatedCustomer): void;
  /** How long a new transaction stays out of search results (Braintree's search is an index). */
  searchLag(ms: number): void;
  /** Every request from now on is answered with this status (401, 429, …) until set back to null. */
  failWith(status: number | null): void;
  close(): Promise<void>;
}

/** Merchant accounts of the emulated merchant, by id, with the currency each settles in. */
const merchantAccounts: Record<string, string> = { acme_usd: 'USD', acme_eur: 'EUR', acme_jpy: 'JPY' };
const duplicateWindowMs = 30_000;
const decimals = (currency: string) => (currency === 'JPY' ? 0 : 2);

const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Braintree's XML: nested elements in kebab case, `nil`, `type="array"`, `type="integer"`, `type="datetime"`. */
function xml(name: string, value: unknown): string {
  const tag = kebab(name);
  if (value === null || value === undefined) return `<${tag} nil="true"/>`;
  if (value instanceof Date) return `<${tag} type="datetime">${value.toISOString()}</${tag}>`;
  if (typeof value === 'number') return `<${tag} type="integer">${value}</${tag}>`;
  if (typeof value === 'boolean') return `<${tag} type="boolean">${value}</${tag}>`;
  if (Array.isArray(value))
    return `<${tag} type="array">${value.map((v) => xml(typeof v === 'object' ? 'transaction' : 'item', v)).join('')}</${tag}>`;
  if (typeof value === 'object') {
    const inner = Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => xml(k, v))
      .join('');
    return `<${tag}>${inner}</${tag}>`;
  }
  return `<${tag}>${escape(value as string)}</${tag}>`;
}

function sendXml(res: ServerResponse, status: number, body: string) {
  res.writeHead(status, { 'content-type': 'application/xml; charset=utf-8' });
  res.end(`<?xml version="1.0" encoding="UTF-8"?>\n${body}`);
}

function wire(t: EmulatedTransaction) {
  const declined = t.status === 'processor_declined';
  return {
    id: t.id,
    status: t.status,
    type: 'sale',
    amount: t.amount,
    currencyIsoCode: t.currencyIsoCode,
    merchantAccountId: t.merchantAccountId,
    orderId: t.orderId,
    transactionSource: t.transactionSource,
    customer: { id: t.customerId },
    creditCard: { token: t.paymentMethodToken },
    processorResponseCode: t.processorResponseCode,
    processorResponseText: declined ? 'Declined' : 'Approved',
    processorResponseType: declined ? 'soft_declined' : 'approved',
    gatewayRejectionReason: t.gatewayRejectionReason,
    merchantAdviceCode: t.merchantAdviceCode,
    createdAt: t.createdAt,
  };
}

/** A 422 validation error on the transaction, as Braintree nests them. */
const validationError = (code: string, attribute: string, message: string) =>
  `<api-error-response><errors><errors type="array"/><transaction><errors type="array"><error><code>${code}</code>` +
  `<attribute type="symbol">${attribute}</attribute><message>${escape(message)}</message></error></errors>` +
  `</transaction></errors><message>${escape(message)}</message></api-error-response>`;

async function jsonOf(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

type Fields = Record<string, unknown>;
const field = (o: unknown, key: string): unknown =>
  o && typeof o === 'object' ? (o as Fields)[key] : undefined;
const text = (o: unknown, key: string): string => {
  const v = field(o, key);
  return typeof v === 'string' ? v : '';
};

/** `clock`: what Braintree stamps transactions with (a time-skipping test passes the server's time). */
export async function startBraintreeEmulator(
  clock: () => Date | Promise<Date> = () => new Date(),
): Promise<BraintreeEmulator> {
  const merchantId = `merchant${randomBytes(4).toString('hex')}`;
  const publicKey = `pub${randomBytes(6).toString('hex')}`;
  const privateKey = randomBytes(16).toString('hex');
  const authorization = `Basic ${Buffer.from(`${publicKey}:${privateKey}`).toString('base64')}`;
  const methods = new Map<string, PaymentMethod>();
  const transactions: EmulatedTransaction[] = [];
  const customers: EmulatedCustomer[] = [];
  let lagMs = 0;
  let failure: number | null = null;

  async function sale(body: Fields, res: ServerResponse) {
    const request = field(body, 'transaction');
    const token = text(request, 'payment_method_token');
    const customerId = text(request, 'customer_id');
    const account = text(request, 'merchant_account_id');
    const currency = merchantAccounts[account];
    if (!currency)
      return sendXml(
        res,
        422,
        validationError('91513', 'merchant_account_id', 'Merchant account ID is invalid.'),
      );
    const method = methods.get(token);
    if (!method)
      return sendXml(
        res,
        422,
        validationError('91518', 'payment_method_token', 'Payment method token is invalid.'),
      );
    if (customerId && customerId !== method.customerId)
      return sendXml(
        res,
        422,
        validationError('91516', 'payment_method_token', 'Payment method does not belong to this customer.'),
      );
    const amount = text(request, 'amount');
    if (!new RegExp(`^\\d+${decimals(currency) ? '\\.\\d{2}' : ''}$`).test(amount))
      return sendXml(res, 422, validationError('81503', 'amount', 'Amount is an invalid format.'));
    const answer = method.answers[Math.min(method.sales, method.answers.length - 1)] ?? 'approve';
    if (answer === 'server_error') return sendXml(res, 500, '<error/>');
    const now = await clock();
    const orderId = text(request, 'order_id');
    const base = {
      id: randomBytes(4).toString('hex'),
      amount,
      currencyIsoCode: currency,
      merchantAccountId: account,
      orderId,
      customerId: method.customerId,
      paymentMethodToken: token,
      transactionSource: text(request, 'transaction_source') || null,
      submitForSettlement: field(field(request, 'options'), 'submit_for_settlement') === true,
      createdAt: now,
    };
    // Braintree's duplicate checking: a successful sale of the same amount, order id and card in the window.
    const duplicate = transactions.some(
      (t) =>
        t.status === 'submitted_for_settlement' &&
        t.orderId === orderId &&
        t.amount === amount &&
        t.paymentMethodToken === token &&
        now.getTime() - t.createdAt.getTime() < duplicateWindowMs,
    );
    let transaction: EmulatedTransaction;
    if (duplicate) {
      transaction = { ...base, ...outcome({ reject: 'duplicate' }) };
    } else {
      method.sales += 1;
      transaction = { ...base, ...outcome(answer === 'lost' ? 'approve' : answer) };
    }
    transactions.push(transaction);
    if (answer === 'lost' && !duplicate) return res.socket?.destroy();
    if (transaction.status === 'submitted_for_settlement' || transaction.status === 'authorizing')
      return sendXml(res, 201, xml('transaction', wire(transaction)));
    return sendXml(
      res,
      422,
      xml('apiErrorResponse', {
        errors: { errors: [] },
        message: 'Declined',
        transaction: wire(transaction),
      }),
    );
  }

  async function search(body: Fields, path: string, res: ServerResponse) {
    const criteria = field(body, 'search');
    const orderId = text(field(criteria, 'order_id'), 'is');
    const customerId = text(field(criteria, 'customer_id'), 'is');
    const ids = field(criteria, 'ids');
    const now = (await clock()).getTime();
    const found = transactions.filter(
      (t) =>
        (!orderId || t.orderId === orderId) &&
        (!customerId || t.customerId === customerId) &&
        (!Array.isArray(ids) || ids.includes(t.id)) &&
        now - t.createdAt.getTime() >= lagMs,
    );
    if (path.endsWith('/advanced_search_ids'))
      return sendXml(res, 200, xml('searchResults', { pageSize: 50, ids: found.map((t) => t.id) }));
    const page = found.map((t) => xml('transaction', wire(t))).join('');
    return sendXml(
      res,
      200,
      `<credit-card-transactions type="collection"><current-page-number type="integer">1</current-page-number><page-size type="integer">50</page-size><total-items type="integer">${found.length}</total-items>${page}</credit-card-transactions>`,
    );
  }

  /** Customer search by card expiry (`MM/YYYY`): ids first, then pages of customers by id. */
  function customerSearch(body: Fields, path: string, res: ServerResponse) {
    const criteria = field(body, 'search');
    const expiry = text(field(criteria, 'credit_card_expiration_date'), 'is');
    const ids = field(criteria, 'ids');
    const found = customers.filter(
      (c) =>
        c.cards.some((card) => `${String(card.expMonth).padStart(2, '0')}/${card.expYear}` === expiry) &&
        (!Array.isArray(ids) || ids.includes(c.id)),
    );
    if (path.endsWith('/advanced_search_ids'))
      return sendXml(res, 200, xml('searchResults', { pageSize: 50, ids: found.map((c) => c.id) }));
    const cardsOf = (c: EmulatedCustomer) =>
      c.cards
        .map((card) =>
          xml('creditCard', {
            token: card.token,
            cardType: card.cardType,
            last4: card.last4,
            expirationMonth: String(card.expMonth).padStart(2, '0'),
            expirationYear: String(card.expYear),
            default: card.default,
          }),
        )
        .join('');
    const page = found
      .map(
        (c) =>
          `<customer>${xml('id', c.id)}${xml('email', c.email)}<credit-cards type="array">${cardsOf(c)}</credit-cards></customer>`,
      )
      .join('');
    return sendXml(res, 200, `<customers type="collection">${page}</customers>`);
  }

  const server = createServer((req, res) => {
    void (async () => {
      if (failure !== null) return sendXml(res, failure, '<error/>');
      if (req.headers.authorization !== authorization) return sendXml(res, 401, '<error/>');
      const path = req.url ?? '';
      const prefix = `/merchants/${merchantId}/transactions`;
      const body = await jsonOf(req);
      if (req.method === 'POST' && path === prefix) return sale(body, res);
      if (req.method === 'POST' && path.startsWith(`${prefix}/advanced_search`))
        return search(body, path, res);
      if (req.method === 'POST' && path.startsWith(`/merchants/${merchantId}/customers/advanced_search`))
        return customerSearch(body, path, res);
      return sendXml(res, 404, '<error/>');
    })().catch((error: unknown) => {
      res.writeHead(500);
      res.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    credentials: {
      merchantId,
      publicKey,
      privateKey,
      environment: 'sandbox',
      merchantAccounts: 'USD:acme_usd,EUR:acme_eur,JPY:acme_jpy',
      apiBase: url,
    },
    addPaymentMethod: (token, method) => methods.set(token, { ...method, sales: 0 }),
    transactions: () => [...transactions],
    addCustomer: (customer) => customers.push(customer),
    searchLag: (ms) => (lagMs = ms),
    failWith: (status) => (failure = status),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The status fields of a sale that answers `answer`. */
function outcome(
  answer: Exclude<EmulatedAnswer, 'lost' | 'server_error'> | { reject: 'duplicate' },
): Pick<
  EmulatedTransaction,
  'status' | 'processorResponseCode' | 'gatewayRejectionReason' | 'merchantAdviceCode'
> {
  if (answer === 'approve')
    return {
      status: 'submitted_for_settlement',
      processorResponseCode: '1000',
      gatewayRejectionReason: null,
      merchantAdviceCode: null,
    };
  if (answer === 'authorizing')
    return {
      status: 'authorizing',
      processorResponseCode: '',
      gatewayRejectionReason: null,
      merchantAdviceCode: null,
    };
  if (answer === 'failed')
    return {
      status: 'failed',
      processorResponseCode: '3000',
      gatewayRejectionReason: null,
      merchantAdviceCode: null,
    };
  if ('reject' in answer)
    return {
      status: 'gateway_rejected',
      processorResponseCode: '',
      gatewayRejectionReason: answer.reject,
      merchantAdviceCode: null,
    };
  return {
    status: 'processor_declined',
    processorResponseCode: answer.decline,
    gatewayRejectionReason: null,
    merchantAdviceCode: answer.advice ?? null,
  };
}
