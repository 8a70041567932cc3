import { createHash, createHmac, randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { closeServer, readJson, serveEmulator } from './emulator-http.js';

/**
 * A local emulator of the part of Braintree's gateway API the Braintree adapter and connector use (a sale of
 * a vaulted payment method or of a past-due subscription; transaction search by order id and find by id;
 * subscription find and update; signed webhook notifications), speaking Braintree's wire format — JSON requests, XML
 * answers, 422 `api-error-response` bodies for declines and validation errors — with its basic
 * authentication, its duplicate checking and an optional search-index lag, so the official SDK runs
 * unchanged against loopback. Each vaulted payment method answers from a script.
 */
export type EmulatedAnswer =
  | 'approve'
  /**
   * processor_declined with Braintree's processor response code, Mastercard's merchant advice code and, with
   * `hard`, the processor's word that the decline is for good (`processorResponseType: hard_declined`).
   */
  | { decline: string; advice?: string; hard?: true }
  /** gateway_rejected by Braintree's own checks (fraud, cvv, avs, three_d_secure, excessive_retry, …). */
  | { reject: string }
  /** A 422 validation error of the sale, with Braintree's code for it; nothing is created. */
  | { invalid: { code: string; attribute: string; message: string } }
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
  processorResponseType: 'approved' | 'soft_declined' | 'hard_declined';
  gatewayRejectionReason: string | null;
  merchantAdviceCode: string | null;
  subscriptionId: string | null;
  createdAt: Date;
}

/** A subscription of Braintree's recurring billing; `transactions` newest first, as Braintree lists them. */
export interface EmulatedSubscription {
  id: string;
  status: 'Active' | 'Past Due' | 'Canceled';
  balance: string;
  paymentMethodToken: string;
  merchantAccountId: string;
  transactions: EmulatedTransaction[];
}

interface PaymentMethod {
  customerId: string;
  email?: string;
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
  addPaymentMethod(
    token: string,
    method: { customerId: string; email?: string; answers: EmulatedAnswer[] },
  ): void;
  transactions(): EmulatedTransaction[];
  /**
   * A sale of the vaulted payment method `token` with order id `orderId` that answered `answer`, made now
   * without a request (a fixture: the search lists transactions in the order they were made).
   */
  addSale(
    token: string,
    orderId: string,
    answer: 'approve' | 'authorizing' | { decline: string },
  ): Promise<EmulatedTransaction>;
  /** A customer the customer search finds (by one of its cards' expiry). */
  addCustomer(customer: EmulatedCustomer): void;
  /** How long a new transaction stays out of search results (Braintree's search is an index). */
  searchLag(ms: number): void;
  /**
   * A subscription on `paymentMethodToken` whose renewal of `balance` (merchant account `acme_usd` unless
   * given) was just declined with `decline`: it is past due, with that failed charge on top of a paid one.
   */
  addPastDueSubscription(
    id: string,
    s: { paymentMethodToken: string; balance: string; decline: string; merchantAccountId?: string },
  ): Promise<EmulatedSubscription>;
  subscription(id: string): EmulatedSubscription | undefined;
  /** Braintree's own retry of a past-due subscription: `answer` decides it, as a sale of its card would. */
  retryOnBraintree(id: string, answer: 'approve' | { decline: string }): Promise<EmulatedTransaction>;
  /**
   * A webhook notification as Braintree posts it: the form body with `bt_signature` (keyed with the
   * emulator's API keys, or `keys`) and `bt_payload` (the base64 XML of the subscription notification).
   * `timestamp: null` leaves the timestamp out, and `text` signs that text in place of the XML: signed,
   * yet of a shape Braintree does not send.
   */
  notification(
    kind: string,
    subscriptionId: string,
    options?: { timestamp?: Date | null; text?: string; keys?: { publicKey: string; privateKey: string } },
  ): string;
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

function wire(t: EmulatedTransaction, email: string | null = null) {
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
    customer: { id: t.customerId, email },
    creditCard: { token: t.paymentMethodToken, bin: '411111' },
    subscriptionId: t.subscriptionId,
    processorResponseCode: t.processorResponseCode,
    processorResponseText: declined ? 'Declined' : 'Approved',
    processorResponseType: t.processorResponseType,
    gatewayRejectionReason: t.gatewayRejectionReason,
    merchantAdviceCode: t.merchantAdviceCode,
    createdAt: t.createdAt,
  };
}

