import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import adyenLibrary from '@adyen/api-library';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AdyenCredentials,
  adyenClient,
  captureAtOnceFrom,
  createAdyenGateway,
} from '../activities/gateways/adyen.js';
import { refusal } from '../activities/gateways/adyen-answers.js';
import { credentialsProblem } from '../activities/gateways/registry.js';
import {
  PaymentPendingError,
  type ChargeRequest,
  type GatewayAdapter,
} from '../activities/gateways/types.js';
import { parseGateways } from '../cli/gateway-spec.js';
import { sha256 } from '../runtime/crypto.js';
import {
  createAdyenAuthorisationStore,
  type AdyenAuthorisation,
  type AdyenAuthorisationStore,
} from '../store/adyen-authorisations.js';
import { startAdyenEmulator, type AdyenEmulator, type EmulatedAnswer } from './support/adyen-emulator.js';
import { scratchDb } from './support/scratch-db.js';

const database = scratchDb('adyen');
let adyen: AdyenEmulator;
let gateway: GatewayAdapter;
let authorisations: AdyenAuthorisationStore;
let n = 0;
const returnUrl = 'https://recoup.example.com';
/** The account the gateway under test belongs to: the one whose AUTHORISATION results it reads. */
const accountId = 'acct_adyen';

beforeAll(async () => {
  adyen = await startAdyenEmulator();
  authorisations = createAdyenAuthorisationStore(database.db());
  gateway = createAdyenGateway(AdyenCredentials.parse(adyen.credentials), returnUrl, (pspReference) =>
    authorisations.find(accountId, pspReference),
  );
});
afterAll(() => adyen.close());

/** A stored card of a fresh shopper, and a charge request for it with a fresh attempt key. */
function cardWith(answers: EmulatedAnswer[], merchantAccount = 'AcmeECOM') {
  n += 1;
  const id = `stored${n}`;
  adyen.addStoredMethod(id, { merchantAccount, shopperReference: `shopper${n}`, answers });
  const req: ChargeRequest & { sentAt: number } = {
    token: `${merchantAccount}|${id}|shopper${n}`,
    amount: 1999,
    currency: 'EUR',
    paymentMethodType: 'card',
    idempotencyKey: `recovery-${n}/1`,
    sentAt: Date.now(),
  };
  return { id, req };
}

const paymentsOf = (id: string) => adyen.payments().filter((p) => p.storedPaymentMethodId === id);

/** An attempt key as recoveries make them: `recovery/<account id>/<transaction id>/<attempt>`, 77 characters. */
const attemptKey = (attemptNo: number, transactionId: string = randomUUID()) =>
  `recovery/acct_${randomBytes(12).toString('hex')}/${transactionId}/${attemptNo}`;

const day = 24 * 60 * 60 * 1000;

