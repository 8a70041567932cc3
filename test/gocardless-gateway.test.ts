import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createGoCardlessGateway, GoCardlessCredentials } from '../activities/gateways/gocardless.js';
import { credentialsProblem } from '../activities/gateways/registry.js';
import type { ChargeRequest, GatewayAdapter } from '../activities/gateways/types.js';
import { routeOptions } from '../activities/gateways/routing.js';
import { parseGateways } from '../cli/gateway-spec.js';
import { classifyDecline } from '../domain/declines.js';
import { sha256 } from '../runtime/crypto.js';
import {
  startGoCardlessEmulator,
  type EmulatedAnswer,
  type GoCardlessEmulator,
} from './support/gocardless-emulator.js';

let emulator: GoCardlessEmulator;
let gateway: GatewayAdapter;
let n = 0;

beforeAll(async () => {
  emulator = await startGoCardlessEmulator();
  gateway = createGoCardlessGateway(GoCardlessCredentials.parse(emulator.credentials));
});
afterAll(() => emulator.close());
afterEach(() => emulator.settleAfter(0));

/** A mandate whose debits answer `answers`, and a charge request on it with a fresh attempt key. */
function mandateWith(answers: EmulatedAnswer[], currency = 'GBP') {
  n += 1;
  const mandate = `MD00${n}ABC`;
  emulator.addMandate(mandate, answers);
  const req: ChargeRequest & { sentAt: number } = {
    token: mandate,
    amount: 4900,
    currency,
    paymentMethodType: 'card',
    idempotencyKey: `recovery/acct/inv${n}/1`,
    sentAt: Date.now(),
  };
  return { mandate, req };
}

const debitsOf = (mandate: string) => emulator.payments().filter((p) => p.mandate === mandate);
const afterABit = () => new Promise((r) => setTimeout(r, 5));

