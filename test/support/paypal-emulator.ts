import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { closeServer, readForm, readJson, sendJson as send, serveEmulator } from './emulator-http.js';

/**
 * A local HTTPS emulator of the parts of PayPal the PayPal adapter uses, so the official SDK runs unchanged
 * against loopback: OAuth client credentials (`POST /v1/oauth2/token`), Orders v2 single-step orders paid
 * with a billing agreement (`POST /v2/checkout/orders`, with `PayPal-Request-Id` replays answering the
 * order at its latest state, and PayPal's duplicate-invoice block), and the NVP API's
 * `DoReferenceTransaction` (`POST /nvp`, with `MSGSUBID` replays and the same block, error 10412). Both
 * refuse a decimal amount in HUF, JPY or TWD, as PayPal does. A payment whose answer is `pending` completes
 * `settleAfterMs` after it was made.
 */
export type PayPalScript =
  /** Paid: the capture (or the reference transaction) is completed. */
  | 'complete'
  /** Taken, but pending (an eCheck): completed once settled. */
  | 'pending'
  /** Refused: an Orders v2 issue (`INSTRUMENT_DECLINED`) or an NVP error code (`10201`). */
  | { refuse: string }
  /** The order is made but its capture is refused (`DECLINED`) or fails (`FAILED`). */
  | { capture: 'DECLINED' | 'FAILED' }
  /** The payer must act (Orders v2 `PAYER_ACTION_REQUIRED`). */
  | 'payer_action'
  /** Paid, but the connection is cut before the answer. */
  | 'lost'
  /** 500 before anything is made (not kept under the request id). */
  | 'server_error';

export interface EmulatedPayPalPayment {
  id: string;
  orderId: string | null;
  via: 'billing-agreement' | 'reference';
  source: string;
  amount: string;
  currency: string;
  invoiceId: string;
  requestId: string;
  createdAt: Date;
  /** The capture's status when made; a `PENDING` one completes once settled. */
  status: 'COMPLETED' | 'PENDING' | 'DECLINED' | 'FAILED';
  storedCredential: unknown;
}

export interface PayPalEmulator {
  url: string;
  /** Credentials of a PayPal gateway pointed at the emulator (REST and NVP). */
  credentials: Record<string, string>;
  /** A billing agreement or reference id, and what payments against it answer in order (the last repeats). */
  addSource(id: string, answers: PayPalScript[]): void;
  payments(): EmulatedPayPalPayment[];
  /** How long after it was made a pending payment completes (default 0: at the next read). */
  settleAfter(ms: number): void;
  /** PayPal forgets the request ids and MSGSUBIDs it has seen (it keeps them 6 hours by default). */
  forgetRequestIds(): void;
  /** OAuth tokens issued so far. */
  tokensIssued(): number;
  close(): Promise<void>;
}

type Fields = Record<string, unknown>;
type Reply = () => Promise<{ status: number; body: unknown }>;
const fixed =
  (status: number, body: unknown): Reply =>
  () =>
    Promise.resolve({ status, body });

const unprocessable = (issue: string) => ({
  name: 'UNPROCESSABLE_ENTITY',
  message:
    'The requested action could not be performed, semantically incorrect, or failed business validation.',
  debug_id: randomBytes(6).toString('hex'),
  details: [{ issue, description: `Emulated ${issue}.` }],
  links: [],
});

/**
 * PayPal's "Currency codes" page: HUF, JPY and TWD do not support decimals ("If you pass a decimal amount,
 * an error occurs"); the others take two.
 */
const wholeUnitCurrencies: ReadonlySet<string> = new Set(['HUF', 'JPY', 'TWD']);

/** The issue PayPal refuses an amount's text with in `currency` (Orders v2), or null when it takes it. */
function amountIssue(value: string, currency: string): string | null {
  if (wholeUnitCurrencies.has(currency)) return /^\d+$/.test(value) ? null : 'DECIMALS_NOT_SUPPORTED';
  return /^\d+(\.\d{1,2})?$/.test(value) ? null : 'DECIMAL_PRECISION';
}

