import {
  CheckoutPaymentIntent,
  Client,
  CustomError,
  Environment,
  OrdersController,
  PaymentInitiator,
  PaymentsController,
  StoredPaymentSourceUsageType,
  type OAuthToken,
  type Order,
} from '@paypal/paypal-server-sdk';
import { z } from 'zod';
import { normalizeDeclineCode } from '../../domain/declines.js';
import { toGatewayDecimal } from '../../domain/money.js';
import { headerKeyWithin, keyWithin } from './gateway-keys.js';
import { captureAnswer, isAmbiguous, issueOf, orderAnswer } from './paypal-answers.js';
import {
  chargeReference,
  nvpUrl,
  referencePayment,
  type NvpCredentials,
  type PayPalAnswer,
} from './paypal-nvp.js';
import { RebasedAgent } from './rebased-agent.js';
import {
  declined,
  PaymentPendingError,
  unchargeableAmount,
  type ChargeOutcome,
  type ChargeRequest,
  type GatewayAdapter,
  type LookupOutcome,
  type LookupRequest,
} from './types.js';

/**
 * A PayPal gateway's credentials: the REST app's client id and secret and the environment; optionally the
 * NVP API signature credentials (all three), without which `reference|…` tokens cannot be charged, and
 * another HTTPS base URL for both APIs (a proxy, or an emulator in tests).
 */
export const PayPalCredentials = z
  .object({
    clientId: z.string().min(1),
    clientSecret: z.string().min(1),
    environment: z.enum(['sandbox', 'live']),
    nvpUser: z.string().min(1).optional(),
    nvpPassword: z.string().min(1).optional(),
    nvpSignature: z.string().min(1).optional(),
    apiBase: z.url({ protocol: /^https$/ }).optional(),
  })
  .strict()
  .refine((c) => [c.nvpUser, c.nvpPassword, c.nvpSignature].filter(Boolean).length % 3 === 0, {
    message: 'nvpUser, nvpPassword and nvpSignature go together',
    path: ['nvpUser'],
  });
export type PayPalCredentials = z.infer<typeof PayPalCredentials>;

/** What a charge and its lookup send alike. */
type Payment = Pick<ChargeRequest, 'token' | 'amount' | 'currency' | 'idempotencyKey'>;

/** The currencies PayPal accepts payments in. */
const payPalCurrencies = [
  'AUD', 'BRL', 'CAD', 'CHF', 'CNY', 'CZK', 'DKK', 'EUR', 'GBP', 'HKD', 'HUF', 'ILS', 'JPY',
  'MXN', 'MYR', 'NOK', 'NZD', 'PHP', 'PLN', 'SEK', 'SGD', 'THB', 'TWD', 'USD',
] as const; // prettier-ignore

/** PayPal keeps an access token for hours: one per app and environment for the whole process. */
const accessTokens = new Map<string, OAuthToken>();

/** PayPal's official client for these credentials. */
function payPalClient(credentials: PayPalCredentials): Client {
  const cacheKey = `${credentials.environment}:${credentials.apiBase ?? ''}:${credentials.clientId}`;
  const cached = accessTokens.get(cacheKey);
  return new Client({
    clientCredentialsAuthCredentials: {
      oAuthClientId: credentials.clientId,
      oAuthClientSecret: credentials.clientSecret,
      ...(cached ? { oAuthToken: cached } : {}),
      oAuthOnTokenUpdate: (token) => void accessTokens.set(cacheKey, token),
    },
    environment: credentials.environment === 'live' ? Environment.Production : Environment.Sandbox,
    // A charge is answered, or given up as ambiguous, inside the charge activity's 45 s.
    timeout: 20_000,
    ...(credentials.apiBase
      ? { httpClientOptions: { httpsAgent: new RebasedAgent(new URL(credentials.apiBase)) } }
      : {}),
  });
}

/** `billing-agreement|B-…` or `reference|<previous payment>`, the spec's token shapes for PayPal. */
function parseToken(token: string): { kind: 'billing-agreement' | 'reference'; id: string } {
  const [kind = '', id = ''] = token.split('|');
  return { kind: kind === 'reference' ? 'reference' : 'billing-agreement', id };
}

/**
 * PayPal through its official server SDK (`@paypal/paypal-server-sdk`). A `billing-agreement|B-…` token is
 * charged with one Orders v2 order that pays itself with the agreement (intent CAPTURE, PayPal's
 * single-step order for a stored payment source), created under the attempt's key as `PayPal-Request-Id`
 * and as the purchase unit's `invoice_id`: a retry with the same request id gets the same order back at
 * its latest state, and a payment PayPal took under the attempt blocks a second one with the same invoice id
 * (PayPal's default "block duplicate invoice IDs"). A `reference|<previous payment>` token is a reference
 * transaction of the NVP API (paypal-nvp.ts). Declines come back as an error's issue
 * (`INSTRUMENT_DECLINED`, `AGREEMENT_ALREADY_CANCELLED` …) read as Recoup's decline names. A payment PayPal
 * has taken but not completed is ambiguous and named by its id (by the charge's answer, or by a lookup's
 * PaymentPendingError), which later lookups read (Payments v2's capture, NVP `GetTransactionDetails`) long
 * after PayPal has forgotten the request's key. No card data, no account updater, no cards on file.
 */
