import { randomBytes } from 'node:crypto';
import { closeServer, readText, sendJson as send, serveEmulator } from './emulator-http.js';

/**
 * A local emulator of the part of Zuora's REST API the Zuora connector calls: an OAuth token (client
 * credentials), a payment method (CRUD), an invoice and its application parts, creating and reading a payment. It checks the bearer token and
 * answers failures with Zuora's error body (`{ success: false, reasons: [{ code, message }] }`), as Zuora
 * does with HTTP 200 for a payment it refuses (an External payment that names no payment method type).
 * An invoice reads as `GET /v1/invoices/{id}` gives it: its `amount` and `balance`, and what settled the
 * difference, `paymentAmount` (payments applied), `refundAmount` (of those, refunded), `creditMemoAmount`
 * (credit memos applied), `adjustmentAmount` and `creditBalanceAdjustmentAmount`.
 */
export interface ZuoraEmulator {
  url: string;
  clientId: string;
  clientSecret: string;
  /** A payment method whose gateway tokens are `tokenId` / `secondTokenId`; returns its id. */
  addPaymentMethod(tokenId: string, secondTokenId: string | null): string;
  /** A posted invoice of `accountId` with `balance` (major units, USD) outstanding; returns its id. */
  addInvoice(accountId: string, balance: number, status?: string): string;
  /**
   * A payment of `amount` (major units) applied to the invoice in Zuora (the customer paying it there);
   * returns its id, which the Payment Processed callout names.
   */
  payInvoiceInZuora(invoiceId: string, amount: number): string;
  /**
   * A credit memo of `amount` (major units) applied to the invoice in Zuora (the merchant writing it off):
   * its balance falls as a payment's would, but no payment is applied and no callout is sent.
   */
  creditInvoiceInZuora(invoiceId: string, amount: number): void;
  /** Zuora forgets every bearer token issued so far (revoked, or expired early): each then answers 401. */
  revokeTokens(): void;
  /** How many OAuth tokens the emulator has issued. */
  tokensIssued(): number;
  /** While on, invoice reads answer 503 with Zuora's error body. */
  invoiceOutage(on: boolean): void;
  /** While on, a `POST /v1/payments` is carried out but its answer is lost: the connection drops. */
  losePaymentAnswers(on: boolean): void;
  /** Every `POST /v1/payments` that reached the emulator, with its idempotency key. */
  payments(): { idempotencyKey: string | null; body: Record<string, unknown> }[];
  close(): Promise<void>;
}

const newId = () => randomBytes(16).toString('hex');

/**
 * The payment method types Zuora classifies as usable for an external payment ("Define payment methods";
 * each is a system payment method the tenant enables under Settings > Payments > Payment Method).
 */
const externalTypes = new Set([
  'ACH',
  'BankTransfer',
  'Cash',
  'Check',
  'CreditCard',
  'CreditCardReferenceTransaction',
  'DebitCard',
  'PayPal',
  'WireTransfer',
]);

/**
 * Why Zuora refuses to create an External payment, or null. Zuora's "Create a payment": without
 * `paymentMethodId` the account's default payment method is used, and one of another kind than the payment
 * is an error; `paymentMethodType` is to be specified for an external payment. Every account here pays by
 * an electronic card reference transaction by default. (The error's wording is modelled.)
 */
function externalPaymentProblem(payment: Record<string, unknown>): string | null {
  if (payment.type !== 'External' || typeof payment.paymentMethodId === 'string') return null;
  const type = payment.paymentMethodType;
  if (type === undefined)
    return "The account's default payment method is electronic and cannot be used for an External payment: specify paymentMethodType or paymentMethodId";
  return typeof type === 'string' && externalTypes.has(type)
    ? null
    : `Invalid value for paymentMethodType: ${JSON.stringify(type)}`;
}

const failure = (code: number, message: string) => ({
  success: false,
  processId: randomBytes(8).toString('hex').toUpperCase(),
  reasons: [{ code, message }],
});

