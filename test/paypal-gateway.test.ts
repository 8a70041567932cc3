import { afterAll, afterEach, assert, beforeAll, describe, expect, it } from 'vitest';
import { createPayPalGateway, PayPalCredentials } from '../activities/gateways/paypal.js';
import { captureAnswer } from '../activities/gateways/paypal-answers.js';
import { paymentAnswer } from '../activities/gateways/paypal-nvp.js';
import {
  PaymentPendingError,
  type ChargeRequest,
  type GatewayAdapter,
  type LookupRequest,
} from '../activities/gateways/types.js';
import { credentialsProblem } from '../activities/gateways/registry.js';
import { routeOptions } from '../activities/gateways/routing.js';
import { parseGateways } from '../cli/gateway-spec.js';
import { classifyDecline } from '../domain/declines.js';
import { startPayPalEmulator, type PayPalEmulator, type PayPalScript } from './support/paypal-emulator.js';

let emulator: PayPalEmulator;
let gateway: GatewayAdapter;
let n = 0;
/** How far PayPal's clock (the emulator's) is ahead of the wall clock. */
let skipped = 0;
const hour = 3_600_000;
/** Moves PayPal's clock on by `ms`: its pending payments settle, and it forgets request ids after 6 hours. */
const later = (ms: number) => void (skipped += ms);

beforeAll(async () => {
  emulator = await startPayPalEmulator(() => new Date(Date.now() + skipped));
  gateway = createPayPalGateway(PayPalCredentials.parse(emulator.credentials));
});
afterAll(() => emulator.close());
afterEach(() => emulator.settleAfter(0));

/** A billing agreement (or reference) whose payments answer `answers`, and a charge of it with a fresh key. */
function sourceWith(answers: PayPalScript[], via: 'billing-agreement' | 'reference' = 'billing-agreement') {
  n += 1;
  const id = via === 'billing-agreement' ? `B-${n}AB12345CD678901E` : `9XY${n}0123ABCD4567`;
  emulator.addSource(id, answers);
  const req: ChargeRequest & { sentAt: number } = {
    token: `${via}|${id}`,
    amount: 4900,
    currency: 'USD',
    paymentMethodType: 'paypal',
    idempotencyKey: `recovery/acct/inv${n}/1`,
    sentAt: Date.now(),
  };
  return { id, req };
}

const paymentsOf = (source: string) => emulator.payments().filter((p) => p.source === source);