/** A 422 validation error on the transaction (or another object), as Braintree nests them. */
const validationError = (code: string, attribute: string, message: string, on = 'transaction') =>
  `<api-error-response><errors><errors type="array"/><${on}><errors type="array"><error><code>${code}</code>` +
  `<attribute type="symbol">${attribute}</attribute><message>${escape(message)}</message></error></errors>` +
  `</${on}></errors><message>${escape(message)}</message></api-error-response>`;

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
  const subscriptions = new Map<string, EmulatedSubscription>();
  let lagMs = 0;

  const emailOf = (t: EmulatedTransaction) => methods.get(t.paymentMethodToken)?.email ?? null;
  const subscriptionXml = (s: EmulatedSubscription) =>
    xml('subscription', {
      id: s.id,
      status: s.status,
      balance: s.balance,
      paymentMethodToken: s.paymentMethodToken,
      merchantAccountId: s.merchantAccountId,
      planId: 'monthly',
      transactions: s.transactions.map((t) => wire(t, emailOf(t))),
    });

  /** A charge of the subscription: listed first; a successful one pays its balance and makes it active. */
  function billed(s: EmulatedSubscription, t: EmulatedTransaction) {
    s.transactions.unshift(t);
    if (t.status !== 'submitted_for_settlement') return;
    s.status = 'Active';
    s.balance = decimals(t.currencyIsoCode) ? '0.00' : '0';
  }

  /** A transaction of the subscription's card made by Braintree itself (renewals and its own retries). */
  async function braintreeCharge(
    s: EmulatedSubscription,
    answer: 'approve' | { decline: string },
    createdAt?: Date,
  ): Promise<EmulatedTransaction> {
    const method = methods.get(s.paymentMethodToken);
    if (!method) throw new Error(`No payment method ${s.paymentMethodToken} in the emulator`);
    const transaction: EmulatedTransaction = {
      id: randomBytes(4).toString('hex'),
      amount: s.balance,
      currencyIsoCode: merchantAccounts[s.merchantAccountId] ?? 'USD',
      merchantAccountId: s.merchantAccountId,
      orderId: '',
      customerId: method.customerId,
      paymentMethodToken: s.paymentMethodToken,
      transactionSource: 'recurring',
      submitForSettlement: true,
      subscriptionId: s.id,
      createdAt: createdAt ?? (await clock()),
      ...outcome(answer),
    };
    transactions.push(transaction);
    return transaction;
  }

  function subscriptionRequest(method: string, id: string, body: Fields, res: ServerResponse) {
    const s = subscriptions.get(id);
    if (!s) return sendXml(res, 404, '<error/>');
    if (method === 'GET') return sendXml(res, 200, subscriptionXml(s));
    const token = text(field(body, 'subscription'), 'payment_method_token');
    if (s.status === 'Canceled')
      return sendXml(
        res,
        422,
        validationError('81901', 'status', 'Cannot edit a canceled subscription.', 'subscription'),
      );
    if (token && !methods.has(token))
      return sendXml(
        res,
        422,
        validationError('91903', 'payment_method_token', 'Payment method token is invalid.', 'subscription'),
      );
    if (token) s.paymentMethodToken = token;
    return sendXml(res, 200, subscriptionXml(s));
  }
  let failure: number | null = null;

  async function sale(body: Fields, res: ServerResponse) {
    const request = field(body, 'transaction');
    // A sale with a subscription id (the SDK's retryCharge) charges the past-due subscription's card.
    const subscriptionId = text(request, 'subscription_id');
    const subscription = subscriptionId ? subscriptions.get(subscriptionId) : undefined;
    if (subscriptionId && !subscription)
      return sendXml(res, 422, validationError('91903', 'subscription_id', 'Subscription ID is invalid.'));
    if (subscription && subscription.status !== 'Past Due')
      return sendXml(
        res,
        422,
        validationError(
          '91531',
          'subscription_id',
          'Subscription status must be Past Due in order to retry.',
        ),
      );
    const token = subscription?.paymentMethodToken ?? text(request, 'payment_method_token');
    const customerId = text(request, 'customer_id');
    const account = subscription?.merchantAccountId ?? text(request, 'merchant_account_id');
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
    if (typeof answer === 'object' && 'invalid' in answer) {
      const { code, attribute, message } = answer.invalid;
      return sendXml(res, 422, validationError(code, attribute, message));
    }
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
      subscriptionId: subscription?.id ?? null,
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
    if (subscription) billed(subscription, transaction);
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

  const { server, url } = await serveEmulator(async (req, res) => {
    if (failure !== null) return sendXml(res, failure, '<error/>');
    if (req.headers.authorization !== authorization) return sendXml(res, 401, '<error/>');
    const path = req.url ?? '';
    const prefix = `/merchants/${merchantId}/transactions`;
    const body = await readJson(req);
    if (req.method === 'POST' && path === prefix) return sale(body, res);
    if (req.method === 'POST' && path.startsWith(`${prefix}/advanced_search`)) return search(body, path, res);
    if (req.method === 'POST' && path.startsWith(`/merchants/${merchantId}/customers/advanced_search`))
      return customerSearch(body, path, res);
    const subscriptionPath = path.match(new RegExp(`^/merchants/${merchantId}/subscriptions/([^/?]+)$`));
    if (subscriptionPath && (req.method === 'GET' || req.method === 'PUT'))
      return subscriptionRequest(req.method, decodeURIComponent(subscriptionPath[1] ?? ''), body, res);
    const transactionPath = path.match(new RegExp(`^${prefix}/([^/?]+)$`));
    const found = transactionPath && transactions.find((t) => t.id === transactionPath[1]);
    if (req.method === 'GET' && found)
      return sendXml(res, 200, xml('transaction', wire(found, emailOf(found))));
    return sendXml(res, 404, '<error/>');
  });

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
    async addPastDueSubscription(id, s) {
      const subscription: EmulatedSubscription = {
        id,
        status: 'Past Due',
        balance: s.balance,
        paymentMethodToken: s.paymentMethodToken,
        merchantAccountId: s.merchantAccountId ?? 'acme_usd',
        transactions: [],
      };
      const now = (await clock()).getTime();
      const renewal = await braintreeCharge(subscription, { decline: s.decline }, new Date(now));
      const lastMonth = await braintreeCharge(subscription, 'approve', new Date(now - 30 * 86_400_000));
      subscription.transactions = [renewal, lastMonth];
      subscriptions.set(id, subscription);
      return subscription;
    },
    subscription: (id) => subscriptions.get(id),
    async retryOnBraintree(id, answer) {
      const subscription = subscriptions.get(id);
      if (!subscription) throw new Error(`No subscription ${id} in the emulator`);
      const transaction = await braintreeCharge(subscription, answer);
      billed(subscription, transaction);
      return transaction;
    },
    notification(kind, subscriptionId, options = {}) {
      const subscription = subscriptions.get(subscriptionId);
      const subject = subscription
        ? subscriptionXml(subscription)
        : // One the emulator does not hold (deleted since, in the test's story): its id and no charges.
          xml('subscription', { id: subscriptionId, status: 'Past Due', transactions: [] });
      const timestamp =
        options.timestamp === null
          ? ''
          : `<timestamp type="datetime">${(options.timestamp ?? new Date()).toISOString()}</timestamp>`;
      const body = `<notification>${timestamp}<kind>${kind}</kind><subject>${subject}</subject></notification>`;
      const payload = `${Buffer.from(options.text ?? body).toString('base64')}\n`;
      // Braintree's webhook signature: the public key, and an HMAC-SHA1 of the payload keyed with the SHA-1 of the private key.
      const keys = options.keys ?? { publicKey, privateKey };
      const key = createHash('sha1').update(keys.privateKey).digest();
      const digest = createHmac('sha1', key).update(payload).digest('hex');
      return new URLSearchParams({
        bt_signature: `${keys.publicKey}|${digest}`,
        bt_payload: payload,
      }).toString();
    },
    transactions: () => [...transactions],
    async addSale(token, orderId, answer) {
      const method = methods.get(token);
      if (!method) throw new Error(`No payment method ${token} in the emulator`);
      const transaction: EmulatedTransaction = {
        id: randomBytes(4).toString('hex'),
        amount: '19.99',
        currencyIsoCode: 'USD',
        merchantAccountId: 'acme_usd',
        orderId,
        customerId: method.customerId,
        paymentMethodToken: token,
        transactionSource: 'recurring',
        submitForSettlement: true,
        subscriptionId: null,
        createdAt: await clock(),
        ...outcome(answer),
      };
      transactions.push(transaction);
      return transaction;
    },
    addCustomer: (customer) => customers.push(customer),
    searchLag: (ms) => (lagMs = ms),
    failWith: (status) => (failure = status),
    close: () => closeServer(server),
  };
}