describe('Adyen adapter: a charge is one subscription payment of the stored payment method', () => {
  it('an authorised payment names the merchant account, the shopper, the attempt and the amount in minor units', async () => {
    const { id, req } = cardWith(['approve']);
    const outcome = await gateway.charge(req);
    const [payment] = paymentsOf(id);
    expect(outcome).toEqual({ kind: 'approved', gatewayTransactionId: payment!.pspReference });
    expect(payment).toMatchObject({
      merchantAccount: 'AcmeECOM',
      shopperReference: `shopper${n}`,
      reference: req.idempotencyKey,
      idempotencyKey: req.idempotencyKey,
      amount: { value: 1999, currency: 'EUR' },
      shopperInteraction: 'ContAuth',
      recurringProcessingModel: 'Subscription',
      returnUrl,
    });
  });

  it('a retried attempt gets the first answer again from Adyen instead of a second payment', async () => {
    const { id, req } = cardWith(['approve']);
    const first = await gateway.charge(req);
    expect(await gateway.charge(req)).toEqual(first);
    expect(paymentsOf(id)).toHaveLength(1);
  });

  it.each([
    [{ refuse: 'Not enough balance' }, 'insufficient_funds', null],
    [{ refuse: 'Declined Non Generic', advice: '24: Retry after 1 hour' }, 'do_not_honor', '24'],
    [{ refuse: 'Expired Card' }, 'expired_card', null],
    [{ refuse: 'FRAUD' }, 'fraudulent', null],
    [{ refuse: 'Refused', advice: '03: Do not try again' }, 'generic_decline', '03'],
    [
      { refuse: 'Transaction blocked by Adyen to prevent excessive retry fees', code: '46' },
      'excessive_retry',
      null,
    ],
    [{ refuse: 'Transaction blocked', code: '46' }, 'excessive_retry', null],
    ['error', 'processing_error', null],
    ['redirect', 'authentication_required', null],
  ] as const)(
    'a payment answered %j is a decline with code %s and advice %s',
    async (answer, code, advice) => {
      const { id, req } = cardWith([answer]);
      expect(await gateway.charge(req)).toEqual({
        kind: 'declined',
        code,
        advice,
        gatewayTransactionId: paymentsOf(id)[0]!.pspReference,
      });
    },
  );

  it('a stored payment method Adyen does not have (or of another shopper) can never be charged', async () => {
    const { req } = cardWith(['approve']);
    for (const token of ['AcmeECOM|missing|shopper0', req.token.replace(/shopper\d+$/, 'someone-else')])
      expect(await gateway.charge({ ...req, token })).toEqual({
        kind: 'declined',
        code: 'card_no_longer_chargeable',
        advice: null,
        gatewayTransactionId: null,
        tokenRefused: true,
      });
    expect(adyen.payments().filter((p) => p.reference === req.idempotencyKey)).toHaveLength(0);
  });

  it('a request Adyen refuses as invalid (422 validation) is declined request_refused, not thrown for ever', async () => {
    const { id, req } = cardWith([
      { invalid: { errorCode: '000', message: 'Currency not supported by the merchant account' } },
    ]);
    const refused = { kind: 'declined', code: 'request_refused', advice: null, gatewayTransactionId: null };
    expect(await gateway.charge(req)).toEqual(refused);
    expect(await gateway.lookup(req)).toEqual(refused);
    expect(paymentsOf(id)).toHaveLength(0);
  });

  it('a merchant account the key may not use, or a wrong key, throws (the activity retries) and charges nothing', async () => {
    const { id, req } = cardWith(['approve']);
    await expect(gateway.charge({ ...req, token: req.token.replace('AcmeECOM', 'Other') })).rejects.toThrow(
      /Invalid Merchant Account/,
    );
    const wrong = createAdyenGateway(
      AdyenCredentials.parse({ ...adyen.credentials, apiKey: 'AQEwrong' }),
      returnUrl,
      () => Promise.resolve(null),
    );
    await expect(wrong.charge(req)).rejects.toThrow(/401/);
    expect(paymentsOf(id)).toHaveLength(0);
  });
});

describe('Adyen adapter: a connection never made sent nothing, and throws (the activity tries again)', () => {
  /** As the library's HTTP client wraps a socket error: the error's message alone, and status 500. */
  const apiException = (message: string) => ({ name: 'ApiException', message, statusCode: 500 });

  it('a refused connection (ECONNREFUSED) throws, for a charge and a lookup: not ambiguous', async () => {
    const closed = createServer();
    await new Promise<void>((listening) => closed.listen(0, '127.0.0.1', listening));
    const { port } = closed.address() as AddressInfo;
    await new Promise((done) => closed.close(done));
    const unreachable = createAdyenGateway(
      AdyenCredentials.parse({ ...adyen.credentials, apiBase: `https://127.0.0.1:${port}` }),
      returnUrl,
      () => Promise.resolve(null),
    );
    const { req } = cardWith(['approve']);
    await expect(unreachable.charge(req)).rejects.toThrow(/not reached.*ECONNREFUSED/);
    await expect(unreachable.lookup(req)).rejects.toThrow(/not reached.*ECONNREFUSED/);
    // A connection that broke or timed out once made may have carried the request: still ambiguous.
    for (const message of ['socket hang up', 'connect ETIMEDOUT 127.0.0.1:8443'])
      expect(refusal(apiException(message))).toMatchObject({ kind: 'ambiguous' });
  });

  it.each([
    'getaddrinfo ENOTFOUND checkout-test.adyen.com',
    'getaddrinfo EAI_AGAIN checkout-test.adyen.com',
    'connect ECONNREFUSED 127.0.0.1:8443',
  ])('the library’s ApiException(500) %j (a host not found, a connection refused) throws', (message) => {
    expect(() => refusal(apiException(message))).toThrow(/not reached/);
  });
});