describe('PayPal adapter: a billing agreement pays one Orders v2 order per attempt', () => {
  it('an approved payment is one order under the attempt key, paid with the agreement as a merchant-initiated charge', async () => {
    const { id, req } = sourceWith(['complete']);
    const outcome = await gateway.charge(req);
    const [payment] = paymentsOf(id);
    expect(outcome).toEqual({ kind: 'approved', gatewayTransactionId: payment!.id });
    expect(payment).toMatchObject({
      via: 'billing-agreement',
      amount: '49.00',
      currency: 'USD',
      requestId: req.idempotencyKey,
      invoiceId: req.idempotencyKey,
      storedCredential: { payment_initiator: 'MERCHANT', usage: 'SUBSEQUENT' },
    });
  });

  it('a retried attempt gets the first payment back (same PayPal-Request-Id), never a second one', async () => {
    const { id, req } = sourceWith(['complete']);
    const first = await gateway.charge(req);
    expect(await gateway.charge(req)).toEqual(first);
    expect(paymentsOf(id)).toHaveLength(1);
  });

  it('a zero-decimal currency is sent in whole units', async () => {
    const { id, req } = sourceWith(['complete']);
    expect((await gateway.charge({ ...req, amount: 4900, currency: 'JPY' })).kind).toBe('approved');
    expect(paymentsOf(id)[0]).toMatchObject({ amount: '4900', currency: 'JPY' });
  });

  it.each([
    [500000, 'HUF', '5000', 'HUF takes no decimals at PayPal'],
    [80000, 'TWD', '800', 'nor does TWD'],
    [4950, 'EUR', '49.50', 'two decimals'],
  ])('%i %s (ISO minor units) is paid as "%s": %s', async (amount, currency, value) => {
    for (const via of ['billing-agreement', 'reference'] as const) {
      const { id, req } = sourceWith(['complete'], via);
      expect((await gateway.charge({ ...req, amount, currency })).kind).toBe('approved');
      expect(paymentsOf(id)).toEqual([expect.objectContaining({ amount: value, currency })]);
    }
  });

  it('an amount PayPal cannot take exactly (5,000.50 Ft) is declined invalid_amount, nothing sent, never rounded', async () => {
    for (const via of ['billing-agreement', 'reference'] as const) {
      const { id, req } = sourceWith(['complete'], via);
      const unchargeable = { ...req, amount: 500050, currency: 'HUF' };
      const declinedHere = {
        kind: 'declined',
        code: 'invalid_amount',
        advice: null,
        gatewayTransactionId: null,
      };
      expect(await gateway.charge(unchargeable)).toEqual(declinedHere);
      expect(await gateway.lookup(unchargeable)).toEqual(declinedHere);
      expect(paymentsOf(id)).toHaveLength(0);
    }
  });

  it.each([
    ['INSTRUMENT_DECLINED', 'generic_decline', 'recoverable'],
    ['TRANSACTION_REFUSED', 'do_not_honor', 'recoverable'],
    ['MAX_NUMBER_OF_PAYMENT_ATTEMPTS_EXCEEDED', 'card_velocity_exceeded', 'recoverable'],
    ['AGREEMENT_ALREADY_CANCELLED', 'revocation_of_authorization', 'no_longer_chargeable'],
    ['PAYER_ACCOUNT_LOCKED_OR_CLOSED', 'account_closed', 'no_longer_chargeable'],
    ['PAYER_ACTION_REQUIRED', 'authentication_required', 'authentication_required'],
  ])('PayPal refusing with %s is declined as %s (%s)', async (issue, code, group) => {
    const { id, req } = sourceWith([{ refuse: issue }]);
    expect(await gateway.charge(req)).toEqual({
      kind: 'declined',
      code,
      advice: null,
      gatewayTransactionId: null,
    });
    expect(classifyDecline(code).group).toBe(group);
    expect(paymentsOf(id)).toHaveLength(0);
  });

  it.each([
    ['DECLINED', 'generic_decline'],
    ['FAILED', 'processing_error'],
  ] as const)(
    'an order whose capture is %s is declined as %s, with the capture id',
    async (capture, code) => {
      const { id, req } = sourceWith([{ capture }]);
      const [outcome, payment] = [await gateway.charge(req), paymentsOf(id)[0]];
      expect(outcome).toEqual({ kind: 'declined', code, advice: null, gatewayTransactionId: payment!.id });
    },
  );

  it('a DECLINED capture with a processor response carries its response code and payment advice code, when charged and when read by id', async () => {
    const { id, req } = sourceWith([{ capture: 'DECLINED', responseCode: '5120', adviceCode: '03' }]);
    const outcome = await gateway.charge(req);
    const captureId = paymentsOf(id)[0]!.id;
    const declinedWithCode = {
      kind: 'declined',
      code: '5120',
      advice: '03',
      gatewayTransactionId: captureId,
    };
    expect(outcome).toEqual(declinedWithCode);
    expect(await gateway.lookup({ ...req, gatewayTransactionId: captureId })).toEqual(declinedWithCode);
  });

  it('an order that waits for the payer is declined as authentication_required', async () => {
    const { req } = sourceWith(['payer_action']);
    expect(await gateway.charge(req)).toMatchObject({ kind: 'declined', code: 'authentication_required' });
  });

  it('an unknown agreement is declined as a revoked authorization, nothing paid', async () => {
    const req = { ...sourceWith(['complete']).req, token: 'billing-agreement|B-0UNKNOWN00000000' };
    expect(await gateway.charge(req)).toMatchObject({
      kind: 'declined',
      code: 'revocation_of_authorization',
    });
  });

  it('one OAuth token serves every adapter of the process with the same app', async () => {
    const before = emulator.tokensIssued();
    const other = createPayPalGateway(PayPalCredentials.parse(emulator.credentials));
    expect((await other.charge(sourceWith(['complete']).req)).kind).toBe('approved');
    expect(emulator.tokensIssued()).toBe(before);
  });

  it('a key longer than PayPal takes is sent as its hash, the same on every try', async () => {
    const { id, req } = sourceWith(['complete']);
    const long = { ...req, idempotencyKey: `recovery/acct/${'k'.repeat(128)}/1` };
    await gateway.charge(long);
    await gateway.charge(long);
    const payments = paymentsOf(id);
    expect(payments).toHaveLength(1);
    expect(payments[0]!.requestId).toMatch(/^[0-9a-f]{64}$/);
    expect(payments[0]!.invoiceId).toBe(payments[0]!.requestId);
  });

  it('keys that differ only in characters no HTTP header carries are two attempts at PayPal: each PayPal-Request-Id is its own hash', async () => {
    // The SDK would drop such characters from the header: `inv-€/1` and `inv-✓/1` would share one request id,
    // and the second attempt would get the first one's order back as its own.
    const [first, second] = [sourceWith(['complete']), sourceWith(['complete'])];
    const euro = { ...first.req, idempotencyKey: 'recovery/acct/inv-€/1' };
    const check = { ...second.req, idempotencyKey: 'recovery/acct/inv-✓/1' };
    for (const req of [euro, euro, check]) expect((await gateway.charge(req)).kind).toBe('approved');
    const [paidByEuro, paidByCheck] = [paymentsOf(first.id), paymentsOf(second.id)];
    expect(paidByEuro).toEqual([expect.objectContaining({ invoiceId: euro.idempotencyKey })]);
    expect(paidByCheck).toEqual([expect.objectContaining({ invoiceId: check.idempotencyKey })]);
    expect(paidByEuro[0]!.requestId).toMatch(/^[0-9a-f]{64}$/);
    expect(paidByCheck[0]!.requestId).not.toBe(paidByEuro[0]!.requestId);
  });
});