/** The status fields of a sale that answers `answer`. */
function outcome(
  answer: Exclude<EmulatedAnswer, 'lost' | 'server_error' | { invalid: unknown }> | { reject: 'duplicate' },
): Pick<
  EmulatedTransaction,
  | 'status'
  | 'processorResponseCode'
  | 'processorResponseType'
  | 'gatewayRejectionReason'
  | 'merchantAdviceCode'
> {
  const none = {
    processorResponseType: 'approved',
    gatewayRejectionReason: null,
    merchantAdviceCode: null,
  } as const;
  if (answer === 'approve')
    return { ...none, status: 'submitted_for_settlement', processorResponseCode: '1000' };
  if (answer === 'authorizing') return { ...none, status: 'authorizing', processorResponseCode: '' };
  if (answer === 'failed') return { ...none, status: 'failed', processorResponseCode: '3000' };
  if ('reject' in answer)
    return {
      ...none,
      status: 'gateway_rejected',
      processorResponseCode: '',
      gatewayRejectionReason: answer.reject,
    };
  return {
    status: 'processor_declined',
    processorResponseCode: answer.decline,
    processorResponseType: answer.hard ? 'hard_declined' : 'soft_declined',
    gatewayRejectionReason: null,
    merchantAdviceCode: answer.advice ?? null,
  };
}