describe("Adyen adapter: amounts go in Adyen's minor units, which differ from ISO 4217 for some currencies", () => {
  it.each([
    [5000, 'CLP', 500000, 'CLP 5,000: two decimals at Adyen, none in ISO'],
    [5000, 'ISK', 500000, '5,000 kr: two decimals at Adyen, none in ISO'],
    [12300, 'CVE', 123, '123.00 CVE: no decimals at Adyen'],
    [1500000, 'IDR', 15000, 'Rp 15,000.00: no decimals at Adyen'],
    [1500, 'KWD', 1500, '1.500 KWD: three decimals in both'],
  ])('%i %s (ISO minor units) is sent as %i: %s', async (amount, currency, value) => {
    const { id, req } = cardWith(['approve']);
    expect((await gateway.charge({ ...req, amount, currency })).kind).toBe('approved');
    expect(paymentsOf(id)).toEqual([expect.objectContaining({ amount: { value, currency } })]);
  });

  it.each([
    [12345, 'CVE', '123.45 CVE'],
    [1500050, 'IDR', 'Rp 15,000.50'],
  ])(
    '%i %s (%s) cannot be charged exactly: declined invalid_amount, on its lookup too, nothing sent',
    async (amount, currency) => {
      const { id, req } = cardWith(['approve']);
      const unchargeable = { ...req, amount, currency };
      const declinedHere = {
        kind: 'declined',
        code: 'invalid_amount',
        advice: null,
        gatewayTransactionId: null,
      };
      const sent = adyen.requests();
      expect(await gateway.charge(unchargeable)).toEqual(declinedHere);
      expect(await gateway.lookup(unchargeable)).toEqual(declinedHere);
      expect(adyen.requests()).toBe(sent);
      expect(paymentsOf(id)).toHaveLength(0);
    },
  );
});

describe('Adyen adapter: a lost answer is resolved by sending the same request with the same key', () => {
  it('a payment whose answer is lost is answered by the replay, and Adyen holds one payment', async () => {
    const { id, req } = cardWith(['lost']);
    expect((await gateway.charge(req)).kind).toBe('ambiguous');
    const [payment] = paymentsOf(id);
    expect(await gateway.lookup(req)).toEqual({
      kind: 'approved',
      gatewayTransactionId: payment!.pspReference,
    });
    expect(paymentsOf(id)).toHaveLength(1);
  });

  it('a 500 before processing is ambiguous; the replay is the one payment', async () => {
    const { id, req } = cardWith(['server_error', 'approve']);
    expect((await gateway.charge(req)).kind).toBe('ambiguous');
    expect(paymentsOf(id)).toHaveLength(0);
    expect((await gateway.lookup(req)).kind).toBe('approved');
    expect(await gateway.lookup(req)).toMatchObject({ kind: 'approved' });
    expect(paymentsOf(id)).toHaveLength(1);
  });

  it.each([['server_error'], ['in_flight']] as const)(
    'a %s answer is ambiguous, and a lookup meeting it again has no answer yet: it throws and is retried',
    async (answer) => {
      const { id, req } = cardWith([answer]);
      expect((await gateway.charge(req)).kind).toBe('ambiguous');
      await expect(gateway.lookup(req)).rejects.toThrow(/no answer/);
      expect(paymentsOf(id)).toHaveLength(0);
    },
  );
});

