import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { z } from 'zod';
import { paymentMethodTypes, type PaymentMethodType } from '../../domain/gateway-kinds.js';
import type { TestGatewayStore } from '../../store/test-gateway.js';
import type {
  CardDetails,
  CardPage,
  ChargeOutcome,
  ChargeRequest,
  GatewayAdapter,
  LookupOutcome,
  LookupRequest,
  TokenizeOutcome,
} from './types.js';

/**
 * Sandbox tokens (documented in the README):
 *   tok_<anything>                      approved
 *   tok_decline_<code>                  declined with <code> on every charge
 *   tok_decline_<code>_x<n>             declined with <code> on the first n charges of the token, then approved
 *   tok_decline_<code>_mac<NN>          declined with Mastercard merchant advice code NN
 *   tok_decline_expired_card_updatable  expired, and the account updater has a fresh card
 *   tok_timeout                         the charge goes through but the response is lost (ambiguous)
 *   tok_server_error                    the gateway answers 5xx before charging (ambiguous, nothing charged)
 */
const declinePattern =
  /^tok_decline_(?<code>[a-z0-9_]+?)(?:_x(?<times>\d+))?(?:_mac(?<mac>\d{2}))?(?<updatable>_updatable)?$/;

/**
 * Test cards of the hosted card-update page (documented in docs/hosted-pages.md). Any other number is
 * refused with `test_card_required`, so a real card is never accepted by a sandbox.
 */
const testCards: Record<string, { brand: string } | { error: string }> = {
  '4242424242424242': { brand: 'visa' },
  '5555555555554444': { brand: 'mastercard' },
  '4000000000000002': { error: 'card_declined' },
};

const cardPageSize = 100;

/** Per-gateway sandbox settings, from the gateway's credentials. */
export interface TestGatewaySettings {
  latencyMs: number;
  wallets: PaymentMethodType[];
  /** Every charge on this gateway declines with this code (to exercise backup gateways). */
  declineAll: string | null;
}

const wallets = paymentMethodTypes.filter((t) => t !== 'card');

/**
 * The sandbox gateway's "credentials": its settings, checked like every kind's when an operator configures
 * it (a misspelt key or a latency that is not a number is refused, not silently ignored).
 */
export const TestGatewayCredentials = z
  .object({
    latencyMs: z
      .string()
      .regex(/^\d{1,6}$/, 'must be a whole number of milliseconds')
      .optional(),
    wallets: z
      .string()
      .refine(
        (w) => w === '' || w.split(',').every((t) => (wallets as string[]).includes(t)),
        `must be a comma-separated list of ${wallets.join(', ')} (or empty: cards only)`,
      )
      .optional(),
    declineAll: z.string().min(1).optional(),
  })
  .strict();

/**
 * The settings of a configured sandbox gateway. Read leniently: one stored before its settings were checked
 * keeps working (what it cannot read is left at the default) rather than failing every charge.
 */
export function testGatewaySettings(credentials: Record<string, string>): TestGatewaySettings {
  const chosen = credentials.wallets?.split(',');
  return {
    latencyMs: Math.max(0, Number(credentials.latencyMs ?? 0) || 0),
    wallets: chosen === undefined ? wallets : wallets.filter((w) => chosen.includes(w)),
    declineAll: credentials.declineAll ?? null,
  };
}

/** What a world's issuers answer to one charge; `lost` when the answer never reaches Recoup (ambiguous). */
export interface IssuerAnswer {
  approved: boolean;
  code: string | null;
  advice: string | null;
  lost: boolean;
}

/**
 * World mode (the recovery benchmark's `--through-workflows`): the issuers and the account updater of a
 * simulated world answer in place of the token conventions, pricing each charge at the recovery's clock.
 * Answers are keyed by the gateway's idempotency key, so a replayed charge and a lookup find the first one.
 */
export interface IssuerWorld {
  charge(c: { key: string; gateway: string; token: string; sentAt: number }): IssuerAnswer;
  answered(key: string): IssuerAnswer | undefined;
  refresh(token: string): string | null;
}

/**
 * The built-in test gateway: a real adapter with persistent sandbox records, used by sandbox accounts; with
 * `world`, its answers come from that world (set only by the benchmark's composition root).
 */
