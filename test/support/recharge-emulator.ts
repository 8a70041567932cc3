import { randomBytes, randomInt } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { closeServer, sendJson, serveEmulator } from './emulator-http.js';

/**
 * A local emulator of the part of Recharge's REST API (2021-11) the Recharge connector reads: one charge and
 * a customer's payment methods. It checks the `X-Recharge-Access-Token` header and answers failures with a
 * JSON `errors` body. Without `X-Recharge-Version` Recharge answers in the token's default version, whose
 * shapes may differ (2021-01 has no payment methods); the emulator refuses such requests outright, so a
 * connector that forgets the header fails here.
 */
export interface RechargeEmulator {
  url: string;
  apiToken: string;
  /**
   * A recurring charge the processor declined: a customer whose default payment method holds `token`, and
   * the charge in `error`. Returns the ids and the `{ charge }` body a charge/failed webhook carries.
   */
  addFailedCharge(failed: {
    email: string;
    token: string;
    processorName?: string;
    /** A decimal string in the major unit, as Recharge writes prices. */
    totalPrice: string;
    currency: string;
    errorType: string;
    countryCode?: string;
  }): { chargeId: string; customerId: string; body: string };
  /** Sets a charge's status as Recharge would (its own retry collected it, the merchant skipped it). */
  setChargeStatus(chargeId: string, status: string): void;
  /**
   * Recharge collects the charge (its own retry, the customer in the portal): `success`, and the `{ charge }`
   * body of the charge/paid webhook it then sends.
   */
  payChargeInRecharge(chargeId: string): string;
  close(): Promise<void>;
}

const send = (res: ServerResponse, status: number, body: unknown) =>
  sendJson(res, status, body, { 'content-type': 'application/json; charset=utf-8' });

export async function startRechargeEmulator(): Promise<RechargeEmulator> {
  const apiToken = randomBytes(16).toString('hex');
  const charges = new Map<string, Record<string, unknown>>();
  const paymentMethods = new Map<string, Record<string, unknown>[]>();

  function route(path: string, query: URLSearchParams): { status: number; body: unknown } {
    const charge = /^\/charges\/(\d+)$/.exec(path);
    if (charge) {
      const found = charges.get(charge[1]!);
      return found
        ? { status: 200, body: { charge: found } }
        : { status: 404, body: { errors: 'Not Found' } };
    }
    if (path === '/payment_methods') {
      const customerId = query.get('customer_id') ?? '';
      return { status: 200, body: { payment_methods: paymentMethods.get(customerId) ?? [] } };
    }
    return { status: 404, body: { errors: 'Not Found' } };
  }

  const { server, url } = await serveEmulator((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.headers['x-recharge-access-token'] !== apiToken)
        return send(res, 401, { errors: 'Invalid access token' });
      if (req.headers['x-recharge-version'] !== '2021-11')
        return send(res, 400, { errors: 'This emulator speaks API version 2021-11 only' });
      if (req.method !== 'GET') return send(res, 405, { errors: 'Method Not Allowed' });
      const url = new URL(req.url ?? '/', 'http://emulator');
      const reply = route(url.pathname, url.searchParams);
      send(res, reply.status, reply.body);
    });
  });

  return {
    url,
    apiToken,
    addFailedCharge(f) {
      const customerId = randomInt(1e8, 1e9);
      const chargeId = randomInt(1e8, 1e9);
      paymentMethods.set(String(customerId), [
        {
          id: randomInt(1e7, 1e8),
          customer_id: customerId,
          default: true,
          payment_type: 'CREDIT_CARD',
          processor_name: f.processorName ?? 'stripe',
          processor_customer_token: `cus_${randomBytes(6).toString('hex')}`,
          processor_payment_method_token: f.token,
          status: 'valid',
          payment_details: { brand: 'visa', exp_month: 4, exp_year: 2031, last4: '0002' },
        },
      ]);
      const charge = {
        id: chargeId,
        address_id: randomInt(1e7, 1e8),
        customer: { id: customerId, email: f.email, hash: randomBytes(8).toString('hex') },
        status: 'error',
        type: 'recurring',
        currency: f.currency,
        total_price: f.totalPrice,
        subtotal_price: f.totalPrice,
        error: 'Your card was declined.',
        error_type: f.errorType,
        charge_attempts: 1,
        retry_date: new Date(Date.now() + 3 * 86_400_000).toISOString().slice(0, 19),
        billing_address: { country_code: f.countryCode ?? 'US', city: 'Berlin', zip: '10115' },
        created_at: new Date().toISOString().slice(0, 19),
        updated_at: new Date().toISOString().slice(0, 19),
      };
      charges.set(String(chargeId), charge);
      return { chargeId: String(chargeId), customerId: String(customerId), body: JSON.stringify({ charge }) };
    },
    setChargeStatus(chargeId, status) {
      const charge = charges.get(chargeId);
      if (!charge) throw new Error(`No charge ${chargeId}`);
      charge.status = status;
    },
    payChargeInRecharge(chargeId) {
      const charge = charges.get(chargeId);
      if (!charge) throw new Error(`No charge ${chargeId}`);
      const now = new Date().toISOString().slice(0, 19);
      Object.assign(charge, {
        status: 'success',
        error: null,
        error_type: null,
        charge_attempts: Number(charge.charge_attempts) + 1,
        retry_date: null,
        processed_at: now,
        updated_at: now,
      });
      return JSON.stringify({ charge });
    },
    close: () => closeServer(server),
  };
}