describe("Adyen adapter: attempt keys fit Adyen's limits (Idempotency-Key 64 characters, reference 80)", () => {
  it('a key no header carries (a merchant’s inv-€-✓) is charged once: its SHA-256 the Idempotency-Key, the key itself the reference', async () => {
    const { id, req } = cardWith(['approve', 'approve']);
    const key = `recovery/acct_x/inv-€-✓-${n}/1`;
    const first = await gateway.charge({ ...req, idempotencyKey: key });
    expect(first.kind).toBe('approved');
    expect(await gateway.charge({ ...req, idempotencyKey: key })).toEqual(first);
    expect(paymentsOf(id)).toEqual([
      expect.objectContaining({ reference: key, idempotencyKey: sha256(key) }),
    ]);
  });

  it('Adyen refuses a longer Idempotency-Key or reference with a 422, and charges nothing', async () => {
    const { id } = cardWith(['approve']);
    const payments = new adyenLibrary.CheckoutAPI(adyenClient(AdyenCredentials.parse(adyen.credentials)))
      .PaymentsApi;
    const request = {
      amount: { value: 1999, currency: 'EUR' },
      merchantAccount: 'AcmeECOM',
      reference: 'r'.repeat(80),
      paymentMethod: { storedPaymentMethodId: id },
      shopperReference: `shopper${n}`,
      returnUrl,
    };
    await expect(payments.payments(request, { idempotencyKey: 'k'.repeat(65) })).rejects.toMatchObject({
      statusCode: 422,
      errorCode: '000',
    });
    await expect(
      payments.payments({ ...request, reference: 'r'.repeat(81) }, { idempotencyKey: 'k'.repeat(64) }),
    ).rejects.toMatchObject({ statusCode: 422, errorCode: '000' });
    expect(paymentsOf(id)).toHaveLength(0);
  });

  it("a recovery's attempt key (77 characters) is charged once: the key is the reference, its SHA-256 the Idempotency-Key, and a retry gets the first answer", async () => {
    const { id, req } = cardWith(['approve', 'approve']);
    const key = attemptKey(1);
    expect(key).toHaveLength(77);
    const first = await gateway.charge({ ...req, idempotencyKey: key });
    expect(first.kind).toBe('approved');
    expect(await gateway.charge({ ...req, idempotencyKey: key })).toEqual(first);
    expect(await gateway.lookup({ ...req, idempotencyKey: key })).toEqual(first);
    const payments = paymentsOf(id);
    expect(payments).toHaveLength(1);
    expect(payments[0]!.reference).toBe(key);
    expect(payments[0]!.idempotencyKey).toMatch(/^[0-9a-f]{64}$/);
  });

  it('a key longer than 80 characters (a merchant idempotency key) is its SHA-256 as reference and Idempotency-Key, the same on every try', async () => {
    const { id, req } = cardWith(['approve', 'approve']);
    const key = attemptKey(1, `invoice-${'2024-11-acme-enterprise-annual-'.repeat(3)}`);
    expect(key.length).toBeGreaterThan(80);
    const first = await gateway.charge({ ...req, idempotencyKey: key });
    expect(first.kind).toBe('approved');
    expect(await gateway.charge({ ...req, idempotencyKey: key })).toEqual(first);
    const payments = paymentsOf(id);
    expect(payments).toHaveLength(1);
    expect(payments[0]!.reference).toMatch(/^[0-9a-f]{64}$/);
    expect(payments[0]!.idempotencyKey).toBe(payments[0]!.reference);
  });

  it('the first and second attempts of one recovery (/1 and /2) stay two payments after shortening', async () => {
    const { id, req } = cardWith([{ refuse: 'Not enough balance' }, 'approve']);
    const transactionId = `${randomUUID()}-${'long-merchant-key-'.repeat(3)}`;
    const first = attemptKey(1, transactionId);
    const second = first.replace(/\/1$/, '/2');
    expect((await gateway.charge({ ...req, idempotencyKey: first })).kind).toBe('declined');
    expect((await gateway.charge({ ...req, idempotencyKey: second })).kind).toBe('approved');
    const payments = paymentsOf(id);
    expect(payments.map((p) => p.resultCode)).toEqual(['Refused', 'Authorised']);
    expect(new Set(payments.map((p) => p.reference)).size).toBe(2);
    expect(new Set(payments.map((p) => p.idempotencyKey)).size).toBe(2);
  });
});

