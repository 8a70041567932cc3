import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { closeServer, readJson, sendJson, serveEmulator } from './emulator-http.js';

/**
 * A local HTTPS emulator of the part of Adyen's Checkout API the Adyen adapter uses (`POST /v72/payments`
 * with a stored payment method), with Adyen's API-key authentication, its idempotency (a request with a
 * key already answered gets the first answer again; a 5xx is not kept, so the same key goes through
 * again), its documented limits (an `Idempotency-Key` of at most 64 characters, a `reference` of at most
 * 80), its error bodies and a merchant account that captures by hand (`AcmeManual`: an authorised payment
 * is captured only when the request says `captureDelayHours: 0`), so the official library runs unchanged
 * against loopback. Each stored payment method answers from a script.
 */
export type EmulatedAnswer =
  | 'approve'
  /**
   * Refused, with Adyen's refusal reason, its `refusalReasonCode` (2, Refused, unless given) and, optionally,
   * Mastercard's advice as Adyen writes it.
   */
  | { refuse: string; code?: string; advice?: string }
  /** resultCode Error: Adyen could not process the payment. */
  | 'error'
  /** The issuer wants the shopper (3-D Secure): RedirectShopper. */
  | 'redirect'
  /** The payment is authorised, but the connection is cut before the answer. */
  | 'lost'
  /**
   * Adyen holds the payment without a final result (resultCode Received, or Pending), with its PSP
   * reference; the result would come in Adyen's AUTHORISATION webhook, and a replay gets this answer again.
   */
  | 'received'
  | 'pending'
  /** 500 before anything is processed (not kept under the idempotency key). */
  | 'server_error'
  /** 422 with error code 704: a request with this idempotency key is still being processed. */
  | 'in_flight'
  /**
   * 422 of Adyen's `validation` type: Adyen refuses the request as invalid (a currency the merchant account
   * does not take, …; modelled: the error code and message are the script's), nothing processed.
   */
  | { invalid: { errorCode: string; message: string } };

export interface EmulatedPayment {
  pspReference: string;
  resultCode: string;
  merchantAccount: string;
  storedPaymentMethodId: string;
  shopperReference: string;
  reference: string;
  amount: { value: number; currency: string };
  shopperInteraction: string;
  recurringProcessingModel: string;
  returnUrl: string;
  idempotencyKey: string | null;
  /** The request's `captureDelayHours`, null when it sent none (the merchant account's setting holds). */
  captureDelayHours: number | null;
  /** Authorised and captured: at once on an account that captures automatically, else only if asked. */
  captured: boolean;
}

interface StoredMethod {
  merchantAccount: string;
  shopperReference: string;
  answers: EmulatedAnswer[];
  /** Requests that reached the method (each takes the next answer; replays do not). */
  tries: number;
}

export interface AdyenEmulator {
  url: string;
  /** Credentials of an Adyen gateway pointed at the emulator. */
  credentials: Record<string, string>;
  /** A stored payment method of `shopperReference` at `merchantAccount`, and what its payments answer in order. */
  addStoredMethod(
    id: string,
    method: { merchantAccount: string; shopperReference: string; answers: EmulatedAnswer[] },
  ): void;
  /** Payments Adyen processed (idempotent replays are not payments). */
  payments(): EmulatedPayment[];
  /** Requests received, replays included. */
  requests(): number;
  /** The body of every payment request received, replays included, with its `Idempotency-Key`. */
  requestBodies(): Array<{ idempotencyKey: string | null; body: Record<string, unknown> }>;
  /** Forgets every idempotency key, as Adyen does once a key's validity has passed. */
  expireKeys(): void;
  close(): Promise<void>;
}

/** Merchant accounts the emulated API key may use. */
const merchantAccounts = new Set(['AcmeECOM', 'AcmeEU', 'AcmeManual']);
/** Merchant accounts set to capture later or by hand (Customer Area > Account > Settings > Capture delay). */
const manualCapture = new Set(['AcmeManual']);

/** Adyen's documented maximum lengths of the `Idempotency-Key` header and of a payment's `reference`. */
const idempotencyKeyMax = 64;
const referenceMax = 80;

const apiError = (status: number, errorCode: string, message: string, errorType: string) => ({
  status,
  errorCode,
  message,
  errorType,
});

/** The resultCode of each scripted answer that reaches a result (a refusal is `Refused`). */
const resultCodes = {
  approve: 'Authorised',
  lost: 'Authorised',
  error: 'Error',
  redirect: 'RedirectShopper',
  received: 'Received',
  pending: 'Pending',
} as const;

type Fields = Record<string, unknown>;
const text = (o: unknown, key: string): string => {
  const v = o && typeof o === 'object' ? (o as Fields)[key] : undefined;
  return typeof v === 'string' ? v : '';
};

