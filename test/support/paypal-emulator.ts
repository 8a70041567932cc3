import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { closeServer, readForm, readJson, sendJson as send, serveEmulator } from './emulator-http.js';

/**
 * A local HTTPS emulator of the parts of PayPal the PayPal adapter uses, so the official SDK runs unchanged
 * against loopback: OAuth client credentials (`POST /v1/oauth2/token`), Orders v2 single-step orders paid
 * with a billing agreement (`POST /v2/checkout/orders`, with `PayPal-Request-Id` replays answering the
 * order at its latest state, and PayPal's duplicate-invoice block), Payments v2 captures read by id
 * (`GET /v2/payments/captures/{id}`), and the NVP API's `DoReferenceTransaction` (`POST /nvp`, with
 * `MSGSUBID` replays answered by error 11607 and the original result's fields, and the same block, error
 * 10412) and `GetTransactionDetails`. Request ids and `MSGSUBID`s are forgotten 6 hours (of the emulator's
 * clock) after their first request, as PayPal does by default. Both refuse a decimal amount in HUF, JPY or
 * TWD, as PayPal does. A payment whose answer is `pending` completes `settleAfterMs` after it was made.
 */
export type PayPalScript =
  /** Paid: the capture (or the reference transaction) is completed. */
  | 'complete'
  /** Taken, but pending (an eCheck): completed once settled. */
  | 'pending'
  /** Refused: an Orders v2 issue (`INSTRUMENT_DECLINED`) or an NVP error code (`10201`). */
  | { refuse: string }
  /**
   * The order is made but its capture is refused (`DECLINED`) or fails (`FAILED`); a declined one may carry
   * the processor's response code and payment advice code (`processor_response`, a card-funded payment).
   */
  | { capture: 'DECLINED' | 'FAILED'; responseCode?: string; adviceCode?: string }
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
  /** A declined capture's `processor_response`, as PayPal writes it. */
  processorResponse: { response_code: string; payment_advice_code?: string } | null;
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

/** How long PayPal keeps a request id (Orders v2 `PayPal-Request-Id`; here also NVP's `MSGSUBID`) by default. */
const requestIdRetentionMs = 6 * 3_600_000;

/**
 * `clock`: what PayPal stamps payments with and forgets request ids by (a time-skipping test passes the
 * server's time).
 */