export async function startZuoraEmulator(): Promise<ZuoraEmulator> {
  const clientId = newId();
  const clientSecret = newId();
  const issued = new Set<string>();
  let tokenCount = 0;
  const methods = new Map<string, { TokenId: string; SecondTokenId: string | null }>();
  const invoices = new Map<
    string,
    {
      accountId: string;
      amount: number;
      balance: number;
      paymentAmount: number;
      refundAmount: number;
      creditMemoAmount: number;
      adjustmentAmount: number;
      creditBalanceAdjustmentAmount: number;
      status: string;
      currency: string;
    }
  >();
  const created: { idempotencyKey: string | null; body: Record<string, unknown> }[] = [];
  let invoicesDown = false;
  let losePayments = false;
  const payments = new Map<string, { type: string; referenceId: string | null; amount: number }>();
  // The payments and credit memos applied to each invoice, as `GET /v1/invoices/{id}/application-parts`
  // lists them (each part names one or the other).
  const parts = new Map<
    string,
    (({ paymentId: string } | { creditMemoId: string }) & { appliedAmount: number })[]
  >();
  const cents = (major: number) => Math.round(major * 100) / 100;

  /** Applies a new payment to invoices; the error body when one of them is unknown. */
  function applyPayment(
    payment: { type: string; referenceId: string | null },
    applied: { invoiceId: string; amount: number }[],
  ): { id: string } | { error: unknown } {
    if (applied.some(({ invoiceId }) => !invoices.has(invoiceId)))
      return { error: failure(53000040, 'Invalid invoice') };
    const id = newId();
    payments.set(id, { ...payment, amount: applied.reduce((sum, a) => sum + a.amount, 0) });
    for (const { invoiceId, amount } of applied) {
      const invoice = invoices.get(invoiceId)!;
      invoice.balance = cents(invoice.balance - amount);
      invoice.paymentAmount = cents(invoice.paymentAmount + amount);
      parts.set(invoiceId, [...(parts.get(invoiceId) ?? []), { paymentId: id, appliedAmount: amount }]);
    }
    return { id };
  }

  function route(method: string, path: string, body: string, idempotencyKey: string | null) {
    const pm = /^\/v1\/object\/payment-method\/([^/]+)$/.exec(path);
    if (method === 'GET' && pm) {
      const found = methods.get(decodeURIComponent(pm[1]!));
      return found
        ? { status: 200, body: { Id: pm[1], Type: 'CreditCardReferenceTransaction', ...found } }
        : { status: 404, body: failure(50000040, 'Cannot find entity by key') };
    }
    const inv = /^\/v1\/invoices\/([^/]+)$/.exec(path);
    if (method === 'GET' && inv && invoicesDown)
      return { status: 503, body: failure(50000000, 'Service unavailable, try again later') };
    if (method === 'GET' && inv) {
      const id = decodeURIComponent(inv[1]!);
      const found = invoices.get(id);
      return found
        ? { status: 200, body: { success: true, id, ...found } }
        : { status: 404, body: failure(50000040, `Cannot find entity by key: '${id}'.`) };
    }
    const applications = /^\/v1\/invoices\/([^/]+)\/application-parts$/.exec(path);
    if (method === 'GET' && applications) {
      const id = decodeURIComponent(applications[1]!);
      if (!invoices.has(id))
        return { status: 404, body: failure(50000040, `Cannot find entity by key: '${id}'.`) };
      return { status: 200, body: { success: true, applicationParts: parts.get(id) ?? [] } };
    }
    const paymentPath = /^\/v1\/payments\/([^/]+)$/.exec(path);
    if (method === 'GET' && paymentPath) {
      const id = decodeURIComponent(paymentPath[1]!);
      const found = payments.get(id);
      return found
        ? { status: 200, body: { success: true, id, status: 'Processed', ...found } }
        : { status: 404, body: failure(50000040, `Cannot find entity by key: '${id}'.`) };
    }
    if (method === 'POST' && path === '/v1/payments') {
      const payment = JSON.parse(body) as Record<string, unknown>;
      created.push({ idempotencyKey, body: payment });
      const problem = externalPaymentProblem(payment);
      // Zuora answers some errors with HTTP 200 and `success: false`.
      if (problem) return { status: 200, body: failure(53100020, problem) };
      const applied = (payment.invoices as { invoiceId: string; amount: string }[] | undefined) ?? [];
      const result = applyPayment(
        { type: String(payment.type), referenceId: (payment.referenceId as string | undefined) ?? null },
        applied.map(({ invoiceId, amount }) => ({ invoiceId, amount: Number(amount) })),
      );
      if ('error' in result) return { status: 200, body: result.error };
      return { status: 200, body: { success: true, id: result.id, status: 'Processed', ...payment } };
    }
    return { status: 404, body: failure(50000040, `No route ${method} ${path}`) };
  }

  const { server, url } = await serveEmulator(async (req, res) => {
    const body = await readText(req);
    const path = new URL(req.url ?? '/', 'http://emulator').pathname;
    if (req.method === 'POST' && path === '/oauth/token') {
      const form = new URLSearchParams(body);
      const ok =
        form.get('grant_type') === 'client_credentials' &&
        form.get('client_id') === clientId &&
        form.get('client_secret') === clientSecret;
      if (!ok) return send(res, 401, { error: 'invalid_client', message: 'Invalid client credentials' });
      const token = newId();
      issued.add(token);
      tokenCount += 1;
      return send(res, 200, { access_token: token, token_type: 'bearer', expires_in: 3599, scope: '' });
    }
    const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (!token || !issued.has(token)) return send(res, 401, failure(90000011, 'Authentication error'));
    const key = req.headers['idempotency-key'];
    const reply = route(req.method ?? 'GET', path, body, typeof key === 'string' ? key : null);
    if (losePayments && req.method === 'POST' && path === '/v1/payments') return req.socket.destroy();
    send(res, reply.status, reply.body);
  });

  return {
    url,
    clientId,
    clientSecret,
    addPaymentMethod(tokenId, secondTokenId) {
      const id = newId();
      methods.set(id, { TokenId: tokenId, SecondTokenId: secondTokenId });
      return id;
    },
    addInvoice(accountId, balance, status = 'Posted') {
      const id = newId();
      invoices.set(id, {
        accountId,
        amount: balance,
        balance,
        paymentAmount: 0,
        refundAmount: 0,
        creditMemoAmount: 0,
        adjustmentAmount: 0,
        creditBalanceAdjustmentAmount: 0,
        status,
        currency: 'USD',
      });
      return id;
    },
    payInvoiceInZuora(invoiceId, amount) {
      const result = applyPayment({ type: 'Electronic', referenceId: `ch_${newId()}` }, [
        { invoiceId, amount },
      ]);
      if ('error' in result) throw new Error(`No invoice ${invoiceId}`);
      return result.id;
    },
    creditInvoiceInZuora(invoiceId, amount) {
      const invoice = invoices.get(invoiceId);
      if (!invoice) throw new Error(`No invoice ${invoiceId}`);
      invoice.balance = cents(invoice.balance - amount);
      invoice.creditMemoAmount = cents(invoice.creditMemoAmount + amount);
      parts.set(invoiceId, [
        ...(parts.get(invoiceId) ?? []),
        { creditMemoId: newId(), appliedAmount: amount },
      ]);
    },
    revokeTokens: () => issued.clear(),
    tokensIssued: () => tokenCount,
    losePaymentAnswers: (on) => void (losePayments = on),
    invoiceOutage: (on) => void (invoicesDown = on),
    payments: () => [...created],
    close: () => closeServer(server),
  };
}