export async function startAdyenEmulator(): Promise<AdyenEmulator> {
  const apiKey = `AQE${randomBytes(16).toString('hex')}`;
  const methods = new Map<string, StoredMethod>();
  const payments: EmulatedPayment[] = [];
  const answered = new Map<string, { status: number; body: unknown }>();
  const bodies: Array<{ idempotencyKey: string | null; body: Record<string, unknown> }> = [];
  let requests = 0;

  function send(res: ServerResponse, status: number, body: unknown) {
    sendJson(res, status, body, { pspReference: randomBytes(8).toString('hex') });
  }

  /** Processes one payment request: the answer, or 'lost' after processing it. */
  function process(body: Fields, key: string | null): { status: number; body: unknown } | 'lost' {
    const merchantAccount = text(body, 'merchantAccount');
    if (!merchantAccounts.has(merchantAccount))
      return { status: 403, body: apiError(403, '901', 'Invalid Merchant Account', 'security') };
    const amount = body.amount as { value?: unknown; currency?: unknown } | undefined;
    const returnUrl = text(body, 'returnUrl');
    if (
      typeof amount?.value !== 'number' ||
      typeof amount.currency !== 'string' ||
      !text(body, 'reference') ||
      !returnUrl
    )
      return { status: 422, body: apiError(422, '100', 'Required field missing', 'validation') };
    // Adyen takes the value in its own minor units, an integer (its decimals per currency are its own).
    if (!Number.isSafeInteger(amount.value) || amount.value < 0)
      return { status: 422, body: apiError(422, '137', 'Invalid amount specified', 'validation') };
    const reference = text(body, 'reference');
    if (reference.length > referenceMax)
      return {
        status: 422,
        body: apiError(422, '000', `reference='${reference}' given is invalid`, 'validation'),
      };
    const storedPaymentMethodId = text(body.paymentMethod, 'storedPaymentMethodId');
    const shopperReference = text(body, 'shopperReference');
    const method = methods.get(storedPaymentMethodId);
    if (!method || method.merchantAccount !== merchantAccount || method.shopperReference !== shopperReference)
      return { status: 422, body: apiError(422, '803', 'PaymentDetail not found', 'validation') };
    const answer = method.answers[Math.min(method.tries, method.answers.length - 1)] ?? 'approve';
    method.tries += 1;
    if (answer === 'server_error')
      return { status: 500, body: apiError(500, '000', 'An unknown error occurred', 'internal') };
    if (answer === 'in_flight')
      return {
        status: 422,
        body: apiError(422, '704', 'request already processed or in progress', 'validation'),
      };
    if (typeof answer === 'object' && 'invalid' in answer)
      return {
        status: 422,
        body: apiError(422, answer.invalid.errorCode, answer.invalid.message, 'validation'),
      };
    const pspReference = randomBytes(8).toString('hex').toUpperCase();
    const resultCode = typeof answer === 'object' ? 'Refused' : resultCodes[answer];
    const captureDelayHours = typeof body.captureDelayHours === 'number' ? body.captureDelayHours : null;
    payments.push({
      pspReference,
      resultCode,
      merchantAccount,
      storedPaymentMethodId,
      shopperReference,
      reference,
      amount: { value: amount.value, currency: amount.currency },
      shopperInteraction: text(body, 'shopperInteraction'),
      recurringProcessingModel: text(body, 'recurringProcessingModel'),
      returnUrl,
      idempotencyKey: key,
      captureDelayHours,
      captured:
        resultCode === 'Authorised' && (captureDelayHours === 0 || !manualCapture.has(merchantAccount)),
    });
    const refusal =
      typeof answer === 'object'
        ? {
            refusalReason: answer.refuse,
            refusalReasonCode: answer.code ?? '2',
            ...(answer.advice ? { additionalData: { merchantAdviceCode: answer.advice } } : {}),
          }
        : {};
    const reply = {
      status: 200,
      body: { pspReference, resultCode, merchantReference: reference, ...refusal },
    };
    if (key) answered.set(key, reply);
    return answer === 'lost' ? 'lost' : reply;
  }

  const { server, url } = await serveEmulator(
    async (req, res) => {
      requests += 1;
      if (req.headers['x-api-key'] !== apiKey)
        return send(res, 401, apiError(401, '000', 'HTTP Status Response - Unauthorized', 'security'));
      if (req.method !== 'POST' || !/^\/v\d+\/payments$/.test(req.url ?? ''))
        return send(res, 404, apiError(404, '000', 'Not found', 'validation'));
      const body = await readJson(req);
      const key = typeof req.headers['idempotency-key'] === 'string' ? req.headers['idempotency-key'] : null;
      bodies.push({ idempotencyKey: key, body });
      if (key && key.length > idempotencyKeyMax)
        return send(
          res,
          422,
          apiError(422, '000', `Idempotency-Key exceeds ${idempotencyKeyMax} characters`, 'validation'),
        );
      const earlier = key ? answered.get(key) : undefined;
      const reply = earlier ?? process(body, key);
      if (reply === 'lost') return res.socket?.destroy();
      send(res, reply.status, reply.body);
    },
    { https: true },
  );

  return {
    url,
    credentials: { apiKey, environment: 'test', apiBase: url },
    addStoredMethod: (id, method) => methods.set(id, { ...method, tries: 0 }),
    payments: () => [...payments],
    requests: () => requests,
    requestBodies: () => [...bodies],
    expireKeys: () => answered.clear(),
    close: () => closeServer(server),
  };
}