export async function startPayPalEmulator(
  clock: () => Date | Promise<Date> = () => new Date(),
): Promise<PayPalEmulator> {
  const clientId = `client_${randomBytes(6).toString('hex')}`;
  const clientSecret = randomBytes(12).toString('hex');
  const nvp = { nvpUser: 'merchant_api1.example.com', nvpPassword: 'P4SSW0RD', nvpSignature: 'A1b2C3.sig' };
  const sources = new Map<string, { answers: PayPalScript[]; tries: number }>();
  const payments: EmulatedPayPalPayment[] = [];
  /** What a request id (Orders) or MSGSUBID (NVP) PayPal has seen answers now, and when it was first sent. */
  const replies = new Map<string, { reply: Reply; at: Date }>();
  const tokens = new Set<string>();
  let settleMs = 0;

  /** The answer PayPal keeps for a request id, while it keeps it. */
  async function replyFor(key: string): Promise<Reply | null> {
    const kept = replies.get(key);
    if (!kept) return null;
    return (await clock()).getTime() - kept.at.getTime() < requestIdRetentionMs ? kept.reply : null;
  }

  /** Keeps the answer to a new request id. */
  async function keep(key: string, reply: Reply): Promise<void> {
    replies.set(key, { reply, at: await clock() });
  }

  async function captureStatus(p: EmulatedPayPalPayment) {
    if (p.status !== 'PENDING') return p.status;
    return (await clock()).getTime() - p.createdAt.getTime() >= settleMs ? 'COMPLETED' : 'PENDING';
  }

  /** A payment's capture as Orders v2 and Payments v2 show it now. */
  async function captureOf(p: EmulatedPayPalPayment) {
    const status = await captureStatus(p);
    return {
      id: p.id,
      status,
      ...(status === 'PENDING' ? { status_details: { reason: 'ECHECK' } } : {}),
      amount: { currency_code: p.currency, value: p.amount },
      invoice_id: p.invoiceId,
      final_capture: true,
      ...(p.processorResponse ? { processor_response: p.processorResponse } : {}),
      create_time: p.createdAt.toISOString(),
      update_time: p.createdAt.toISOString(),
    };
  }

  /** The order of a payment as Orders v2 shows it now. */
  async function orderOf(p: EmulatedPayPalPayment) {
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
          payments: { captures: [await captureOf(p)] },
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
    answer: 'complete' | 'pending' | 'lost' | Extract<PayPalScript, { capture: string }>,
    storedCredential: unknown = null,
  ) {
    const p: EmulatedPayPalPayment = {
      ...f,
      id: randomBytes(8).toString('hex').toUpperCase().slice(0, 17),
      orderId: via === 'billing-agreement' ? randomBytes(8).toString('hex').toUpperCase().slice(0, 17) : null,
      via,
      createdAt: await clock(),
      status: typeof answer === 'object' ? answer.capture : answer === 'pending' ? 'PENDING' : 'COMPLETED',
      processorResponse:
        typeof answer === 'object' && answer.responseCode
          ? {
              response_code: answer.responseCode,
              ...(answer.adviceCode ? { payment_advice_code: answer.adviceCode } : {}),
            }
          : null,
      storedCredential,
    };
    payments.push(p);
    return p;
  }

  async function createOrder(req: IncomingMessage, res: ServerResponse) {
    const body = await readJson(req);
    const requestId = String(req.headers['paypal-request-id'] ?? '');
    if (!requestId) return send(res, 400, unprocessable('PAYPAL_REQUEST_ID_REQUIRED'));
    const replay = await replyFor(`order:${requestId}`);
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
    await keep(`order:${requestId}`, reply);
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
      TRANSACTIONTYPE: 'merchtpmt',
      PAYMENTTYPE: status === 'PENDING' ? 'echeck' : 'instant',
      PAYMENTSTATUS: nvpStatus[status],
      PENDINGREASON: status === 'PENDING' ? 'echeck' : 'None',
      AMT: p.amount,
      CURRENCYCODE: p.currency,
    };
  }

  /** An NVP answer: the fields, form-encoded. */
  function answerNvp(res: ServerResponse, fields: Record<string, string>) {
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
    res.end(new URLSearchParams(fields).toString());
  }
  const failure = (fields: Record<string, string>) => ({
    ACK: 'Failure',
    L_SEVERITYCODE0: 'Error',
    ...fields,
  });

  async function nvpRequest(req: IncomingMessage, res: ServerResponse) {
    const f = await readForm(req);
    if (
      f.get('USER') !== nvp.nvpUser ||
      f.get('PWD') !== nvp.nvpPassword ||
      f.get('SIGNATURE') !== nvp.nvpSignature
    )
      return answerNvp(res, failure({ L_ERRORCODE0: '10002', L_SHORTMESSAGE0: 'Security error' }));
    if (f.get('METHOD') === 'GetTransactionDetails') return transactionDetails(res, f);
    if (f.get('METHOD') === 'DoReferenceTransaction' && f.get('PAYMENTACTION') === 'Sale')
      return doReference(res, f);
    return answerNvp(res, failure({ L_ERRORCODE0: '81002', L_SHORTMESSAGE0: 'Unspecified Method' }));
  }

  /** `GetTransactionDetails`: a reference transaction as it stands now, by its `TRANSACTIONID`. */
  async function transactionDetails(res: ServerResponse, f: URLSearchParams) {
    const p = payments.find((x) => x.via === 'reference' && x.id === f.get('TRANSACTIONID'));
    if (!p)
      return answerNvp(
        res,
        failure({
          L_ERRORCODE0: '10004',
          L_SHORTMESSAGE0: 'Invalid transaction ID value',
          L_LONGMESSAGE0: 'The transaction id is not valid',
        }),
      );
    return answerNvp(res, {
      ...(await nvpFieldsOf(p)),
      INVNUM: p.invoiceId,
      ORDERTIME: p.createdAt.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    });
  }

  async function doReference(res: ServerResponse, f: URLSearchParams) {
    const msgSubId = `nvp:${f.get('MSGSUBID') ?? ''}`;
    const earlier = await replyFor(msgSubId);
    if (earlier) return answerNvp(res, (await earlier()).body as Record<string, string>);
    const [amount, currency, invoiceId] = [f.get('AMT') ?? '', f.get('CURRENCYCODE') ?? '', f.get('INVNUM')];
    // The NVP error for an amount PayPal does not take is modelled on its invalid-argument errors.
    if (amountIssue(amount, currency))
      return answerNvp(
        res,
        failure({ L_ERRORCODE0: '10401', L_LONGMESSAGE0: `Order total is invalid (${amount} ${currency})` }),
      );
    const reference = String(f.get('REFERENCEID'));
    const answer = nextAnswer(reference);
    if (answer === 'server_error') {
      res.writeHead(500);
      return res.end('Internal Server Error');
    }
    let result: Record<string, string>;
    /** What the same MSGSUBID answers later: the same failure, or error 11607 with the payment's fields. */
    let replay: Record<string, string>;
    // PayPal's duplicate invoice-id block: a payment it took under the invoice id refuses another.
    if (payments.some((p) => p.invoiceId === invoiceId && p.status !== 'DECLINED'))
      result = replay = failure({
        L_ERRORCODE0: '10412',
        L_SHORTMESSAGE0: 'Duplicate invoice',
        L_LONGMESSAGE0: 'Payment has already been made for this InvoiceID.',
      });
    else if (answer === null || answer === 'payer_action')
      result = replay = failure({ L_ERRORCODE0: '10201', L_LONGMESSAGE0: 'Billing agreement was cancelled' });
    else if (typeof answer === 'object' && 'refuse' in answer)
      result = replay = failure({ L_ERRORCODE0: answer.refuse });
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
      result = { ...(await nvpFieldsOf(p)), MSGSUBID: p.requestId };
      // PayPal's documented answer to a duplicate request: error 11607 with the original result's fields.
      replay = {
        ...result,
        ...failure({
          L_ERRORCODE0: '11607',
          L_SHORTMESSAGE0: 'Duplicate Request',
          L_LONGMESSAGE0: 'A successful transaction has already been completed for this token.',
        }),
      };
    }
    await keep(msgSubId, fixed(200, replay));
    if (answer === 'lost') return res.socket?.destroy();
    return answerNvp(res, result);
  }

  /** Payments v2: a billing agreement's capture as it stands now, by its id. */
  async function showCapture(res: ServerResponse, id: string) {
    const p = payments.find((x) => x.via === 'billing-agreement' && x.id === id);
    if (!p)
      return send(res, 404, {
        name: 'RESOURCE_NOT_FOUND',
        message: 'The specified resource does not exist.',
        debug_id: randomBytes(6).toString('hex'),
        details: [
          {
            issue: 'INVALID_RESOURCE_ID',
            description: 'Specified resource ID does not exist. Please check the resource ID and try again.',
          },
        ],
      });
    return send(res, 200, {
      ...(await captureOf(p)),
      seller_protection: { status: 'ELIGIBLE', dispute_categories: ['ITEM_NOT_RECEIVED'] },
      supplementary_data: { related_ids: { order_id: p.orderId } },
      links: [{ href: `${url}/v2/payments/captures/${p.id}`, rel: 'self', method: 'GET' }],
    });
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
      if (req.method === 'POST' && path === '/nvp') return nvpRequest(req, res);
      const bearer = (req.headers.authorization ?? '').replace(/^Bearer /, '');
      if (!tokens.has(bearer))
        return send(res, 401, {
          error: 'invalid_token',
          error_description: 'Token signature verification failed',
        });
      if (req.method === 'POST' && path === '/v2/checkout/orders') return createOrder(req, res);
      const capture = /^\/v2\/payments\/captures\/([^/]+)$/.exec(path)?.[1];
      if (req.method === 'GET' && capture) return showCapture(res, decodeURIComponent(capture));
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
    tokensIssued: () => tokens.size,
    close: () => closeServer(server),
  };
}
