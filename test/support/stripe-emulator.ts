import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { closeServer, readForm, sendJson, serveEmulator } from './emulator-http.js';

/**
 * A local emulator of the part of Stripe's API the Stripe adapter uses (retrieve a PaymentMethod, create
 * and list PaymentIntents), with Stripe's idempotency (and its forgetting of keys a day later), its error
 * bodies, its list pagination, its refusal of currencies it does not support and its rules for amounts (ISK
 * in whole krónur written with two decimals), so the adapter's official SDK runs unchanged against
 * loopback. Each saved card answers from a script.
 */
export type EmulatedAnswer =
  | 'approve'
  /**
   * A card error: Stripe's `decline_code`, its error `code` (`card_declined` unless given), Mastercard's
   * merchant advice (`network_advice_code`), Stripe's advice (`advice_code`: `do_not_try_again`,
   * `try_again_later`, `confirm_card_data`) and the network's own decline code (`network_decline_code`).
   */
  | { decline: string; code?: string; advice?: string; adviceCode?: string; networkDecline?: string }
  /**
   * Stripe takes `slowMs` over the charge (an issuer slow to answer): the PaymentIntent appears, approved,
   * only then. Until then every request with its idempotency key loses its connection, as a client that
   * gives up waiting sees; afterwards they replay the result.
   */
  | { slowMs: number }
  /** The PaymentIntent is created, but every request with its idempotency key loses its connection. */
  | 'lost'
  /** 500 before anything is created, with `stripe-should-retry: false`, as Stripe's idempotency layer does. */
  | 'server_error'
  /** 400 naming the payment method: Stripe will not charge it off-session (e.g. used once without a customer). */
  | 'unusable'
  /** 400: the account's weekly payment volume limit is reached (Stripe's `charge_exceeds_weekly_limit`). */
  | 'volume_limit';

export interface EmulatedIntent {
  id: string;
  object: 'payment_intent';
  created: number;
  status: 'succeeded' | 'requires_payment_method' | 'processing';
  amount: number;
  currency: string;
  customer: string | null;
  payment_method: string;
  off_session: boolean;
  metadata: Record<string, string>;
  last_payment_error: Record<string, unknown> | null;
}

interface Card {
  customer: string | null;
  answers: EmulatedAnswer[];
  charges: number;
}

/** A Checkout session in setup mode, as the emulator holds it. */
export interface EmulatedSession {
  id: string;
  object: 'checkout.session';
  mode: string;
  status: 'open' | 'complete';
  url: string;
  currency: string | null;
  customer: string | null;
  success_url: string;
  cancel_url: string | null;
  metadata: Record<string, string>;
  setup_intent: Record<string, unknown> | null;
  /** Unix seconds: when Stripe closes the session (24 hours after it opened unless asked otherwise). */
  expires_at: number;
}

/** A Stripe Billing invoice, as the emulator holds it. */
export interface EmulatedInvoice {
  id: string;
  object: 'invoice';
  customer: string;
  customer_email: string | null;
  amount_due: number;
  amount_remaining: number;
  currency: string;
  status: 'open' | 'paid' | 'void';
  paid_out_of_band: boolean;
  /** The subscription's first invoice, or one of a later period. */
  billing_reason: 'subscription_create' | 'subscription_cycle';
  /** The subscription billed, on API versions from 2025-03-31. */
  parent?: {
    type: 'subscription_details';
    quote_details: null;
    subscription_details: { subscription: string; metadata: null };
  };
  /** Only on invoices of webhook endpoints pinned to API versions before 2025-03-31. */
  payment_intent?: string;
  /** Only on invoices of webhook endpoints pinned to API versions before 2025-03-31. */
  subscription?: string;
}

/**
 * A Stripe Billing subscription: `incomplete` while its first invoice is unpaid, `past_due` while a later
 * one is; paying the invoice makes it `active`.
 */
export interface EmulatedSubscription {
  id: string;
  object: 'subscription';
  customer: string;
  status: 'incomplete' | 'past_due' | 'active';
  latest_invoice: string;
}