describe('PayPal adapter: an answer that does not come is ambiguous, and the same request settles it, never paying twice', () => {
  it('a payment whose answer is lost is found by the lookup (the same request id answers it)', async () => {
    const { id, req } = sourceWith(['lost']);
    expect(await gateway.charge(req)).toMatchObject({ kind: 'ambiguous' });
    const [payment] = paymentsOf(id);
    expect(await gateway.lookup(req)).toEqual({ kind: 'approved', gatewayTransactionId: payment!.id });
    expect(paymentsOf(id)).toHaveLength(1);
  });

  it('a 500 before anything is made is ambiguous; the lookup makes the attempt’s one payment', async () => {
    const { id, req } = sourceWith(['server_error', 'complete']);
    expect(await gateway.charge(req)).toMatchObject({ kind: 'ambiguous', reason: /PayPal/ });
    expect(paymentsOf(id)).toHaveLength(0);
    expect((await gateway.lookup(req)).kind).toBe('approved');
    expect((await gateway.lookup(req)).kind).toBe('approved');
    expect(paymentsOf(id)).toHaveLength(1);
  });

  it('a pending capture (an eCheck) is ambiguous, named by its capture id; the lookup fails until PayPal completes it', async () => {
    emulator.settleAfter(hour);
    const { id, req } = sourceWith(['pending']);
    const [outcome, payment] = [await gateway.charge(req), paymentsOf(id)[0]];
    expect(outcome).toEqual({
      kind: 'ambiguous',
      reason: `PayPal capture ${payment!.id} is PENDING (ECHECK)`,
      gatewayTransactionId: payment!.id,
    });
    await expect(gateway.lookup(req)).rejects.toThrow(/is PENDING \(ECHECK\)/);
    emulator.settleAfter(0);
    expect(await gateway.lookup(req)).toEqual({ kind: 'approved', gatewayTransactionId: payment!.id });
    expect(paymentsOf(id)).toHaveLength(1);
  });

  it('a capture pending for days, long after PayPal has forgotten the request id, is read by its id and resolves when PayPal completes it', async () => {
    emulator.settleAfter(4 * 24 * hour);
    const { id, req } = sourceWith(['pending', 'complete']);
    const outcome = await gateway.charge(req);
    const captureId = paymentsOf(id)[0]!.id;
    expect(outcome).toMatchObject({ kind: 'ambiguous', gatewayTransactionId: captureId });
    later(7 * hour);
    const lookup = { ...req, gatewayTransactionId: captureId };
    await expect(gateway.lookup(lookup)).rejects.toThrow(/is PENDING/);
    later(4 * 24 * hour);
    expect(await gateway.lookup(lookup)).toEqual({ kind: 'approved', gatewayTransactionId: captureId });
    expect(paymentsOf(id)).toHaveLength(1);
  });

  it.each(['billing-agreement', 'reference'] as const)(
    'a lookup whose request, sent again, finds the payment pending (%s) throws PaymentPendingError naming it, so later lookups can read it by its id',
    async (via) => {
      emulator.settleAfter(hour);
      const { id, req } = sourceWith(['server_error', 'pending'], via);
      expect(await gateway.charge(req)).toMatchObject({ kind: 'ambiguous' });
      // The first lookup makes the attempt's payment; the second gets it back under the same key (NVP: error
      // 11607 with its pending fields); reading it by its id finds it pending too.
      const pendingIn = async (lookup: LookupRequest) => {
        const error = await gateway.lookup(lookup).catch((e: unknown) => e);
        assert(error instanceof PaymentPendingError, `not a pending payment: ${String(error)}`);
        return error.gatewayTransactionId;
      };
      const named = await pendingIn(req);
      expect(paymentsOf(id)).toEqual([expect.objectContaining({ id: named, status: 'PENDING' })]);
      expect(await pendingIn(req)).toBe(named);
      expect(await pendingIn({ ...req, gatewayTransactionId: named })).toBe(named);
      expect(paymentsOf(id)).toHaveLength(1);
    },
  );

  it.each([
    ['billing-agreement', /404 INVALID_RESOURCE_ID/],
    ['reference', /10004/],
  ] as const)(
    'a payment (%s) read by an id PayPal does not know fails the lookup, never reads as nothing paid',
    async (via, error) => {
      const { req } = sourceWith(['complete'], via);
      await expect(gateway.lookup({ ...req, gatewayTransactionId: '0NOSUCHPAYMENT00' })).rejects.toThrow(
        error,
      );
    },
  );

  it('once PayPal has forgotten the request id (6 hours later), its duplicate-invoice block stops a second payment and a lookup that knows no id keeps failing', async () => {
    const { id, req } = sourceWith(['lost', 'complete']);
    expect((await gateway.charge(req)).kind).toBe('ambiguous');
    later(5 * hour);
    expect((await gateway.lookup(req)).kind).toBe('approved');
    later(2 * hour);
    await expect(gateway.lookup(req)).rejects.toThrow(/duplicate invoice id/);
    expect(paymentsOf(id)).toHaveLength(1);
  });

  it('wrong app credentials throw (the activity retries; the Temporal UI shows why), nothing paid', async () => {
    const { id, req } = sourceWith(['complete']);
    const wrong = createPayPalGateway({
      ...PayPalCredentials.parse(emulator.credentials),
      clientId: 'another-app',
    });
    await expect(wrong.charge(req)).rejects.toThrow();
    expect(paymentsOf(id)).toHaveLength(0);
  });
});