/** `clock`: what PayPal stamps payments with (a time-skipping test passes the server's time). */
export async function startPayPalEmulator(
  clock: () => Date | Promise<Date> = () => new Date(),
): Promise<PayPalEmulator> {
  const clientId = `client_${randomBytes(6).toString('hex')}`;
  const clientSecret = randomBytes(12).toString('hex');
  const nvp = { nvpUser: 'merchant_api1.example.com', nvpPassword: 'P4SSW0RD', nvpSignature: 'A1b2C3.sig' };
  const sources = new Map<string, { answers: PayPalScript[]; tries: number }>();
  const payments: EmulatedPayPalPayment[] = [];
  /** What a request id (Orders) or MSGSUBID (NVP) PayPal has seen answers now. */
  const replies = new Map<string, Reply>();
  const tokens = new Set<string>();
  let settleMs = 0;

  async function captureStatus(p: EmulatedPayPalPayment) {
    if (p.status !== 'PENDING') return p.status;
    return (await clock()).getTime() - p.createdAt.getTime() >= settleMs ? 'COMPLETED' : 'PENDING';
  }

  /** The order of a payment as Orders v2 shows it now. */
  async function orderOf(p: EmulatedPayPalPayment) {
    const status = await captureStatus(p);
    const amount = { currency_code: p.currency, value: p.amount };
    return {
      id: p.orderId,
      intent: 'CAPTURE',
      status: 'COMPLETED',
      payment_source: { paypal: { email_address: 'payer@example.com', account_id: 'PAYER123' } },
      purchase_units: [
        {
          reference_id: 'default',
          amount,
          invoice_id: p.invoiceId,
          payments: {
            captures: [
              {
                id: p.id,
                status,
                ...(status === 'PENDING' ? { status_details: { reason: 'ECHECK' } } : {}),
                amount,
                invoice_id: p.invoiceId,
                final_capture: true,
                create_time: p.createdAt.toISOString(),
              },
            ],
          },
        },
      ],
      create_time: p.createdAt.toISOString(),
    };
  }

  /** Takes the source's next answer; null when the source is unknown. */
  function nextAnswer(source: string): PayPalScript | null {
    const s = sources.get(source);
    if (!s) return null;
    const answer = s.answers[Math.min(s.tries, s.answers.length - 1)] ?? 'complete';
    s.tries += 1;
    return answer;
  }

  async function record(
    via: EmulatedPayPalPayment['via'],
    f: { source: string; amount: string; currency: string; invoiceId: string; requestId: string },
    answer: 'complete' | 'pending' | 'lost' | { capture: 'DECLINED' | 'FAILED' },
    storedCredential: unknown = null,
  ) {
    const p: EmulatedPayPalPayment = {
      ...f,
      id: randomBytes(8).toString('hex').toUpperCase().slice(0, 17),
      orderId: via === 'billing-agreement' ? randomBytes(8).toString('hex').toUpperCase().slice(0, 17) : null,
      via,
      createdAt: await clock(),
      status: typeof answer === 'object' ? answer.capture : answer === 'pending' ? 'PENDING' : 'COMPLETED',
      storedCredential,
    };
    payments.push(p);
    return p;
  }

  async function createOrder(req: IncomingMessage, res: ServerResponse) {
    const body = await readJson(req);
    const requestId = String(req.headers['paypal-request-id'] ?? '');
    if (!requestId) return send(res, 400, unprocessable('PAYPAL_REQUEST_ID_REQUIRED'));
    const replay = replies.get(`order:${requestId}`);
    if (replay) {
      const { status, body: answer } = await replay();
      return send(res, status === 201 ? 200 : status, answer);
    }
    const unit = ((body.purchase_units as Fields[] | undefined) ?? [])[0] ?? {};
    const amount = (unit.amount ?? {}) as Fields;
    const paypal = ((body.payment_source as Fields | undefined)?.paypal ?? {}) as Fields;
    const f = {
      source: String(paypal.billing_agreement_id),
      amount: String(amount.value),
      currency: String(amount.currency_code),
      invoiceId: String(unit.invoice_id),
      requestId,
    };
    const issue = amountIssue(f.amount, f.currency);
    if (issue) return send(res, 422, unprocessable(issue));
    const answer = nextAnswer(f.source);
    if (answer === null) return send(res, 422, unprocessable('BILLING_AGREEMENT_NOT_FOUND'));
    if (answer === 'server_error')
      return send(res, 500, { name: 'INTERNAL_SERVER_ERROR', message: 'An internal server error occurred.' });
    let reply: Reply;
    // PayPal's duplicate invoice-id block: a payment it took under the invoice id refuses another.
    if (payments.some((p) => p.invoiceId === f.invoiceId && p.status !== 'DECLINED')) {
      reply = fixed(422, unprocessable('DUPLICATE_INVOICE_ID'));
    } else if (typeof answer === 'object' && 'refuse' in answer) {
      reply = fixed(422, unprocessable(answer.refuse));
    } else if (answer === 'payer_action') {
      reply = fixed(200, {
        id: randomBytes(8).toString('hex').toUpperCase().slice(0, 17),
        status: 'PAYER_ACTION_REQUIRED',
      });
    } else {
      const p = await record('billing-agreement', f, answer, paypal.stored_credential);
      reply = async () => ({ status: 201, body: await orderOf(p) });
    }
    replies.set(`order:${requestId}`, reply);
    if (answer === 'lost') return res.socket?.destroy();
    const { status, body: first } = await reply();
    return send(res, status, first);
  }

  /** A reference transaction as the NVP API reports it now. */
  async function nvpFieldsOf(p: EmulatedPayPalPayment): Promise<Record<string, string>> {
    const status = await captureStatus(p);
    const nvpStatus = { COMPLETED: 'Completed', PENDING: 'Pending', DECLINED: 'Denied', FAILED: 'Failed' };
    return {
      ACK: 'Success',
      TRANSACTIONID: p.id,
      PAYMENTSTATUS: nvpStatus[status],
      ...(status === 'PENDING' ? { PENDINGREASON: 'echeck' } : {}),
      AMT: p.amount,
      CURRENCYCODE: p.currency,
      MSGSUBID: p.requestId,
    };
  }

  async function doReference(req: IncomingMessage, res: ServerResponse) {
    const f = await readForm(req);
    const answerWith = async (result: Reply) => {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(new URLSearchParams((await result()).body as Record<string, string>).toString());
    };
    const failure = (fields: Record<string, string>): Reply => fixed(200, { ACK: 'Failure', ...fields });
    if (
      f.get('USER') !== nvp.nvpUser ||
      f.get('PWD') !== nvp.nvpPassword ||
      f.get('SIGNATURE') !== nvp.nvpSignature
    )
      return answerWith(failure({ L_ERRORCODE0: '10002', L_SHORTMESSAGE0: 'Security error' }));
    if (f.get('METHOD') !== 'DoReferenceTransaction' || f.get('PAYMENTACTION') !== 'Sale')
      return answerWith(failure({ L_ERRORCODE0: '81002', L_SHORTMESSAGE0: 'Unspecified Method' }));
    const msgSubId = `nvp:${f.get('MSGSUBID') ?? ''}`;
    const earlier = replies.get(msgSubId);
    if (earlier) return answerWith(earlier);
    const [amount, currency, invoiceId] = [f.get('AMT') ?? '', f.get('CURRENCYCODE') ?? '', f.get('INVNUM')];
    // The NVP error for an amount PayPal does not take is modelled on its invalid-argument errors.
    if (amountIssue(amount, currency))
      return answerWith(
        failure({ L_ERRORCODE0: '10401', L_LONGMESSAGE0: `Order total is invalid (${amount} ${currency})` }),
      );
    const reference = String(f.get('REFERENCEID'));
    const answer = nextAnswer(reference);
    if (answer === 'server_error') {
      res.writeHead(500);
      return res.end('Internal Server Error');
    }
    let result: Reply;
    // PayPal's duplicate invoice-id block: a payment it took under the invoice id refuses another.
    if (payments.some((p) => p.invoiceId === invoiceId && p.status !== 'DECLINED'))
      result = failure({
        L_ERRORCODE0: '10412',
        L_SHORTMESSAGE0: 'Duplicate invoice',
        L_LONGMESSAGE0: 'Payment has already been made for this InvoiceID.',
      });
    else if (answer === null || answer === 'payer_action')
      result = failure({ L_ERRORCODE0: '10201', L_LONGMESSAGE0: 'Billing agreement was cancelled' });
    else if (typeof answer === 'object' && 'refuse' in answer)
      result = failure({ L_ERRORCODE0: answer.refuse });
    else {
      const p = await record(
        'reference',
        {
          source: reference,
          amount,
          currency,
          invoiceId: String(invoiceId),
          requestId: String(f.get('MSGSUBID')),
        },
        answer,
      );
      result = async () => ({ status: 200, body: await nvpFieldsOf(p) });
    }
    replies.set(msgSubId, result);
    if (answer === 'lost') return res.socket?.destroy();
    return answerWith(result);
  }

  async function issueToken(req: IncomingMessage, res: ServerResponse) {
    const basic = `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`;
    const form = await readForm(req);
    if (req.headers.authorization !== basic || form.get('grant_type') !== 'client_credentials')
      return send(res, 401, { error: 'invalid_client', error_description: 'Client Authentication failed' });
    const token = `A21AA${randomBytes(16).toString('hex')}`;
    tokens.add(token);
    return send(res, 200, {
      scope: 'https://uri.paypal.com/services/payments/payment',
      access_token: token,
      token_type: 'Bearer',
      app_id: 'APP-80W284485P519543T',
      expires_in: 32400,
      nonce: randomBytes(8).toString('hex'),
    });
  }

  const { server, url } = await serveEmulator(
    async (req, res) => {
      const path = new URL(req.url ?? '/', 'https://emulator').pathname;
      if (req.method === 'POST' && path === '/v1/oauth2/token') return issueToken(req, res);
      if (req.method === 'POST' && path === '/nvp') return doReference(req, res);
      const bearer = (req.headers.authorization ?? '').replace(/^Bearer /, '');
      if (!tokens.has(bearer))
        return send(res, 401, {
          error: 'invalid_token',
          error_description: 'Token signature verification failed',
        });
      if (req.method === 'POST' && path === '/v2/checkout/orders') return createOrder(req, res);
      return send(res, 404, {
        name: 'RESOURCE_NOT_FOUND',
        message: 'The specified resource does not exist.',
      });
    },
    { https: true },
  );

  return {
    url,
    credentials: { clientId, clientSecret, environment: 'sandbox', apiBase: url, ...nvp },
    addSource: (id, answers) => sources.set(id, { answers, tries: 0 }),
    payments: () => [...payments],
    settleAfter: (ms) => (settleMs = ms),
    forgetRequestIds: () => replies.clear(),
    tokensIssued: () => tokens.size,
    close: () => closeServer(server),
  };
}