export interface StripeEmulator {
  url: string;
  secretKey: string;
  /** Checkout sessions opened so far, oldest first. */
  sessions(): EmulatedSession[];
  /** The customer saves `card` in the session's form: it becomes a chargeable card of the session's customer. */
  completeCheckout(sessionId: string, card: { id: string; brand: string; last4: string }): void;
  /** A saved card: its customer and what its charges answer, in order (the last answer repeats). */
  addCard(id: string, card: { customer: string | null; answers: EmulatedAnswer[] }): void;
  /**
   * A customer, with `card` as the default payment method of its invoices (what renewals are charged to);
   * returns the customer's id.
   */
  addCustomer(input: {
    email: string | null;
    card?: { id: string; brand: string; last4: string; expMonth: number; expYear: number };
  }): string;
  /** An intent made outside Recoup (a list a lookup has to page through). */
  addIntent(intent: Partial<EmulatedIntent> & { customer: string | null }): void;
  intents(): EmulatedIntent[];
  /**
   * An open invoice of a subscription whose payment with `card` failed with `decline`: its PaymentIntent,
   * linked as an invoice payment (or, `legacy`, on the invoice's own `payment_intent` field). A renewal
   * (`subscription_cycle`, the default) leaves the subscription `past_due`; the first invoice of a new
   * subscription (`subscription_create`: the customer's payment at signup failed) leaves it `incomplete`.
   */
  addFailedInvoice(input: {
    customer: string;
    email: string | null;
    amount: number;
    currency: string;
    card: string;
    decline: string;
    legacy?: boolean;
    billingReason?: EmulatedInvoice['billing_reason'];
  }): { invoice: EmulatedInvoice; intent: EmulatedIntent; subscription: EmulatedSubscription };
  /** Stripe's own retry (or the customer) paid the invoice: its PaymentIntent succeeded. */
  payInvoiceAtStripe(invoiceId: string): EmulatedIntent;
  /**
   * The customer paid `amount` of the invoice at Stripe (a partial payment) with its card: it stays open.
   * Returns the payment's PaymentIntent, succeeded.
   */
  payPartOfInvoiceAtStripe(invoiceId: string, amount: number): EmulatedIntent;
  invoice(id: string): EmulatedInvoice | undefined;
  subscription(id: string): EmulatedSubscription | undefined;
  /** Idempotency keys of every invoice pay call (write-backs), in order, replays included. */
  invoicePays(): string[];
  /**
   * While on, an invoice pay call is carried out (or replayed under its idempotency key) but its answer is
   * lost: the connection drops before the reply.
   */
  loseInvoicePayAnswers(on: boolean): void;
  /** While on, subscription reads answer 403, as for a restricted key without Subscriptions read. */
  denySubscriptionReads(on: boolean): void;
  /**
   * Invoice pay calls (write-backs) answer 500 until `until` (epoch ms, the emulator's clock), and with
   * `reads`, invoice reads too; null ends the outage.
   */
  invoiceOutage(until: number | null, scope?: 'pay' | 'reads'): void;
  /** Idempotency keys of every PaymentIntent creation that reached the emulator, in order. */
  creations(): string[];
  /**
   * Forgets every idempotency key, as Stripe may once a key is 24 hours old: the same request is then a new
   * PaymentIntent.
   */
  forgetKeys(): void;
  close(): Promise<void>;
}

const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;

const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  sendJson(res, status, body, { 'request-id': newId('req'), ...headers });

const invalid = (message: string, code?: string) => ({
  error: { type: 'invalid_request_error', message, ...(code ? { code } : {}) },
});

/**
 * Stripe's 404 for a PaymentMethod this key cannot see. A `pm_live_…` token stands for one of the account's
 * live-mode objects read with its test key: Stripe then says so in the message.
 */
const noSuchMethod = (token: string) =>
  invalid(
    token.startsWith('pm_live_')
      ? `No such PaymentMethod: '${token}'; a similar object exists in live mode, but a test mode key was used to make this request.`
      : `No such PaymentMethod: '${token}'`,
    'resource_missing',
  );

/**
 * ISO 4217 currencies Stripe does not charge in: none of them is in the list its error names (modelled: a
 * few, of countries Stripe does not serve). Stripe answers a PaymentIntent in one as below (400, `param`
 * `currency`, no `code`), the list in the message cut short here.
 */
const unsupportedCurrencies: ReadonlySet<string> = new Set(['cup', 'irr', 'kpw', 'syp']);
const unsupportedCurrency = (currency: string) => ({
  error: {
    type: 'invalid_request_error',
    message: `Invalid currency: ${currency}. Stripe currently supports these currencies: usd, aed, afn, all, amd, ang, aoa, ars, aud, …`,
    param: 'currency',
  },
});