describe('PayPal adapter: a reference token is an NVP reference transaction', () => {
  it('an approved reference transaction is a Sale under the attempt key (MSGSUBID within 38 characters)', async () => {
    const { id, req } = sourceWith(['complete'], 'reference');
    const outcome = await gateway.charge({ ...req, idempotencyKey: `recovery/acct/${'r'.repeat(40)}/1` });
    const [payment] = paymentsOf(id);
    expect(outcome).toEqual({ kind: 'approved', gatewayTransactionId: payment!.id });
    expect(payment).toMatchObject({ via: 'reference', amount: '49.00', currency: 'USD' });
    expect(payment!.requestId).toMatch(/^[0-9a-f]{38}$/);
  });

  it.each([
    ['10201', 'revocation_of_authorization'],
    ['10204', 'account_closed'],
    ['10417', 'generic_decline'],
    ['10207', 'try_again_later'],
  ])('NVP error %s is declined as %s', async (errorCode, code) => {
    const { req } = sourceWith([{ refuse: errorCode }], 'reference');
    expect(await gateway.charge(req)).toMatchObject({ kind: 'declined', code });
  });

  it('a reference transaction PayPal denies is declined, with its transaction id', async () => {
    const { id, req } = sourceWith([{ capture: 'DECLINED' }], 'reference');
    const outcome = await gateway.charge(req);
    expect(outcome).toEqual({
      kind: 'declined',
      code: 'generic_decline',
      advice: null,
      gatewayTransactionId: paymentsOf(id)[0]!.id,
    });
  });

  it('a lost answer is ambiguous; the same MSGSUBID is answered by error 11607 with the earlier payment’s fields, read as that payment', async () => {
    const { id, req } = sourceWith(['lost'], 'reference');
    expect(await gateway.charge(req)).toMatchObject({ kind: 'ambiguous', reason: /PayPal NVP/ });
    const approved = { kind: 'approved', gatewayTransactionId: paymentsOf(id)[0]!.id };
    expect(await gateway.lookup(req)).toEqual(approved);
    expect(await gateway.charge(req)).toEqual(approved);
    expect(paymentsOf(id)).toHaveLength(1);
  });

  it('a pending reference transaction is ambiguous, named by its TRANSACTIONID, and read by it (GetTransactionDetails) until completed, days after PayPal has forgotten the MSGSUBID', async () => {
    emulator.settleAfter(4 * 24 * hour);
    const { id, req } = sourceWith(['pending', 'complete'], 'reference');
    const outcome = await gateway.charge(req);
    const transactionId = paymentsOf(id)[0]!.id;
    expect(outcome).toEqual({
      kind: 'ambiguous',
      reason: `PayPal payment ${transactionId} is pending (echeck)`,
      gatewayTransactionId: transactionId,
    });
    later(7 * hour);
    const lookup = { ...req, gatewayTransactionId: transactionId };
    await expect(gateway.lookup(lookup)).rejects.toThrow(/pending \(echeck\)/);
    later(4 * 24 * hour);
    expect(await gateway.lookup(lookup)).toEqual({ kind: 'approved', gatewayTransactionId: transactionId });
    expect(paymentsOf(id)).toHaveLength(1);
  });

  it.each([
    ['10009', 'an error code not known as a decline is no answer: the lookup fails', null],
    ['10417', 'a code known as a decline is the attempt’s decline', 'generic_decline'],
  ])('in a lookup, NVP error %s: %s', async (errorCode, _what, code) => {
    const { req } = sourceWith(['server_error', { refuse: errorCode }], 'reference');
    expect((await gateway.charge(req)).kind).toBe('ambiguous');
    if (code) expect(await gateway.lookup(req)).toMatchObject({ kind: 'declined', code });
    else await expect(gateway.lookup(req)).rejects.toThrow(new RegExp(errorCode));
  });

  it('a 500 is ambiguous; a pending payment fails the lookup until completed; one payment in all', async () => {
    emulator.settleAfter(60 * 60_000);
    const { id, req } = sourceWith(['server_error', 'pending'], 'reference');
    expect(await gateway.charge(req)).toMatchObject({ kind: 'ambiguous', reason: /500/ });
    await expect(gateway.lookup(req)).rejects.toThrow(/pending \(echeck\)/);
    emulator.settleAfter(0);
    expect((await gateway.lookup(req)).kind).toBe('approved');
    expect(paymentsOf(id)).toHaveLength(1);
  });

  it('NVP 10412 (a payment already made for the attempt’s invoice id) is ambiguous, never a decline to charge again', async () => {
    const { id, req } = sourceWith([{ refuse: '10412' }], 'reference');
    expect(await gateway.charge(req)).toMatchObject({
      kind: 'ambiguous',
      reason: /already has a payment under this attempt/,
    });
    expect(paymentsOf(id)).toHaveLength(0);
  });

  it('once PayPal has forgotten the MSGSUBID, its duplicate-invoice block (10412) stops a second payment and a lookup that knows no id keeps failing', async () => {
    const { id, req } = sourceWith(['lost', 'complete'], 'reference');
    expect((await gateway.charge(req)).kind).toBe('ambiguous');
    later(7 * hour);
    await expect(gateway.lookup(req)).rejects.toThrow(/duplicate invoice id, NVP 10412/);
    await expect(gateway.lookup(req)).rejects.toThrow(/10412/);
    expect(paymentsOf(id)).toHaveLength(1);
  });

  it('wrong NVP credentials throw, nothing paid', async () => {
    const { id, req } = sourceWith(['complete'], 'reference');
    const wrong = createPayPalGateway({
      ...PayPalCredentials.parse(emulator.credentials),
      nvpPassword: 'wrong',
    });
    await expect(wrong.charge(req)).rejects.toThrow(/10002/);
    expect(paymentsOf(id)).toHaveLength(0);
  });
});