describe('Adyen adapter: a payment is captured with its authorisation, on any capture setting', () => {
  const hour = 60 * 60 * 1000;
  /** A gateway whose clock is an hour after `sentAt`, and the request of an attempt first sent then. */
  function sentAt(at: number, answers: EmulatedAnswer[]) {
    const { id, req } = cardWith(answers, 'AcmeManual');
    const adapter = createAdyenGateway(
      AdyenCredentials.parse(adyen.credentials),
      returnUrl,
      (pspReference) => authorisations.find(accountId, pspReference),
      () => new Date(at + hour),
    );
    return { id, adapter, req: { ...req, sentAt: at, firstSentAt: at } };
  }
  const bodiesOf = (key: string) =>
    adyen
      .requestBodies()
      .filter((r) => r.body.reference === key)
      .map((r) => r.body);

  it('a new attempt on a merchant account that captures by hand asks Adyen to capture at once: authorised is captured', async () => {
    const { id, adapter, req } = sentAt(captureAtOnceFrom, ['approve']);
    expect((await adapter.charge(req)).kind).toBe('approved');
    expect(paymentsOf(id)).toEqual([
      expect.objectContaining({ resultCode: 'Authorised', captureDelayHours: 0, captured: true }),
    ]);
  });

  it('a new attempt sent again and looked up sends the same request every time', async () => {
    const { adapter, req } = sentAt(captureAtOnceFrom + hour, ['lost']);
    expect((await adapter.charge(req)).kind).toBe('ambiguous');
    expect((await adapter.lookup(req)).kind).toBe('approved');
    const bodies = bodiesOf(req.idempotencyKey);
    expect(bodies).toHaveLength(2);
    expect(bodies[1]).toEqual(bodies[0]);
    expect(bodies[0]).toMatchObject({ captureDelayHours: 0 });
  });

  it('an attempt first sent before the change is sent again and looked up with the request it was first sent with', async () => {
    const { id, adapter, req } = sentAt(captureAtOnceFrom - hour, ['lost']);
    expect((await adapter.charge(req)).kind).toBe('ambiguous');
    // Its worker died: another sends it again later, then looks it up, both after the change.
    expect((await adapter.charge({ ...req, sentAt: captureAtOnceFrom + hour })).kind).toBe('approved');
    expect((await adapter.lookup({ ...req, sentAt: captureAtOnceFrom + hour })).kind).toBe('approved');
    const bodies = bodiesOf(req.idempotencyKey);
    expect(bodies).toHaveLength(3);
    for (const body of bodies) expect(body).not.toHaveProperty('captureDelayHours');
    expect(paymentsOf(id)).toHaveLength(1);
  });
});

describe('Adyen adapter: a payment Adyen holds without a final result (Received, Pending)', () => {
  it.each([
    ['received', 'Received'],
    ['pending', 'Pending'],
  ] as const)(
    'a payment answered %s is ambiguous and names its PSP reference; its lookup pays nothing more and is pending (retried later)',
    async (answer, resultCode) => {
      const { id, req } = cardWith([answer, 'approve']);
      const charged = await gateway.charge(req);
      const [payment] = paymentsOf(id);
      expect(payment!.resultCode).toBe(resultCode);
      expect(charged).toEqual({
        kind: 'ambiguous',
        reason: expect.stringContaining(`payment ${payment!.pspReference} as ${resultCode}`),
        gatewayTransactionId: payment!.pspReference,
      });
      await expect(gateway.lookup(req)).rejects.toThrow(/AUTHORISATION webhook/);
      expect(paymentsOf(id)).toHaveLength(1);
    },
  );

  it('a lookup once Adyen may have dropped the key (7 days) sends nothing: the same request could be a second payment', async () => {
    const { id, req } = cardWith(['pending', 'approve']);
    const sentAt = Date.now() - 8 * day;
    expect((await gateway.charge({ ...req, sentAt })).kind).toBe('ambiguous');
    adyen.expireKeys();
    const sent = adyen.requests();
    await expect(gateway.lookup({ ...req, sentAt })).rejects.toThrow(/second payment/);
    expect(adyen.requests()).toBe(sent);
    expect(paymentsOf(id)).toHaveLength(1);
  });

  it('a charge sent again once Adyen may have dropped the key (its answer never stored) sends nothing: never a second payment', async () => {
    const { id, req } = cardWith(['approve', 'approve']);
    const firstSentAt = Date.now() - 8 * day;
    expect((await gateway.charge({ ...req, firstSentAt: Date.now() })).kind).toBe('approved');
    adyen.expireKeys();
    const sent = adyen.requests();
    await expect(gateway.charge({ ...req, firstSentAt })).rejects.toThrow(/second payment/);
    expect(adyen.requests()).toBe(sent);
    expect(paymentsOf(id)).toHaveLength(1);
  });

  it("a lookup within the key's validity still replays it: a lost answer six days old is resolved once", async () => {
    const { id, req } = cardWith(['lost', 'approve']);
    const sentAt = Date.now() - 6 * day;
    expect((await gateway.charge({ ...req, sentAt })).kind).toBe('ambiguous');
    expect(await gateway.lookup({ ...req, sentAt })).toMatchObject({ kind: 'approved' });
    expect(paymentsOf(id)).toHaveLength(1);
  });
});

