import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { closeServer, readJson, sendJson as send, serveEmulator } from './emulator-http.js';

/**
 * A local HTTPS emulator of the part of GoCardless's API the GoCardless adapter uses (`POST /payments`
 * against a mandate, `GET /payments/{id}`, `GET /payments?mandate=…`, `GET /mandates/{id}`,
 * `GET /events?payment=…`), with its bearer-token authentication, its idempotency keys (a key already used
 * answers 409 `idempotent_creation_conflict` naming the payment, which the SDK then fetches; `forgetKeys`
 * drops them) and its error bodies, so the official SDK runs unchanged against loopback.
 * A payment is `pending_submission` when created, `submitted` after that, and takes its mandate's scripted
 * answer `settleAfterMs` after its creation (the payer's bank answering a few working days later).
 */
export type EmulatedAnswer =
  /** The bank collects the debit: `confirmed`. */
  | 'confirm'
  /** The bank fails it, with GoCardless's cause (`insufficient_funds`, `refer_to_payer`, …). */
  | { fail: string }
  /** The payment is created, but the connection is cut before the answer. */
  | 'lost'
  /** 500 before anything is created (not kept under the idempotency key). */
  | 'server_error'
  /** 422 `mandate_is_inactive`: the mandate was cancelled, expired or failed. */
  | 'inactive'
  /** 422 `mandate_replaced`: the creditor moved the mandate to a new one (`links.new_mandate`). */
  | 'replaced'
  /** 422 `validation_failed` on this field of the payment (modelled: GoCardless names the field). */
  | { invalid: string };

export interface EmulatedDebit {
  id: string;
  mandate: string;
  amount: number;
  currency: string;
  metadata: Record<string, string>;
  idempotencyKey: string;
  createdAt: Date;
  answer: 'confirm' | { fail: string };
}

/** A mandate's debit scheme as the emulator checks payments against it. */
interface EmulatedScheme {
  name: string;
  currency: string;
  maxAmount?: number;
}

export interface GoCardlessEmulator {
  url: string;
  /** Credentials of a GoCardless gateway pointed at the emulator. */
  credentials: Record<string, string>;
  /**
   * A mandate, and what requests to debit it answer in order (the last repeats). With `scheme`, a payment
   * in another currency than the scheme's, or over its limit, is refused as GoCardless validates it (422
   * `validation_failed` naming the field), before any answer is taken.
   */
  addMandate(id: string, answers: EmulatedAnswer[], scheme?: EmulatedScheme): void;
  payments(): EmulatedDebit[];
  /**
   * The payer cancels the mandate: every later request to debit it answers 422 `mandate_is_inactive`,
   * before its idempotency key is looked at (GoCardless does not document which it checks first), while its
   * debits already submitted go on to the bank.
   */
  cancelMandate(id: string): void;
  /** How long after its creation the bank answers a payment (default 0: at the first read after it). */
  settleAfter(ms: number): void;
  /**
   * Forgets every idempotency key (GoCardless does not say how long it keeps them): the same request is then
   * a new payment.
   */
  forgetKeys(): void;
  close(): Promise<void>;
}

type Fields = Record<string, unknown>;

/** GoCardless's error body: a type, the HTTP code and the reasons. */
const apiError = (type: string, code: number, reason: string, message: string, links?: Fields) => ({
  error: {
    type,
    code,
    message,
    documentation_url: `https://developer.gocardless.com/api-reference#${reason}`,
    request_id: randomBytes(8).toString('hex'),
    errors: [{ reason, message, ...(links ? { links } : {}) }],
  },
});

/** GoCardless's answer to a payment its mandate's scheme cannot take: `validation_failed`, by field. */
function invalidFor(scheme: EmulatedScheme, request: Fields) {
  const errors = [
    ...(request.currency === scheme.currency
      ? []
      : [{ field: 'currency', message: `must be ${scheme.currency} for a ${scheme.name} mandate` }]),
    ...(scheme.maxAmount !== undefined && Number(request.amount) > scheme.maxAmount
      ? [{ field: 'amount', message: `must be less than or equal to ${scheme.maxAmount}` }]
      : []),
  ];
  return errors.length === 0 ? null : validationFailed(errors);
}

