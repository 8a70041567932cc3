import { randomBytes } from 'node:crypto';
import { closeServer, readText, sendJson as send, serveEmulator } from './emulator-http.js';

/**
 * A local emulator of the part of Zuora's REST API the Zuora connector calls: an OAuth token (client
 * credentials), a payment method (CRUD), an invoice and creating a payment. It checks the bearer token and
 * answers failures with Zuora's error body (`{ success: false, reasons: [{ code, message }] }`).
 */
export interface ZuoraEmulator {
  url: string;
  clientId: string;
  clientSecret: string;
  /** A payment method whose gateway tokens are `tokenId` / `secondTokenId`; returns its id. */
  addPaymentMethod(tokenId: string, secondTokenId: string | null): string;
  /** A posted invoice of `accountId` with `balance` (major units) outstanding; returns its id. */
  addInvoice(accountId: string, balance: number, status?: string): string;
  /** Every `POST /v1/payments` that reached the emulator, with its idempotency key. */
  payments(): { idempotencyKey: string | null; body: Record<string, unknown> }[];
  close(): Promise<void>;
}

const newId = () => randomBytes(16).toString('hex');

const failure = (code: number, message: string) => ({
  success: false,
  processId: randomBytes(8).toString('hex').toUpperCase(),
  reasons: [{ code, message }],
});

export async function startZuoraEmulator(): Promise<ZuoraEmulator> {
  const clientId = newId();
  const clientSecret = newId();
  const issued = new Set<string>();
  const methods = new Map<string, { TokenId: string; SecondTokenId: string | null }>();
  const invoices = new Map<string, { accountId: string; balance: number; status: string }>();
  const created: { idempotencyKey: string | null; body: Record<string, unknown> }[] = [];

  function route(method: string, path: string, body: string, idempotencyKey: string | null) {
    const pm = /^\/v1\/object\/payment-method\/([^/]+)$/.exec(path);
    if (method === 'GET' && pm) {
      const found = methods.get(decodeURIComponent(pm[1]!));
      return found
        ? { status: 200, body: { Id: pm[1], Type: 'CreditCardReferenceTransaction', ...found } }
        : { status: 404, body: failure(50000040, 'Cannot find entity by key') };
    }
    const inv = /^\/v1\/invoices\/([^/]+)$/.exec(path);
    if (method === 'GET' && inv) {
      const id = decodeURIComponent(inv[1]!);
      const found = invoices.get(id);
      return found
        ? { status: 200, body: { success: true, id, ...found } }
        : { status: 404, body: failure(50000040, `Cannot find entity by key: '${id}'.`) };
    }
    if (method === 'POST' && path === '/v1/payments') {
      const payment = JSON.parse(body) as Record<string, unknown>;
      created.push({ idempotencyKey, body: payment });
      const applied = (payment.invoices as { invoiceId: string; amount: string }[] | undefined) ?? [];
      for (const { invoiceId, amount } of applied) {
        const invoice = invoices.get(invoiceId);
        // Zuora answers some errors with HTTP 200 and `success: false`.
        if (!invoice) return { status: 200, body: failure(53000040, `Invalid invoice ${invoiceId}`) };
        invoice.balance = Math.round((invoice.balance - Number(amount)) * 100) / 100;
      }
      return { status: 200, body: { success: true, id: newId(), status: 'Processed', ...payment } };
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
      return send(res, 200, { access_token: token, token_type: 'bearer', expires_in: 3599, scope: '' });
    }
    const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (!token || !issued.has(token)) return send(res, 401, failure(90000011, 'Authentication error'));
    const key = req.headers['idempotency-key'];
    const reply = route(req.method ?? 'GET', path, body, typeof key === 'string' ? key : null);
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
      invoices.set(id, { accountId, balance, status });
      return id;
    },
    payments: () => [...created],
    close: () => closeServer(server),
  };
}