export function createPayPalGateway(credentials: PayPalCredentials): GatewayAdapter {
  const client = payPalClient(credentials);
  const orders = new OrdersController(client);
  const payments = new PaymentsController(client);
  const nvp: NvpCredentials | null =
    credentials.nvpUser && credentials.nvpPassword && credentials.nvpSignature
      ? {
          user: credentials.nvpUser,
          password: credentials.nvpPassword,
          signature: credentials.nvpSignature,
          url: nvpUrl(credentials.environment, credentials.apiBase),
        }
      : null;

  /** The NVP credentials a reference token needs; routing never sends one here without them (takesToken). */
  function nvpFor(): NvpCredentials {
    if (!nvp) throw new Error('This PayPal gateway has no NVP credentials for reference transactions');
    return nvp;
  }

  /**
   * The attempt's one order paid with the agreement (a replay gets the first one, as it stands now), of
   * `value`: the amount as PayPal writes it.
   */
  async function payWithAgreement(agreement: string, req: Payment, value: string) {
    const { result } = await orders.createOrder({
      paypalRequestId: headerKeyWithin(req.idempotencyKey, 108),
      prefer: 'return=representation',
      body: {
        intent: CheckoutPaymentIntent.Capture,
        purchaseUnits: [
          {
            amount: { currencyCode: req.currency, value },
            invoiceId: keyWithin(req.idempotencyKey, 127),
          },
        ],
        paymentSource: {
          paypal: {
            billingAgreementId: agreement,
            storedCredential: {
              paymentInitiator: PaymentInitiator.Merchant,
              usage: StoredPaymentSourceUsageType.Subsequent,
            },
          },
        },
      },
    });
    return result;
  }

  /**
   * The answer to the attempt's charge (sent again by a lookup that knows no payment of it), or why there is
   * none yet; errors that are not PayPal's answer throw.
   */
  async function send(req: Payment, reading: 'charge' | 'lookup'): Promise<PayPalAnswer> {
    // PayPal takes HUF and TWD in whole units: 5000.50 HUF cannot be paid, and is declined with nothing sent.
    const value = toGatewayDecimal(req.amount, req.currency, 'paypal');
    if (value === null) return unchargeableAmount();
    const token = parseToken(req.token);
    if (token.kind === 'reference') {
      const answer = await chargeReference(nvpFor(), { ...req, amount: value, reference: token.id }, reading);
      // A lookup's answer names the payment (pending, or 11607's original result): read as it stands now.
      if (reading === 'lookup' && 'unanswered' in answer && answer.paymentId)
        return referencePayment(nvpFor(), answer.paymentId);
      return answer;
    }
    let order: Order;
    try {
      order = await payWithAgreement(token.id, req, value);
    } catch (error) {
      if (isAmbiguous(error)) return { unanswered: `PayPal: ${(error as Error).message}` };
      if (!(error instanceof CustomError) || error.statusCode !== 422) throw error;
      const issue = issueOf(error);
      // A payment under this attempt's invoice id that PayPal no longer knows the request id of (it keeps
      // them 6 hours by default) and no answer named: its outcome cannot be read here, and it is never paid
      // twice.
      if (issue === 'DUPLICATE_INVOICE_ID')
        return { unanswered: 'PayPal already has a payment under this attempt (duplicate invoice id)' };
      return declined(normalizeDeclineCode(issue) || 'generic_decline', null, null);
    }
    return orderAnswer(order);
  }

  /** A billing agreement's capture as PayPal reports it now (Payments v2), by its id. */
  async function readCapture(captureId: string): Promise<PayPalAnswer> {
    try {
      const { result } = await payments.getCapturedPayment({ captureId });
      return captureAnswer({ ...result, id: result.id ?? captureId });
    } catch (error) {
      if (isAmbiguous(error)) return { unanswered: `PayPal: ${(error as Error).message}` };
      // Not found, or not this app's: the lookup fails (and is tried again), and the Temporal UI says why.
      if (!(error instanceof CustomError)) throw error;
      const why = `${error.statusCode} ${issueOf(error)}`;
      throw new Error(`PayPal could not read capture ${captureId}: ${why}`, { cause: error });
    }
  }

  async function charge(req: ChargeRequest): Promise<ChargeOutcome> {
    const answer = await send(req, 'charge');
    if (!('unanswered' in answer)) return answer;
    const named = answer.paymentId ? { gatewayTransactionId: answer.paymentId } : {};
    return { kind: 'ambiguous', reason: answer.unanswered, ...named };
  }

  async function lookup(req: LookupRequest): Promise<LookupOutcome> {
    // The payment a charge's answer or an earlier lookup named is read by its id. Without one, the same
    // request with the same key: PayPal answers with the attempt's payment as it stands now (or, if none
    // reached PayPal, makes the attempt's one payment now). Without an answer the lookup throws, and is tried
    // again later; with a payment it names but has not settled (pending), it throws PaymentPendingError, so
    // that payment is read by its id from then on, also once PayPal has forgotten the request's key. Without
    // an id it is sent also when a stop was asked (`readOnly`): PayPal cannot be read by the attempt's key
    // or invoice id at once (docs/gateways.md, "PayPal"), and the resend's answer is always recorded.
    const id = req.gatewayTransactionId;
    const answer = !id
      ? await send(req, 'lookup')
      : parseToken(req.token).kind === 'reference'
        ? await referencePayment(nvpFor(), id)
        : await readCapture(id);
    if (!('unanswered' in answer)) return answer;
    if (answer.paymentId) throw new PaymentPendingError(answer.unanswered, answer.paymentId);
    throw new Error(answer.unanswered);
  }

  return {
    capabilities: {
      wallets: ['paypal'],
      currencies: payPalCurrencies,
      takesToken: (token) => nvp !== null || parseToken(token).kind !== 'reference',
    },
    charge,
    lookup,
  };
}