/**
 * Why Stripe refuses a PaymentIntent's `amount` in `currency`, by its "Supported currencies" page: ISK and
 * UGX are written with two decimals that must be 00 (5 ISK is 500), three-decimal currencies' last digit
 * must be 0 (5.124 KWD cannot be charged); null when Stripe takes it. (The error's wording is modelled.)
 */
function amountProblem(amount: number, currency: string): { message: string; code?: string } | null {
  if (!Number.isSafeInteger(amount) || amount < 1) return { message: 'Invalid positive integer' };
  // Stripe's minimum charge (USD: $0.50), as its "Minimum and maximum charge amounts" lists it.
  if (currency.toUpperCase() === 'USD' && amount < 50)
    return { message: 'Amount must be at least $0.50 usd', code: 'amount_too_small' };
  const code = currency.toUpperCase();
  if (['ISK', 'UGX'].includes(code) && amount % 100 !== 0)
    return { message: `Amounts in ${code} must be evenly divisible by 100 (no fractions of the currency).` };
  if (['BHD', 'JOD', 'KWD', 'OMR', 'TND'].includes(code) && amount % 10 !== 0)
    return { message: `Amounts in ${code} must end in 0: round to the nearest ten.` };
  return null;
}

/** `clock`: what Stripe stamps intents with (a time-skipping test passes the server's current time). */
export async function startStripeEmulator(
  clock: () => Date | Promise<Date> = () => new Date(),
): Promise<StripeEmulator> {
  const secretKey = `sk_test_${randomBytes(12).toString('hex')}`;
  const cards = new Map<string, Card>();
  const customers: Array<{ id: string; email: string | null; method: Record<string, unknown> | null }> = [];
  const intents: EmulatedIntent[] = [];
  const replies = new Map<string, { status: number; body: unknown } | 'lost'>();
  const creations: string[] = [];
  // Seconds, as Stripe stamps them; strictly increasing so the newest-first order is well defined.
  let last = 0;
  const created = async () => (last = Math.max(last + 1, Math.floor((await clock()).getTime() / 1000)));

  async function createIntent(
    form: URLSearchParams,
    key: string,
  ): Promise<{ status: number; body: unknown } | 'lost'> {
    const token = form.get('payment_method') ?? '';
    const card = cards.get(token);
    if (!card)
      return { status: 404, body: { error: { ...noSuchMethod(token).error, param: 'payment_method' } } };
    if (card.customer && form.get('customer') !== card.customer)
      return {
        status: 400,
        body: invalid(`The provided PaymentMethod is attached to customer ${card.customer}; pass it.`),
      };
    if (
      form.get('confirm') === 'true' &&
      !form.has('return_url') &&
      form.get('automatic_payment_methods[allow_redirects]') !== 'never'
    )
      return {
        status: 400,
        body: invalid('A return_url is required to confirm a PaymentIntent that may redirect.'),
      };
    if (unsupportedCurrencies.has(form.get('currency') ?? ''))
      return { status: 400, body: unsupportedCurrency(form.get('currency') ?? '') };
    const problem = amountProblem(Number(form.get('amount')), form.get('currency') ?? '');
    if (problem)
      return {
        status: 400,
        body: { error: { ...invalid(problem.message, problem.code).error, param: 'amount' } },
      };
    const answer = card.answers[Math.min(card.charges, card.answers.length - 1)] ?? 'approve';
    if (answer === 'server_error')
      return { status: 500, body: { error: { type: 'api_error', message: 'boom' } } };
    if (answer === 'volume_limit')
      return {
        status: 400,
        body: invalid('This payment would exceed your weekly volume limit.', 'charge_exceeds_weekly_limit'),
      };
    if (answer === 'unusable') {
      const refused = invalid('This PaymentMethod cannot be used again.').error;
      return { status: 400, body: { error: { ...refused, param: 'payment_method' } } };
    }
    card.charges += 1;
    const declined = typeof answer === 'object' && 'decline' in answer;
    const error = declined
      ? {
          type: 'card_error',
          code: answer.code ?? 'card_declined',
          decline_code: answer.decline,
          message: 'Your card was declined.',
          ...(answer.advice ? { network_advice_code: answer.advice } : {}),
          ...(answer.adviceCode ? { advice_code: answer.adviceCode } : {}),
          ...(answer.networkDecline ? { network_decline_code: answer.networkDecline } : {}),
        }
      : null;
    const metadata: Record<string, string> = {};
    for (const [name, value] of form) {
      const field = /^metadata\[(.+)\]$/.exec(name)?.[1];
      if (field) metadata[field] = value;
    }
    const slow = typeof answer === 'object' && 'slowMs' in answer ? answer.slowMs : null;
    const intent: EmulatedIntent = {
      id: newId('pi'),
      object: 'payment_intent',
      created: slow === null ? await created() : 0,
      status: declined ? 'requires_payment_method' : 'succeeded',
      amount: Number(form.get('amount')),
      currency: form.get('currency') ?? '',
      customer: form.get('customer'),
      payment_method: token,
      off_session: form.get('off_session') === 'true',
      metadata,
      last_payment_error: error,
    };
    if (slow !== null) {
      // Still processing: requests with the key meanwhile lose their connection (the caller stores 'lost').
      setTimeout(() => {
        void created().then((at) => {
          intent.created = at;
          intents.push(intent);
          replies.set(key, { status: 200, body: intent });
        });
      }, slow);
      return 'lost';
    }
    intents.push(intent);
    if (answer === 'lost') return 'lost';
    return error
      ? { status: 402, body: { error: { ...error, payment_intent: intent } } }
      : { status: 200, body: intent };
  }

  const sessions: EmulatedSession[] = [];
  let base = '';
  const invoices = new Map<string, EmulatedInvoice>();
  const subscriptions = new Map<string, EmulatedSubscription>();
  /** Paying a subscription's latest invoice, out of band too, makes it active (Stripe's subscription lifecycle). */
  const activateSubscriptionOf = (invoice: EmulatedInvoice) => {
    const id = invoice.parent?.subscription_details.subscription ?? invoice.subscription;
    const subscription = id ? subscriptions.get(id) : undefined;
    if (subscription?.latest_invoice === invoice.id) subscription.status = 'active';
  };
  const invoicePayments: Array<{
    id: string;
    invoice: string;
    intent: string;
    created: number;
    status: 'open' | 'paid';
  }> = [];
  const pays: string[] = [];
  // Stripe keeps the answer to a pay call under its idempotency key and replays it to every retry.
  const payReplies = new Map<string, { status: number; body: unknown }>();
  let losePayAnswers = false;
  let subscriptionReadsDenied = false;
  let outage: { until: number; reads: boolean } | null = null;

  function listInvoicePayments(query: URLSearchParams) {
    const invoice = query.get('invoice');
    const intent = query.get('payment[payment_intent]');
    const data = invoicePayments
      .filter((p) => (invoice === null || p.invoice === invoice) && (intent === null || p.intent === intent))
      .map((p) => ({
        id: p.id,
        object: 'invoice_payment',
        created: p.created,
        status: p.status,
        invoice: p.invoice,
        payment: { type: 'payment_intent', payment_intent: p.intent },
      }));
    return { object: 'list', url: '/v1/invoice_payments', data, has_more: false };
  }

  function payInvoice(id: string, form: URLSearchParams): { status: number; body: unknown } {
    const invoice = invoices.get(id);
    if (!invoice) return { status: 404, body: invalid(`No such invoice: '${id}'`, 'resource_missing') };
    if (invoice.status !== 'open')
      return { status: 400, body: invalid('Invoice is already paid', 'invoice_not_editable') };
    if (form.get('paid_out_of_band') !== 'true')
      return { status: 400, body: invalid('Only paying out of band is emulated.') };
    invoice.status = 'paid';
    invoice.paid_out_of_band = true;
    invoice.amount_remaining = 0;
    activateSubscriptionOf(invoice);
    return { status: 200, body: { ...invoice } };
  }

  function createSession(form: URLSearchParams): { status: number; body: unknown } {
    if (form.get('mode') !== 'setup') return { status: 400, body: invalid('Only setup mode is emulated.') };
    if (!form.get('currency'))
      return {
        status: 400,
        body: invalid('currency is required in setup mode with dynamic payment methods.'),
      };
    const metadata: Record<string, string> = {};
    for (const [key, value] of form) {
      const name = /^metadata\[(.+)\]$/.exec(key)?.[1];
      if (name) metadata[name] = value;
    }
    // Stripe takes an expiry from 30 minutes to 24 hours after the session is created.
    const nowS = Math.floor(Date.now() / 1000);
    const expiresAt = Number(form.get('expires_at') ?? nowS + 86_400);
    if (!Number.isInteger(expiresAt) || expiresAt < nowS + 1_800 || expiresAt > nowS + 86_400)
      return {
        status: 400,
        body: invalid('The `expires_at` timestamp must be between 30 minutes and 24 hours from now.'),
      };
    const id = newId('cs_test');
    const session: EmulatedSession = {
      id,
      object: 'checkout.session',
      mode: 'setup',
      status: 'open',
      url: `${base}/pay/${id}`,
      currency: form.get('currency'),
      customer: form.get('customer'),
      success_url: (form.get('success_url') ?? '').replace('{CHECKOUT_SESSION_ID}', id),
      cancel_url: form.get('cancel_url'),
      metadata,
      setup_intent: null,
      expires_at: expiresAt,
    };
    sessions.push(session);
    return { status: 200, body: session };
  }

  function listIntents(query: URLSearchParams) {
    const customer = query.get('customer');
    const since = Number(query.get('created[gte]') ?? 0);
    const limit = Number(query.get('limit') ?? 10);
    let matching = [...intents]
      .reverse()
      .filter((i) => i.created >= since && (customer === null || i.customer === customer));
    const after = query.get('starting_after');
    if (after) matching = matching.slice(matching.findIndex((i) => i.id === after) + 1);
    return {
      object: 'list',
      url: '/v1/payment_intents',
      data: matching.slice(0, limit),
      has_more: matching.length > limit,
    };
  }

  /** GET /v1/customers: oldest first here (Stripe lists newest first; only the cursor matters). */
  function listCustomers(query: URLSearchParams) {
    const limit = Number(query.get('limit') ?? 10);
    const after = query.get('starting_after');
    const expanded = [...query.entries()].some(
      ([k, v]) => /^expand\[\d*\]$/.test(k) && v === 'data.invoice_settings.default_payment_method',
    );
    const rest = after ? customers.slice(customers.findIndex((c) => c.id === after) + 1) : customers;
    return {
      object: 'list',
      url: '/v1/customers',
      data: rest.slice(0, limit).map((c) => ({
        id: c.id,
        object: 'customer',
        email: c.email,
        invoice_settings: {
          default_payment_method: c.method && (expanded ? c.method : c.method.id),
        },
      })),
      has_more: rest.length > limit,
    };
  }

  const { server, url } = await serveEmulator(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://emulator');
    if (req.headers.authorization !== `Bearer ${secretKey}`)
      return send(res, 401, invalid('Invalid API Key provided'));
    const method = /^\/v1\/payment_methods\/([^/]+)$/.exec(url.pathname);
    if (req.method === 'GET' && method) {
      const card = cards.get(decodeURIComponent(method[1]!));
      if (!card) return send(res, 404, noSuchMethod(decodeURIComponent(method[1]!)));
      return send(res, 200, {
        id: method[1],
        object: 'payment_method',
        type: 'card',
        customer: card.customer,
      });
    }
    const session = /^\/v1\/checkout\/sessions\/([^/]+)$/.exec(url.pathname);
    if (req.method === 'GET' && session) {
      const found = sessions.find((x) => x.id === decodeURIComponent(session[1]!));
      if (!found) return send(res, 404, invalid('No such checkout.session', 'resource_missing'));
      return send(res, 200, found);
    }
    if (req.method === 'POST' && url.pathname === '/v1/checkout/sessions') {
      const reply = createSession(await readForm(req));
      return send(res, reply.status, reply.body);
    }
    if (req.method === 'GET' && url.pathname === '/v1/payment_intents')
      return send(res, 200, listIntents(url.searchParams));
    if (req.method === 'GET' && url.pathname === '/v1/customers')
      return send(res, 200, listCustomers(url.searchParams));
    const intentPath = /^\/v1\/payment_intents\/([^/]+)$/.exec(url.pathname);
    if (req.method === 'GET' && intentPath) {
      const found = intents.find((i) => i.id === decodeURIComponent(intentPath[1]!));
      if (!found) return send(res, 404, invalid('No such payment_intent', 'resource_missing'));
      return send(res, 200, found);
    }
    if (req.method === 'GET' && url.pathname === '/v1/invoice_payments')
      return send(res, 200, listInvoicePayments(url.searchParams));
    const subscriptionPath = /^\/v1\/subscriptions\/([^/]+)$/.exec(url.pathname);
    if (req.method === 'GET' && subscriptionPath) {
      if (subscriptionReadsDenied)
        return send(
          res,
          403,
          invalid('The provided key does not have the required permissions for this endpoint.'),
        );
      const id = decodeURIComponent(subscriptionPath[1]!);
      const found = subscriptions.get(id);
      return found
        ? send(res, 200, found)
        : send(res, 404, invalid(`No such subscription: '${id}'`, 'resource_missing'));
    }
    const invoicePath = /^\/v1\/invoices\/([^/]+)(\/pay)?$/.exec(url.pathname);
    const down = outage && (invoicePath?.[2] || outage.reads) && (await clock()).getTime() < outage.until;
    if (invoicePath && down)
      return send(res, 500, { error: { type: 'api_error', message: 'Invoices are down' } });
    if (invoicePath) {
      const id = decodeURIComponent(invoicePath[1]!);
      if (req.method === 'POST' && invoicePath[2]) {
        const key = String(req.headers['idempotency-key'] ?? '');
        const form = await readForm(req);
        pays.push(key);
        const reply = payReplies.get(key) ?? payInvoice(id, form);
        if (key) payReplies.set(key, reply);
        if (losePayAnswers) return req.socket.destroy();
        return send(res, reply.status, reply.body);
      }
      const found = invoices.get(id);
      if (req.method === 'GET' && !invoicePath[2])
        return found
          ? send(res, 200, found)
          : send(res, 404, invalid(`No such invoice: '${id}'`, 'resource_missing'));
    }
    if (req.method === 'POST' && url.pathname === '/v1/payment_intents') {
      const key = String(req.headers['idempotency-key'] ?? '');
      const form = await readForm(req);
      if (key) creations.push(key);
      const replayed = replies.get(key);
      const reply = replayed ?? (await createIntent(form, key));
      // Stripe keeps the first answer to a key, a 500 too, and replays it to every retry, saying so.
      if (key && !replayed) replies.set(key, reply);
      if (reply === 'lost') return req.socket.destroy();
      return send(res, reply.status, reply.body, {
        ...(reply.status === 500 ? { 'stripe-should-retry': 'false' } : {}),
        ...(replayed ? { 'idempotent-replayed': 'true' } : {}),
      });
    }
    send(res, 404, invalid(`Unrecognized request URL (${req.method}: ${url.pathname})`));
  });
  base = url;

  return {
    url: base,
    secretKey,
    sessions: () => sessions.map((x) => ({ ...x })),
    completeCheckout(sessionId, card) {
      const session = sessions.find((x) => x.id === sessionId);
      if (!session) throw new Error(`No checkout session ${sessionId}`);
      cards.set(card.id, { customer: session.customer, answers: ['approve'], charges: 0 });
      session.status = 'complete';
      // Retrieved with `expand: ['setup_intent.payment_method']`, as the adapter asks.
      session.setup_intent = {
        id: newId('seti'),
        object: 'setup_intent',
        status: 'succeeded',
        payment_method: {
          id: card.id,
          object: 'payment_method',
          type: 'card',
          customer: session.customer,
          card: { brand: card.brand, last4: card.last4 },
        },
      };
    },
    addCard: (id, card) => void cards.set(id, { ...card, charges: 0 }),
    addCustomer({ email, card }) {
      const id = newId('cus');
      if (card) cards.set(card.id, { customer: id, answers: ['approve'], charges: 0 });
      const method = card
        ? {
            id: card.id,
            object: 'payment_method',
            type: 'card',
            customer: id,
            card: { brand: card.brand, last4: card.last4, exp_month: card.expMonth, exp_year: card.expYear },
          }
        : null;
      customers.push({ id, email, method });
      return id;
    },
    addIntent: (partial) =>
      void intents.push({
        id: newId('pi'),
        object: 'payment_intent',
        // Made after every intent so far, as a merchant's later payments are.
        created: (last += 1),
        status: 'succeeded',
        amount: 100,
        currency: 'usd',
        payment_method: newId('pm'),
        off_session: true,
        metadata: {},
        last_payment_error: null,
        ...partial,
      }),
    intents: () => intents.map((i) => ({ ...i })),
    addFailedInvoice(input) {
      const id = newId('in');
      const intent: EmulatedIntent = {
        id: newId('pi'),
        object: 'payment_intent',
        created: (last += 1),
        status: 'requires_payment_method',
        amount: input.amount,
        currency: input.currency,
        customer: input.customer,
        payment_method: input.card,
        off_session: true,
        metadata: {},
        last_payment_error: {
          type: 'card_error',
          code: 'card_declined',
          decline_code: input.decline,
          payment_method: { id: input.card, object: 'payment_method', card: { country: 'DE' } },
        },
      };
      intents.push(intent);
      const billingReason = input.billingReason ?? 'subscription_cycle';
      const subscription: EmulatedSubscription = {
        id: newId('sub'),
        object: 'subscription',
        customer: input.customer,
        status: billingReason === 'subscription_create' ? 'incomplete' : 'past_due',
        latest_invoice: id,
      };
      subscriptions.set(subscription.id, subscription);
      const invoice: EmulatedInvoice = {
        id,
        object: 'invoice',
        customer: input.customer,
        customer_email: input.email,
        amount_due: input.amount,
        amount_remaining: input.amount,
        currency: input.currency,
        status: 'open',
        paid_out_of_band: false,
        billing_reason: billingReason,
        ...(input.legacy
          ? { payment_intent: intent.id, subscription: subscription.id }
          : {
              parent: {
                type: 'subscription_details',
                quote_details: null,
                subscription_details: { subscription: subscription.id, metadata: null },
              },
            }),
      };
      invoices.set(id, invoice);
      if (!input.legacy)
        invoicePayments.push({
          id: newId('inpay'),
          invoice: id,
          intent: intent.id,
          created: intent.created,
          status: 'open',
        });
      return { invoice: { ...invoice }, intent: { ...intent }, subscription: { ...subscription } };
    },
    payInvoiceAtStripe(invoiceId) {
      const invoice = invoices.get(invoiceId);
      const link = invoicePayments.find((p) => p.invoice === invoiceId);
      const intent = intents.find((i) => i.id === (link?.intent ?? invoice?.payment_intent));
      if (!invoice || !intent) throw new Error(`No failed payment of invoice ${invoiceId}`);
      intent.status = 'succeeded';
      intent.last_payment_error = null;
      if (link) link.status = 'paid';
      invoice.status = 'paid';
      invoice.amount_remaining = 0;
      activateSubscriptionOf(invoice);
      return { ...intent };
    },
    payPartOfInvoiceAtStripe(invoiceId, amount) {
      const invoice = invoices.get(invoiceId);
      if (!invoice || invoice.status !== 'open' || amount >= invoice.amount_remaining)
        throw new Error(`Invoice ${invoiceId} has not more than ${amount} left to pay`);
      invoice.amount_remaining -= amount;
      const first = intents.find(
        (i) => i.id === invoicePayments.find((p) => p.invoice === invoiceId)?.intent,
      );
      const intent: EmulatedIntent = {
        id: newId('pi'),
        object: 'payment_intent',
        created: (last += 1),
        status: 'succeeded',
        amount,
        currency: invoice.currency,
        customer: invoice.customer,
        payment_method: first?.payment_method ?? '',
        off_session: false,
        metadata: {},
        last_payment_error: null,
      };
      intents.push(intent);
      invoicePayments.push({
        id: newId('inpay'),
        invoice: invoiceId,
        intent: intent.id,
        created: intent.created,
        status: 'paid',
      });
      return { ...intent };
    },
    invoice: (id) => {
      const found = invoices.get(id);
      return found ? { ...found } : undefined;
    },
    subscription: (id) => {
      const found = subscriptions.get(id);
      return found ? { ...found } : undefined;
    },
    invoicePays: () => [...pays],
    loseInvoicePayAnswers: (on) => void (losePayAnswers = on),
    denySubscriptionReads: (on) => void (subscriptionReadsDenied = on),
    invoiceOutage: (until, scope = 'pay') =>
      void (outage = until === null ? null : { until, reads: scope === 'reads' }),
    creations: () => [...creations],
    forgetKeys: () => replies.clear(),
    close: () => closeServer(server),
  };
}