describe('GoCardless adapter: a charge is one payment against the mandate, answered by the bank days later', () => {
  it('a created payment is ambiguous (the bank has not answered); the lookup finds it collected', async () => {
    const { mandate, req } = mandateWith(['confirm']);
    expect(await gateway.charge(req)).toMatchObject({ kind: 'ambiguous', reason: /collecting the debit/ });
    const [debit] = debitsOf(mandate);
    expect(debit).toMatchObject({
      amount: 4900,
      currency: 'GBP',
      idempotencyKey: req.idempotencyKey,
      metadata: { recoup_attempt: req.idempotencyKey },
    });
    await afterABit();
    expect(await gateway.lookup(req)).toEqual({ kind: 'approved', gatewayTransactionId: debit!.id });
    expect(debitsOf(mandate)).toHaveLength(1);
  });

  it('while the bank has not answered, the lookup fails (and is tried again later)', async () => {
    emulator.settleAfter(3 * 86_400_000);
    const { mandate, req } = mandateWith(['confirm']);
    expect((await gateway.charge(req)).kind).toBe('ambiguous');
    await afterABit();
    await expect(gateway.lookup(req)).rejects.toThrow(/still collecting .* \(submitted\)/);
    expect(debitsOf(mandate)).toHaveLength(1);
  });

  it.each([
    ['insufficient_funds', 'insufficient_funds'],
    ['refer_to_payer', 'do_not_honor'],
    ['bank_account_closed', 'account_closed'],
    ['mandate_cancelled', 'revocation_of_authorization'],
    ['invalid_bank_details', 'invalid_account'],
  ])('a debit the bank fails with cause %s is declined as %s', async (cause, code) => {
    const { mandate, req } = mandateWith([{ fail: cause }]);
    await gateway.charge(req);
    await afterABit();
    expect(await gateway.lookup(req)).toEqual({
      kind: 'declined',
      code,
      advice: null,
      gatewayTransactionId: debitsOf(mandate)[0]!.id,
    });
  });

  it('a retried attempt gets the payment of the first try back (same idempotency key), never a second one', async () => {
    const { mandate, req } = mandateWith(['confirm']);
    await gateway.charge(req);
    await afterABit();
    expect(await gateway.charge(req)).toEqual({
      kind: 'approved',
      gatewayTransactionId: debitsOf(mandate)[0]!.id,
    });
    expect(debitsOf(mandate)).toHaveLength(1);
  });

  it('an inactive mandate is declined at once, with nothing created; the recovery asks for a new mandate', async () => {
    const { mandate, req } = mandateWith(['inactive']);
    expect(await gateway.charge(req)).toEqual({
      kind: 'declined',
      code: 'revocation_of_authorization',
      advice: null,
      gatewayTransactionId: null,
    });
    expect(debitsOf(mandate)).toHaveLength(0);
    expect(classifyDecline('revocation_of_authorization')).toMatchObject({ retryable: false });
  });

  it.each([
    ['a currency other than its scheme’s (EUR on a Bacs mandate)', 'EUR', 4900, 'currency_not_supported'],
    ['an amount over its scheme’s limit', 'GBP', 2_000_001, 'invalid_amount'],
  ])(
    'a payment the mandate can never take, %s, is declined at once and not retried, nothing created',
    async (_, currency, amount, code) => {
      n += 1;
      const mandate = `MD00${n}BACS`;
      emulator.addMandate(mandate, ['confirm'], { name: 'bacs', currency: 'GBP', maxAmount: 2_000_000 });
      const req = { ...mandateWith(['confirm']).req, token: mandate, currency, amount };
      const declinedAs = { kind: 'declined', code, advice: null, gatewayTransactionId: null };
      expect(await gateway.charge(req)).toEqual(declinedAs);
      expect(await gateway.lookup(req)).toEqual(declinedAs);
      expect(debitsOf(mandate)).toHaveLength(0);
      // Another gateway or payment method may take it; this one is never tried again.
      expect(classifyDecline(code)).toMatchObject({ retryable: false, allowsFallback: true });
    },
  );

  it.each([
    ['unknown to GoCardless (deleted, or of the other environment)', null],
    ['replaced by another (the creditor moved it)', 'replaced' as const],
  ])(
    'a mandate %s can never be debited: declined at once as no longer chargeable, nothing created',
    async (_, answer) => {
      const { req } = mandateWith(answer ? [answer] : []);
      const token = answer ? req.token : `MD00${n}GONE`;
      const refused = {
        kind: 'declined',
        code: 'card_no_longer_chargeable',
        advice: null,
        gatewayTransactionId: null,
        tokenRefused: true,
      };
      expect(await gateway.charge({ ...req, token })).toEqual(refused);
      expect(await gateway.lookup({ ...req, token })).toEqual(refused);
      expect(debitsOf(token)).toHaveLength(0);
    },
  );

  it('another field GoCardless refuses is declined request_refused at once: the same request fails every time', async () => {
    const { mandate, req } = mandateWith([{ invalid: 'charge_date' }]);
    expect(await gateway.charge(req)).toEqual({
      kind: 'declined',
      code: 'request_refused',
      advice: null,
      gatewayTransactionId: null,
    });
    expect(debitsOf(mandate)).toHaveLength(0);
    expect(classifyDecline('request_refused')).toMatchObject({ retryable: false, allowsFallback: true });
  });

  it('a key no header carries (a merchant’s inv-€-✓) is sent as its SHA-256; the metadata names the attempt as it is', async () => {
    const { mandate, req } = mandateWith(['confirm']);
    const key = `recovery/acct/inv-€-✓-${n}/1`;
    expect((await gateway.charge({ ...req, idempotencyKey: key })).kind).toBe('ambiguous');
    await afterABit();
    const [debit] = debitsOf(mandate);
    expect(debit).toMatchObject({ idempotencyKey: sha256(key), metadata: { recoup_attempt: key } });
    expect(await gateway.lookup({ ...req, idempotencyKey: key })).toEqual({
      kind: 'approved',
      gatewayTransactionId: debit!.id,
    });
    expect(debitsOf(mandate)).toHaveLength(1);
  });

  it('a key longer than GoCardless takes is sent as its SHA-256, the same on every try', async () => {
    const { mandate, req } = mandateWith(['confirm']);
    const long = { ...req, idempotencyKey: `recovery/acct/${'k'.repeat(150)}/1` };
    await gateway.charge(long);
    await gateway.charge(long);
    const debits = debitsOf(mandate);
    expect(debits).toHaveLength(1);
    expect(debits[0]!.idempotencyKey).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('GoCardless adapter: a lost answer is ambiguous and resolved by the same request, never debited twice', () => {
  it('a payment whose answer is lost is found by its idempotency key', async () => {
    const { mandate, req } = mandateWith(['lost']);
    expect((await gateway.charge(req)).kind).toBe('ambiguous');
    await afterABit();
    expect(await gateway.lookup(req)).toEqual({
      kind: 'approved',
      gatewayTransactionId: debitsOf(mandate)[0]!.id,
    });
    expect(debitsOf(mandate)).toHaveLength(1);
  });

  it('a 500 before anything is created is ambiguous; the lookup creates the one payment of the attempt', async () => {
    const { mandate, req } = mandateWith(['server_error', 'confirm']);
    expect((await gateway.charge(req)).kind).toBe('ambiguous');
    expect(debitsOf(mandate)).toHaveLength(0);
    await expect(gateway.lookup(req)).rejects.toThrow(/still collecting/);
    await afterABit();
    expect((await gateway.lookup(req)).kind).toBe('approved');
    expect(debitsOf(mandate)).toHaveLength(1);
  });

  it('once a stop was asked (readOnly), the lookup only reads: a 500 that created nothing is not_found, and nothing is created', async () => {
    const { mandate, req } = mandateWith(['server_error', 'confirm']);
    expect((await gateway.charge(req)).kind).toBe('ambiguous');
    // GoCardless answers again: the same request would make the debit now, after the customer paid elsewhere.
    expect(await gateway.lookup({ ...req, readOnly: true })).toEqual({ kind: 'not_found' });
    expect(debitsOf(mandate)).toHaveLength(0);
  });

  it('once a stop was asked (readOnly), a payment the lost answer made is still found among the mandate’s: a stop never undoes a charge', async () => {
    const { mandate, req } = mandateWith(['lost']);
    expect((await gateway.charge(req)).kind).toBe('ambiguous');
    await afterABit();
    expect(await gateway.lookup({ ...req, readOnly: true })).toEqual({
      kind: 'approved',
      gatewayTransactionId: debitsOf(mandate)[0]!.id,
    });
    expect(debitsOf(mandate)).toHaveLength(1);
  });

  it('a mandate ended before the lookup had no payment under the key: the lookup says so (declined), creating nothing', async () => {
    const { mandate, req } = mandateWith(['server_error', 'inactive']);
    expect((await gateway.charge(req)).kind).toBe('ambiguous');
    expect(await gateway.lookup(req)).toMatchObject({
      kind: 'declined',
      code: 'revocation_of_authorization',
    });
    expect(debitsOf(mandate)).toHaveLength(0);
  });

  it('a mandate the payer cancelled after a lost answer: the lookup finds the payment already made among the mandate’s, never declined', async () => {
    const { mandate, req } = mandateWith(['lost']);
    emulator.settleAfter(60_000);
    expect((await gateway.charge(req)).kind).toBe('ambiguous');
    emulator.cancelMandate(mandate);
    await afterABit();
    // The debit went to the bank before the mandate ended: still collecting, then collected.
    await expect(gateway.lookup(req)).rejects.toThrow(/still collecting/);
    emulator.settleAfter(0);
    expect(await gateway.lookup(req)).toEqual({
      kind: 'approved',
      gatewayTransactionId: debitsOf(mandate)[0]!.id,
    });
    expect(debitsOf(mandate)).toHaveLength(1);
  });

  it('a lookup days later, once GoCardless may have dropped the key, finds the payment among the mandate’s: never a second debit', async () => {
    emulator.settleAfter(3 * 86_400_000);
    const { mandate, req } = mandateWith(['confirm']);
    expect((await gateway.charge(req)).kind).toBe('ambiguous');
    emulator.forgetKeys();
    await afterABit();
    await expect(gateway.lookup(req)).rejects.toThrow(/still collecting/);
    expect(debitsOf(mandate)).toHaveLength(1);
  });

  it('a charge sent again a day after its first try (its answer never stored) finds the first payment, makes no second', async () => {
    const { mandate, req } = mandateWith(['confirm']);
    expect((await gateway.charge(req)).kind).toBe('ambiguous');
    emulator.forgetKeys();
    await afterABit();
    const later = createGoCardlessGateway(
      GoCardlessCredentials.parse(emulator.credentials),
      () => new Date(req.sentAt + 86_400_000),
    );
    expect(await later.charge({ ...req, firstSentAt: req.sentAt })).toEqual({
      kind: 'approved',
      gatewayTransactionId: debitsOf(mandate)[0]!.id,
    });
    expect(debitsOf(mandate)).toHaveLength(1);
  });

  it('a wrong access token throws (the activity retries; the Temporal UI shows why), nothing created', async () => {
    const { mandate, req } = mandateWith(['confirm']);
    const wrong = createGoCardlessGateway({
      ...GoCardlessCredentials.parse(emulator.credentials),
      accessToken: 'x',
    });
    await expect(wrong.charge(req)).rejects.toThrow(/Unauthorized/);
    expect(debitsOf(mandate)).toHaveLength(0);
  });
});

describe('GoCardless adapter: what it offers and how it is configured', () => {
  it("collects its schemes' currencies, no wallets; no card form, updater or cards on file", () => {
    expect(gateway.capabilities).toEqual({
      wallets: [],
      currencies: ['AUD', 'CAD', 'DKK', 'EUR', 'GBP', 'NZD', 'SEK', 'USD'],
    });
    for (const optional of ['tokenize', 'hostedCardForm', 'refreshCard', 'listCards'])
      expect(optional in gateway).toBe(false);
  });

  it('routing skips it for a currency no scheme of its collects', () => {
    const gateways = [{ name: 'gocardless', kind: 'gocardless' as const, ...gateway.capabilities }];
    const route = (currency: string) =>
      routeOptions(gateways, 'MD001ABC', 'card', [], currency).map((o) => o.gateway);
    expect(route('GBP')).toEqual(['gocardless']);
    expect(route('JPY')).toEqual([]);
  });

  it.each([
    [{ environment: 'sandbox' }, /accessToken/],
    [{ accessToken: 't', environment: 'test' }, /environment/],
    [{ accessToken: 't', environment: 'live', apiBase: 'http://127.0.0.1:1' }, /apiBase/],
    [{ accessToken: 't', environment: 'live', extra: 'x' }, /extra/],
  ])('credentials %j are refused by the operator CLI', (credentials, problem) => {
    expect(credentialsProblem('gocardless', credentials as Record<string, string>)).toMatch(problem);
    expect(() => parseGateways(`gocardless:${JSON.stringify(credentials)}`, [])).toThrow(problem);
  });

  it('a GoCardless gateway is configured by the operator CLI', () => {
    const parsed = parseGateways(
      `gocardless:${JSON.stringify({ accessToken: 'live_x', environment: 'live' })}`,
      [],
    );
    expect(parsed).toEqual([
      {
        name: 'gocardless',
        kind: 'gocardless',
        test: false,
        credentials: { accessToken: 'live_x', environment: 'live' },
      },
    ]);
  });
});
