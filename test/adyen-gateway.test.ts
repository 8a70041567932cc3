import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdyenCredentials, createAdyenGateway } from '../activities/gateways/adyen.js';
import { credentialsProblem } from '../activities/gateways/registry.js';
import type { ChargeRequest, GatewayAdapter } from '../activities/gateways/types.js';
import { parseGateways } from '../cli/gateway-spec.js';
import { startAdyenEmulator, type AdyenEmulator, type EmulatedAnswer } from './support/adyen-emulator.js';

let adyen: AdyenEmulator;
let gateway: GatewayAdapter;
let n = 0;
const returnUrl = 'https://recoup.example.com';

beforeAll(async () => {
  adyen = await startAdyenEmulator();
  gateway = createAdyenGateway(AdyenCredentials.parse(adyen.credentials), returnUrl);
});
afterAll(() => adyen.close());

/** A stored card of a fresh shopper, and a charge request for it with a fresh attempt key. */
function cardWith(answers: EmulatedAnswer[]) {
  n += 1;
  const id = `stored${n}`;
  adyen.addStoredMethod(id, { merchantAccount: 'AcmeECOM', shopperReference: `shopper${n}`, answers });
  const req: ChargeRequest & { sentAt: number } = {
    token: `AcmeECOM|${id}|shopper${n}`,
    amount: 1999,
    currency: 'EUR',
    paymentMethodType: 'card',
    idempotencyKey: `recovery-${n}/1`,
    sentAt: Date.now(),
  };
  return { id, req };
}

const paymentsOf = (id: string) => adyen.payments().filter((p) => p.storedPaymentMethodId === id);

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
      });
    expect(adyen.payments().filter((p) => p.reference === req.idempotencyKey)).toHaveLength(0);
  });

  it('a merchant account the key may not use, or a wrong key, throws (the activity retries) and charges nothing', async () => {
    const { id, req } = cardWith(['approve']);
    await expect(gateway.charge({ ...req, token: req.token.replace('AcmeECOM', 'Other') })).rejects.toThrow(
      /Invalid Merchant Account/,
    );
    const wrong = createAdyenGateway(
      AdyenCredentials.parse({ ...adyen.credentials, apiKey: 'AQEwrong' }),
      returnUrl,
    );
    await expect(wrong.charge(req)).rejects.toThrow(/401/);
    expect(paymentsOf(id)).toHaveLength(0);
  });
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
  ])('credentials %j are refused by the operator CLI', (credentials, problem) => {
    expect(credentialsProblem('adyen', credentials as Record<string, string>)).toMatch(problem);
    expect(() => parseGateways(`adyen:${JSON.stringify(credentials)}`, [])).toThrow(problem);
  });

  it('an Adyen gateway with a live key and prefix is configured by the operator CLI', () => {
    const credentials = {
      apiKey: 'AQEkey',
      environment: 'live',
      liveEndpointUrlPrefix: '1797a841fbb37ca7-AcmeECOM',
    };
    expect(parseGateways(`adyen:${JSON.stringify(credentials)}`, [])).toEqual([
      { name: 'adyen', kind: 'adyen', test: false, credentials },
    ]);
  });
});