describe("Adyen adapter: a held payment's result comes from Adyen's AUTHORISATION webhook", () => {
  /**
   * A payment Adyen answered Received (first sent at `sentAt`), the lookup request of a recovery that kept
   * its PSP reference, and the AUTHORISATION its webhook brought for it (as stored).
   */
  async function heldPayment(answer: 'received' | 'pending' = 'received', sentAt = Date.now()) {
    const card = cardWith([answer, 'approve']);
    const req = { ...card.req, sentAt };
    const id = card.id;
    const charged = await gateway.charge(req);
    const [payment] = paymentsOf(id);
    expect(charged).toMatchObject({ kind: 'ambiguous', gatewayTransactionId: payment!.pspReference });
    const named = { ...req, firstSentAt: sentAt, gatewayTransactionId: payment!.pspReference };
    const notify = (result: Partial<AdyenAuthorisation>) =>
      authorisations.record(
        accountId,
        {
          pspReference: payment!.pspReference,
          merchantReference: payment!.reference,
          success: true,
          reason: null,
          value: payment!.amount.value,
          currency: payment!.amount.currency,
          eventDate: new Date().toISOString(),
          ...result,
        },
        new Date(),
      );
    return { id, req, named, payment: payment!, notify };
  }

  /** What a lookup that finds the payment still held throws: pending, naming it, so its reference is kept. */
  const pendingNaming = (pspReference: string) => ({
    name: 'PaymentPendingError',
    gatewayTransactionId: pspReference,
  });

  it.each([['received'], ['pending']] as const)(
    'a payment held as %s and authorised is approved with its PSP reference, and nothing more is paid',
    async (answer) => {
      const { id, req, payment, notify } = await heldPayment(answer);
      await notify({ success: true });
      expect(await gateway.lookup(req)).toEqual({
        kind: 'approved',
        gatewayTransactionId: payment.pspReference,
      });
      expect(paymentsOf(id)).toHaveLength(1);
    },
  );

  it.each([
    ['Not enough balance', 'insufficient_funds'],
    ['FRAUD', 'fraudulent'],
    ['Refused', 'generic_decline'],
    ['Transaction blocked by Adyen to prevent excessive retry fees', 'excessive_retry'],
  ])(
    'a held payment refused with %j is declined %s, as the same refusal answered at once is',
    async (reason, code) => {
      const { req, payment, notify } = await heldPayment();
      await notify({ success: false, reason });
      expect(await gateway.lookup(req)).toEqual({
        kind: 'declined',
        code,
        advice: null,
        gatewayTransactionId: payment.pspReference,
      });
    },
  );

  it("with no AUTHORISATION received yet, the replay's lookup is pending and names the PSP reference, so the recovery keeps it", async () => {
    const { req, payment } = await heldPayment();
    const lookup = gateway.lookup(req);
    await expect(lookup).rejects.toThrow(`Adyen holds payment ${payment.pspReference} as Received`);
    await expect(lookup).rejects.toBeInstanceOf(PaymentPendingError);
    await expect(lookup).rejects.toMatchObject(pendingNaming(payment.pspReference));
  });

  it('with the PSP reference known and no AUTHORISATION yet, the lookup is pending and sends nothing, also when a stop was asked', async () => {
    const { named, payment } = await heldPayment();
    const sent = adyen.requests();
    for (const req of [named, { ...named, readOnly: true }])
      await expect(gateway.lookup(req)).rejects.toMatchObject(pendingNaming(payment.pspReference));
    expect(adyen.requests()).toBe(sent);
  });

  it('a payment held for 8 days, its webhook set up only then, is settled by the next lookup: approved with its PSP reference, nothing sent again', async () => {
    const { id, named, payment, notify } = await heldPayment('received', Date.now() - 8 * day);
    adyen.expireKeys();
    const sent = adyen.requests();
    // Day 8, before the operator adds the hmacKey: still pending, read only, never "key may be gone".
    await expect(gateway.lookup(named)).rejects.toMatchObject(pendingNaming(payment.pspReference));
    // Adyen delivers the AUTHORISATION it queued, and Recoup stores it.
    await notify({ success: true });
    expect(await gateway.lookup(named)).toEqual({
      kind: 'approved',
      gatewayTransactionId: payment.pspReference,
    });
    expect(adyen.requests()).toBe(sent);
    expect(paymentsOf(id)).toHaveLength(1);
  });

  it('a payment held for 8 days and refused is declined by the next lookup, read by its PSP reference', async () => {
    const { named, payment, notify } = await heldPayment('pending', Date.now() - 8 * day);
    await notify({ success: false, reason: 'Not enough balance' });
    expect(await gateway.lookup(named)).toEqual({
      kind: 'declined',
      code: 'insufficient_funds',
      advice: null,
      gatewayTransactionId: payment.pspReference,
    });
  });

  it("an AUTHORISATION naming another reference is an error, never the attempt's approval", async () => {
    const { req, notify } = await heldPayment();
    await notify({ merchantReference: 'order-2026-0042' });
    await expect(gateway.lookup(req)).rejects.toThrow(/names order-2026-0042 for \d+ \w+, not/);
  });

  it("an AUTHORISATION of another amount or currency is an error, never the attempt's approval", async () => {
    for (const other of [{ value: 1 }, { currency: 'SEK' }]) {
      const { req, payment, notify } = await heldPayment();
      await notify({ success: true, ...other });
      const { value, currency } = { ...payment.amount, ...other };
      await expect(gateway.lookup(req)).rejects.toThrow(
        `names ${payment.reference} for ${value} ${currency}, not`,
      );
    }
  });

  it("another account's AUTHORISATION of the same PSP reference is not read", async () => {
    const { req, payment } = await heldPayment();
    await authorisations.record(
      'acct_other',
      {
        pspReference: payment.pspReference,
        merchantReference: payment.reference,
        success: true,
        reason: null,
        value: payment.amount.value,
        currency: payment.amount.currency,
        eventDate: new Date().toISOString(),
      },
      new Date(),
    );
    await expect(gateway.lookup(req)).rejects.toThrow(/AUTHORISATION webhook/);
  });
});