/** GoCardless's `validation_failed` error naming the payment fields it refused. */
function validationFailed(errors: Array<{ field: string; message: string }>) {
  return {
    error: {
      type: 'validation_failed',
      code: 422,
      message: 'Validation failed',
      documentation_url: 'https://developer.gocardless.com/api-reference#validation_failed',
      request_id: randomBytes(8).toString('hex'),
      errors: errors.map((e) => ({ ...e, request_pointer: `/payments/${e.field}` })),
    },
  };
}

/** `clock`: what GoCardless stamps payments with (a time-skipping test passes the server's time). */
export async function startGoCardlessEmulator(
  clock: () => Date | Promise<Date> = () => new Date(),
): Promise<GoCardlessEmulator> {
  const accessToken = `sandbox_${randomBytes(12).toString('hex')}`;
  const mandates = new Map<string, { answers: EmulatedAnswer[]; tries: number; scheme?: EmulatedScheme }>();
  const debits: EmulatedDebit[] = [];
  /** The payment each idempotency key made, while GoCardless keeps the key. */
  const keys = new Map<string, EmulatedDebit>();
  const cancelled = new Set<string>();
  let settleMs = 0;

  async function wire(d: EmulatedDebit) {
    const age = (await clock()).getTime() - d.createdAt.getTime();
    const status =
      age >= settleMs && age > 0
        ? d.answer === 'confirm'
          ? 'confirmed'
          : 'failed'
        : age > 0
          ? 'submitted'
          : 'pending_submission';
    return {
      id: d.id,
      amount: d.amount,
      currency: d.currency,
      status,
      charge_date: d.createdAt.toISOString().slice(0, 10),
      created_at: d.createdAt.toISOString(),
      metadata: d.metadata,
      links: { mandate: d.mandate, creditor: 'CR123' },
    };
  }

  async function create(req: IncomingMessage, body: Fields, res: ServerResponse) {
    const key = String(req.headers['idempotency-key'] ?? '');
    const mandateId = String(((body.payments ?? {}) as Fields & { links?: Fields }).links?.mandate);
    if (cancelled.has(mandateId))
      return send(
        res,
        422,
        apiError('invalid_state', 422, 'mandate_is_inactive', 'The mandate is not active'),
      );
    const earlier = keys.get(key);
    if (earlier)
      return send(
        res,
        409,
        apiError(
          'invalid_state',
          409,
          'idempotent_creation_conflict',
          'A resource has already been created with this idempotency key',
          {
            conflicting_resource_id: earlier.id,
          },
        ),
      );
    const request = (body.payments ?? {}) as Fields;
    const links = (request.links ?? {}) as Fields;
    const mandate = mandates.get(String(links.mandate));
    if (!mandate)
      return send(
        res,
        422,
        apiError('invalid_api_usage', 422, 'invalid_document_structure', 'Mandate not found'),
      );
    const refused = mandate.scheme ? invalidFor(mandate.scheme, request) : null;
    if (refused) return send(res, 422, refused);
    // Every request that reaches the mandate takes the next answer; a replay of a used key does not.
    const answer = mandate.answers[Math.min(mandate.tries, mandate.answers.length - 1)] ?? 'confirm';
    mandate.tries += 1;
    if (answer === 'server_error')
      return send(res, 500, apiError('gocardless', 500, 'internal_server_error', 'Internal server error'));
    if (answer === 'inactive')
      return send(
        res,
        422,
        apiError('invalid_state', 422, 'mandate_is_inactive', 'The mandate is not active'),
      );
    if (answer === 'replaced')
      return send(
        res,
        422,
        apiError('invalid_state', 422, 'mandate_replaced', 'The mandate has been replaced', {
          new_mandate: `${String(links.mandate)}NEW`,
        }),
      );
    if (typeof answer === 'object' && 'invalid' in answer)
      return send(res, 422, validationFailed([{ field: answer.invalid, message: 'is invalid' }]));
    const debit: EmulatedDebit = {
      id: `PM${randomBytes(6).toString('hex').toUpperCase()}`,
      mandate: String(links.mandate),
      amount: Number(request.amount),
      currency: String(request.currency),
      metadata: (request.metadata ?? {}) as Record<string, string>,
      idempotencyKey: key,
      createdAt: await clock(),
      answer: answer === 'lost' ? 'confirm' : answer,
    };
    debits.push(debit);
    if (key) keys.set(key, debit);
    if (answer === 'lost') return res.socket?.destroy();
    // A payment is always answered as just created, however long the request took: the payer's bank has
    // not seen it yet (reading its age here made a slow run see it collected already).
    return send(res, 201, { payments: { ...(await wire(debit)), status: 'pending_submission' } });
  }

  /** The debit's `failed` event, with the cause, once the bank has failed it. */
  async function events(query: URLSearchParams, res: ServerResponse) {
    const debit = debits.find((d) => d.id === query.get('payment'));
    const shown = debit ? await wire(debit) : null;
    const list =
      debit && shown?.status === 'failed' && debit.answer !== 'confirm'
        ? [
            {
              id: `EV${debit.id.slice(2)}`,
              action: 'failed',
              resource_type: 'payments',
              created_at: shown.created_at,
              links: { payment: debit.id },
              details: {
                origin: 'bank',
                cause: debit.answer.fail,
                scheme: 'bacs',
                reason_code: 'ARUDD-0',
                description: 'The payment failed.',
              },
            },
          ]
        : [];
    return send(res, 200, { events: list, meta: { cursors: { before: null, after: null }, limit: 50 } });
  }

  const { server, url } = await serveEmulator(
    async (req, res) => {
      if (req.headers.authorization !== `Bearer ${accessToken}`)
        return send(res, 401, apiError('invalid_api_usage', 401, 'unauthorized', 'Unauthorized'));
      const url = new URL(req.url ?? '/', 'https://emulator');
      const body = await readJson(req);
      if (req.method === 'POST' && url.pathname === '/payments') return create(req, body, res);
      if (req.method === 'GET' && url.pathname === '/events') return events(url.searchParams, res);
      if (req.method === 'GET' && url.pathname === '/payments') {
        const mandate = url.searchParams.get('mandate');
        const listed = await Promise.all(debits.filter((d) => d.mandate === mandate).map(wire));
        return send(res, 200, {
          payments: listed,
          meta: { cursors: { before: null, after: null }, limit: 50 },
        });
      }
      const mandatePath = url.pathname.match(/^\/mandates\/([^/]+)$/);
      if (req.method === 'GET' && mandatePath) {
        const id = decodeURIComponent(mandatePath[1] ?? '');
        if (!mandates.has(id))
          return send(
            res,
            404,
            apiError('invalid_api_usage', 404, 'resource_not_found', 'Resource not found'),
          );
        return send(res, 200, { mandates: { id, status: cancelled.has(id) ? 'cancelled' : 'active' } });
      }
      const found = url.pathname.match(/^\/payments\/(PM[0-9A-F]+)$/);
      const debit = found && debits.find((d) => d.id === found[1]);
      if (req.method === 'GET' && debit) return send(res, 200, { payments: await wire(debit) });
      return send(res, 404, apiError('invalid_api_usage', 404, 'resource_not_found', 'Not found'));
    },
    { https: true },
  );

  return {
    url,
    credentials: { accessToken, environment: 'sandbox', apiBase: url },
    addMandate: (id, answers, scheme) =>
      mandates.set(id, { answers, tries: 0, ...(scheme ? { scheme } : {}) }),
    payments: () => [...debits],
    cancelMandate: (id) => cancelled.add(id),
    settleAfter: (ms) => (settleMs = ms),
    forgetKeys: () => keys.clear(),
    close: () => closeServer(server),
  };
}