export function createTestGateway(
  owner: { accountId: string; name: string },
  settings: TestGatewaySettings,
  store: TestGatewayStore,
  world?: IssuerWorld,
): GatewayAdapter {
  const { accountId, name } = owner;
  const keyOf = (idempotencyKey: string) => `${name}|${idempotencyKey}`;
  const adviceOf = (key: string, token: string) =>
    world ? (world.answered(key)?.advice ?? null) : (declinePattern.exec(token)?.groups?.mac ?? null);

  async function decide(
    req: ChargeRequest,
  ): Promise<{ approved: boolean; code: string | null; advice: string | null }> {
    if (world) {
      if (req.sentAt === undefined) throw new Error('A test gateway in world mode needs the charge sentAt');
      const key = keyOf(req.idempotencyKey);
      return world.charge({ key, gateway: name, token: req.token, sentAt: req.sentAt });
    }
    if (req.simulate)
      return {
        approved: req.simulate === 'success',
        code: req.simulate === 'success' ? null : 'card_declined',
        advice: null,
      };
    if (settings.declineAll) return { approved: false, code: settings.declineAll, advice: null };
    const match = declinePattern.exec(req.token)?.groups;
    if (!match?.code) return { approved: true, code: null, advice: null };
    if (match.times) {
      const seen = await store.countForToken(name, req.token);
      if (seen >= Number(match.times)) return { approved: true, code: null, advice: null };
    }
    return { approved: false, code: match.code, advice: match.mac ?? null };
  }

  return {
    capabilities: { wallets: settings.wallets, currencies: null },

    async charge(req: ChargeRequest): Promise<ChargeOutcome> {
      if (req.token === 'tok_server_error') return { kind: 'ambiguous', reason: 'Gateway answered 503' };
      const existing = await store.find(keyOf(req.idempotencyKey));
      const outcome = existing ?? (await decide(req));
      const record =
        existing ??
        (await store.record({
          _id: keyOf(req.idempotencyKey),
          gateway: name,
          token: req.token,
          amount: req.amount,
          currency: req.currency,
          approved: outcome.approved,
          code: outcome.code,
          transactionId: `tgw_${randomUUID()}`,
          isSimulated: true,
          createdAt: new Date(),
        }));
      // The gateway has charged (or declined); its answer takes `latencyMs` to come back.
      if (settings.latencyMs > 0) await delay(settings.latencyMs);
      if (req.token === 'tok_timeout' || world?.answered(record._id)?.lost)
        return { kind: 'ambiguous', reason: 'Gateway timed out' };
      return record.approved
        ? { kind: 'approved', gatewayTransactionId: record.transactionId }
        : {
            kind: 'declined',
            code: record.code ?? 'card_declined',
            advice: adviceOf(record._id, req.token),
            gatewayTransactionId: record.transactionId,
          };
    },

    async lookup({ idempotencyKey }: LookupRequest): Promise<LookupOutcome> {
      const record = await store.find(keyOf(idempotencyKey));
      if (!record) return { kind: 'not_found' };
      return record.approved
        ? { kind: 'approved', gatewayTransactionId: record.transactionId }
        : {
            kind: 'declined',
            code: record.code ?? 'card_declined',
            advice: adviceOf(record._id, record.token),
            gatewayTransactionId: record.transactionId,
          };
    },

    refreshCard(token: string): Promise<string | null> {
      if (world) return Promise.resolve(world.refresh(token));
      return Promise.resolve(
        declinePattern.exec(token)?.groups?.updatable ? `tok_updated_${token.length}` : null,
      );
    },

    /**
     * A new approving token (`tok_<brand>_<random>`) for a test card, kept in the sandbox vault with its
     * brand, last four digits, expiry and the customer's email; the number itself is not kept.
     */
    async tokenize(card: CardDetails, customer: { email: string | null }): Promise<TokenizeOutcome> {
      const known = testCards[card.number] ?? { error: 'test_card_required' };
      if ('error' in known) return known;
      const token = `tok_${known.brand}_${randomBytes(12).toString('hex')}`;
      await store.saveCard({
        _id: token,
        accountId,
        gateway: name,
        brand: known.brand,
        last4: card.number.slice(-4),
        expMonth: card.expMonth,
        expYear: card.expYear,
        customerEmail: customer.email,
        createdAt: new Date(),
      });
      return { token, brand: known.brand };
    },

    /** The cards this account saved in the sandbox vault, 100 at a time. */
    async listCards(after: string | null): Promise<CardPage> {
      const page = await store.listCards(accountId, name, after, cardPageSize);
      return {
        cards: page.map((c) => ({
          token: c._id,
          brand: c.brand,
          last4: c.last4,
          expMonth: c.expMonth,
          expYear: c.expYear,
          customerEmail: c.customerEmail,
        })),
        next: page.length === cardPageSize ? (page.at(-1)?._id ?? null) : null,
      };
    },
  };
}