describe('Adyen adapter: what it offers and how it is configured', () => {
  it('charges stored cards in any currency; no wallets, no updater token, no card form', () => {
    expect(gateway.capabilities).toEqual({ wallets: [], currencies: null });
    expect('refreshCard' in gateway).toBe(false);
    expect('tokenize' in gateway).toBe(false);
    expect('hostedCardForm' in gateway).toBe(false);
  });

  it.each([
    [{ environment: 'test' }, /apiKey/],
    [{ apiKey: 'k', environment: 'live' }, /liveEndpointUrlPrefix: a live Adyen account needs/],
    [{ apiKey: 'k', environment: 'live', liveEndpointUrlPrefix: 'x y' }, /liveEndpointUrlPrefix: must be/],
    [{ apiKey: 'k', environment: 'test', apiBase: 'http://127.0.0.1:1' }, /apiBase/],
    [{ apiKey: 'k', environment: 'test', extra: 'x' }, /extra/],
    [{ apiKey: 'k', environment: 'test', hmacKey: 'not-hex' }, /hmacKey: must be the hex HMAC key/],
    [{ apiKey: 'k', environment: 'test', hmacKey: 'ABC' }, /hmacKey: must be the hex HMAC key/],
    [{ apiKey: 'k', environment: 'test', hmacKey: 'AB' }, /hmacKey: must be the hex HMAC key/],
    [
      { apiKey: 'k', environment: 'test', hmacKey: 'AB'.repeat(32), notificationUsername: 'u' },
      /notificationPassword: notificationUsername and notificationPassword go together/,
    ],
    [
      { apiKey: 'k', environment: 'test', notificationUsername: 'u', notificationPassword: 'p' },
      /hmacKey: the webhook's basic-auth pair needs its hmacKey/,
    ],
    [
      {
        apiKey: 'k',
        environment: 'test',
        hmacKey: 'AB'.repeat(32),
        notificationUsername: 'a:b',
        notificationPassword: 'p',
      },
      /notificationUsername: must be 1–256 characters without a colon/,
    ],
  ])('credentials %j are refused by the operator CLI', (credentials, problem) => {
    expect(credentialsProblem('adyen', credentials as Record<string, string>)).toMatch(problem);
    expect(() => parseGateways(`adyen:${JSON.stringify(credentials)}`, [])).toThrow(problem);
  });

  it("an Adyen gateway with a live key and prefix, its webhook's HMAC key and basic-auth pair, is configured by the operator CLI", () => {
    const credentials = {
      apiKey: 'AQEkey',
      environment: 'live',
      liveEndpointUrlPrefix: '1797a841fbb37ca7-AcmeECOM',
      hmacKey: '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056',
      notificationUsername: 'adyen-hooks',
      notificationPassword: 'p4ss',
    };
    expect(parseGateways(`adyen:${JSON.stringify(credentials)}`, [])).toEqual([
      { name: 'adyen', kind: 'adyen', test: false, credentials },
    ]);
  });
});