describe('PayPal adapter: what it offers and how it is configured', () => {
  const { nvpUser, nvpPassword, nvpSignature, ...rest } = {
    clientId: 'app',
    clientSecret: 'secret',
    environment: 'live',
    nvpUser: 'u',
    nvpPassword: 'p',
    nvpSignature: 's',
  };

  it("charges PayPal's currencies and PayPal wallets; no card form, updater or cards on file", () => {
    expect(gateway.capabilities).toMatchObject({ wallets: ['paypal'] });
    expect(gateway.capabilities.currencies).toContain('EUR');
    expect(gateway.capabilities.currencies).not.toContain('INR');
    for (const optional of ['tokenize', 'hostedCardForm', 'refreshCard', 'listCards'])
      expect(optional in gateway).toBe(false);
  });

  it('routing takes PayPal wallets and agreements to it, and reference tokens only when it has NVP credentials', () => {
    const withoutNvp = createPayPalGateway(PayPalCredentials.parse(rest));
    const gateways = [
      { name: 'paypal', kind: 'paypal' as const, ...withoutNvp.capabilities },
      { name: 'paypal-2', kind: 'paypal' as const, ...gateway.capabilities },
    ];
    const route = (token: string, currency = 'USD') =>
      routeOptions(gateways, token, 'paypal', [], currency).map((o) => o.gateway);
    expect(route('billing-agreement|B-1AB12345CD678901E')).toEqual(['paypal', 'paypal-2']);
    expect(route('reference|9XY10123ABCD4567')).toEqual(['paypal-2']);
    expect(route('billing-agreement|B-1AB12345CD678901E', 'INR')).toEqual([]);
  });

  it.each([
    [{ clientId: 'a', environment: 'sandbox' }, /clientSecret/],
    [{ ...rest, environment: 'test' }, /environment/],
    [{ ...rest, apiBase: 'http://127.0.0.1:1' }, /apiBase/],
    [{ ...rest, nvpUser }, /nvpUser, nvpPassword and nvpSignature go together/],
    [{ ...rest, nvpUser, nvpPassword }, /go together/],
    [{ ...rest, extra: 'x' }, /extra/],
  ])('credentials %j are refused by the operator CLI', (credentials, problem) => {
    expect(credentialsProblem('paypal', credentials as Record<string, string>)).toMatch(problem);
    expect(() => parseGateways(`paypal:${JSON.stringify(credentials)}`, [])).toThrow(problem);
  });

  it('a PayPal gateway is configured by the operator CLI, with or without NVP credentials', () => {
    const all = { ...rest, nvpUser, nvpPassword, nvpSignature };
    for (const credentials of [rest, all])
      expect(parseGateways(`paypal:${JSON.stringify(credentials)}`, [])).toEqual([
        { name: 'paypal', kind: 'paypal', test: false, credentials },
      ]);
  });
});

describe('PayPal answers: a payment refunded or reversed since it was taken was still collected', () => {
  it.each(['REFUNDED', 'PARTIALLY_REFUNDED', 'COMPLETED'])('a capture %s is approved', (status) => {
    expect(captureAnswer({ id: 'CAP1', status } as Parameters<typeof captureAnswer>[0])).toEqual({
      kind: 'approved',
      gatewayTransactionId: 'CAP1',
    });
  });

  it.each(['Refunded', 'Partially-Refunded', 'Reversed', 'Canceled-Reversal', 'Completed'])(
    'a reference transaction %s is approved',
    (status) => {
      expect(paymentAnswer('TX1', status, '')).toEqual({ kind: 'approved', gatewayTransactionId: 'TX1' });
    },
  );

  it('a status PayPal has not settled stays no answer, naming the payment to read again', () => {
    expect(paymentAnswer('TX1', 'Pending', 'echeck')).toMatchObject({ paymentId: 'TX1' });
  });
});
