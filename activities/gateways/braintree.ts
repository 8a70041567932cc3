import braintree from 'braintree';
import { z } from 'zod';
import { currencyCodes, majorUnitsOf } from '../../domain/money.js';
import {
  isUnansweredSale,
  notPastDue,
  outcomeOf,
  validationAnswer,
  type Transaction,
} from './braintree-answers.js';
import {
  type CardOnFile,
  type CardPage,
  type ChargeAnswer,
  type ChargeOutcome,
  type ChargeRequest,
  type GatewayAdapter,
  type LookupOutcome,
  type LookupRequest,
} from './types.js';

const merchantAccountList = /^[A-Z]{3}:[A-Za-z0-9_-]+(,[A-Z]{3}:[A-Za-z0-9_-]+)*$/;

/**
 * A Braintree gateway's credentials: the merchant id and an API key pair, the environment, the merchant
 * account to charge each currency through (a Braintree merchant account settles in one currency) and,
 * optionally, another API base URL (a proxy, or an emulator in tests).
 */
export const BraintreeCredentials = z
  .object({
    merchantId: z.string().regex(/^[A-Za-z0-9]+$/, 'must be a Braintree merchant id'),
    publicKey: z.string().min(1),
    privateKey: z.string().min(1),
    environment: z.enum(['sandbox', 'production']),
    merchantAccounts: z
      .string()
      .regex(
        merchantAccountList,
        'must list CURRENCY:merchantAccountId pairs, e.g. USD:acme_usd,EUR:acme_eur',
      )
      .refine(
        (list) => merchantAccountsOf(list).size === list.split(',').length,
        'must name each currency once',
      )
      .refine(
        (list) => [...merchantAccountsOf(list).keys()].every((c) => currencyCodes.has(c)),
        'must use ISO 4217 currency codes',
      ),
    apiBase: z.url({ protocol: /^https?$/ }).optional(),
  })
  .strict();
export type BraintreeCredentials = z.infer<typeof BraintreeCredentials>;

/** `USD:acme_usd,EUR:acme_eur` → currency → merchant account id. */
function merchantAccountsOf(list: string): Map<string, string> {
  return new Map(
    list.split(',').map((pair) => {
      const [currency = '', account = ''] = pair.split(':');
      return [currency, account];
    }),
  );
}

/** Braintree's official client for these credentials. */
export function braintreeClient(credentials: BraintreeCredentials): braintree.BraintreeGateway {
  const base = credentials.apiBase ? new URL(credentials.apiBase) : null;
  const environment = base
    ? new braintree.Environment(
        base.hostname,
        base.port || (base.protocol === 'https:' ? '443' : '80'),
        base.origin,
        base.protocol === 'https:',
        base.hostname,
        base.port,
      )
    : credentials.environment === 'production'
      ? braintree.Environment.Production
      : braintree.Environment.Sandbox;
  const gateway = new braintree.BraintreeGateway({
    environment,
    merchantId: credentials.merchantId,
    publicKey: credentials.publicKey,
    privateKey: credentials.privateKey,
  });
  // The SDK waits 60 s by default; a charge must be answered (or given up as ambiguous) inside the charge
  // activity's 45 s.
  Object.assign(gateway.config as object, { timeout: 20_000 });
  return gateway;
}

/** `<paymentMethodToken>|<customerId>`, the spec's token shape for vault-based gateways. */
function vaultToken(token: string): { paymentMethodToken: string; customerId: string } {
  const [paymentMethodToken = '', customerId = ''] = token.split('|');
  return { paymentMethodToken, customerId };
}

// The Braintree connector reads a subscription's failed charge as the adapter reads a sale.
export { chargedStatuses, declineCodeOf } from './braintree-answers.js';

/** A sale; `subscriptionId` (a charge of a past-due subscription, as the SDK's retryCharge sends it) is untyped. */
type SaleRequest = braintree.TransactionRequest & { subscriptionId?: string };

const stillAuthorizing: ChargeOutcome = {
  kind: 'ambiguous',
  reason: 'Braintree is still authorizing the sale',
};

/** The part of the SDK's customer search used here (its types leave the search untyped). */
interface CustomerSearch {
  creditCardExpirationDate(): { is(value: string): void };
}

/** How long after a lost request a search that finds no sale is believed: Braintree's index has caught up. */
const searchSettleMs = 2 * 60_000;

/**
 * A charge this long after its attempt was first sent is a retry (the charge activity times out after 45 s;
 * a worker that died mid-charge is replaced after a workflow task timeout); a sooner one meets Braintree's
 * duplicate checking (30 s) or, for a subscription's charge, the subscription, which lists the sale.
 */
const retriedAfterMs = 30_000;

/** Months the card listing covers, this one first. */
const sweepMonths = 5;

/** Braintree's card type names ("American Express") as the brand names Recoup uses elsewhere ("amex"). */
const brands: Record<string, string> = {
  Visa: 'visa',
  MasterCard: 'mastercard',
  'American Express': 'amex',
  Discover: 'discover',
  JCB: 'jcb',
  'Diners Club': 'diners',
  UnionPay: 'unionpay',
};
const brandOf = (cardType: string) => brands[cardType] ?? cardType.toLowerCase();

/**
 * The attempt's result among its transactions (one sale, and any retries of it Braintree rejected as
 * duplicates, or, where the merchant's duplicate checking is off, sold again): a sale that went through
 * wins over any other, whatever the order they are listed in (the customer was charged); then 'pending'
 * while a sale is still authorizing; then a decline; 'none' when Braintree holds no answer.
 */
function resultAmong(transactions: Transaction[]): ChargeAnswer | 'pending' | 'none' {
  const outcomes = transactions.map(outcomeOf);
  const answers = outcomes.filter((o) => typeof o === 'object');
  const approved = answers.find((o) => o.kind === 'approved');
  if (approved) return approved;
  if (outcomes.includes('pending')) return 'pending';
  return answers[0] ?? 'none';
}

/**
 * The answer an earlier try of this attempt got, from the sales the subscription lists with its order id
 * (the try's answer lost before it was stored, and the search, an index, not showing the sale yet: the
 * subscription's own list does not lag); null when it lists none.
 */
function earlierTryOf(subscription: braintree.Subscription, idempotencyKey: string): ChargeOutcome | null {
  const ours = (subscription.transactions ?? []).filter((t) => t.orderId === idempotencyKey);
  const result = resultAmong(ours);
  if (result === 'none') return null;
  return result === 'pending' ? stillAuthorizing : result;
}

/**
 * Braintree through its official SDK (`braintree`): each attempt is one sale of the vaulted payment method
 * (`transactionSource: recurring`, submitted for settlement at once) through the merchant account of the
 * payment's currency, with the attempt's idempotency key as its order id. Braintree's request keys
 * (At-Most-Once processing) are not open to every merchant, so the order id is what makes a retried
 * attempt safe: before a sale the adapter searches for a transaction with that order id (an earlier try of
 * the same attempt whose worker died) and answers with it instead of selling again; a charge 30 s or more
 * after the attempt was first sent (`firstSentAt`) does not sell when the search shows nothing, since the
 * index may lag; Braintree's duplicate checking (same amount, order id and card within its window) catches
 * a retry that comes sooner, and a subscription the first try paid lists that sale. A lost answer is
 * ambiguous and is looked up by the same search. Declines carry Braintree's processor response code as
 * Recoup's decline name and Mastercard's merchant advice code; errors of configuration (keys, merchant
 * account) throw. Braintree's account updater updates vaulted cards in place, so there is no token to
 * refresh; it takes card data only in its client-side components, so there is no `tokenize` (the merchant's
 * own form collects cards). Cards on file come from its customer search by card expiry.
 */
export function createBraintreeGateway(credentials: BraintreeCredentials, clock: () => Date): GatewayAdapter {
  const gateway = braintreeClient(credentials);
  const merchantAccounts = merchantAccountsOf(credentials.merchantAccounts);

  /** Transactions carrying the attempt's key as their order id, on the token's customer. */
  async function transactionsOf(idempotencyKey: string, token: string): Promise<Transaction[]> {
    const { customerId } = vaultToken(token);
    const found: Transaction[] = [];
    const stream = gateway.transaction.search((search) => {
      search.orderId().is(idempotencyKey);
      search.customerId().is(customerId);
    });
    for await (const transaction of stream) found.push(transaction as Transaction);
    return found;
  }

  /** The attempt's result among the transactions the search finds with its order id. */
  async function resultOf(req: {
    idempotencyKey: string;
    token: string;
  }): Promise<ChargeAnswer | 'pending' | 'none'> {
    return resultAmong(await transactionsOf(req.idempotencyKey, req.token));
  }

  /**
   * How the sale reaches the card: a subscription's charge goes through the subscription (after putting a
   * card the customer saved since on it), which clears its balance. A subscription that lists a sale of
   * this attempt is not charged again: the answer is that sale's (paid, declined or still authorizing);
   * one no longer past due otherwise (collected by Braintree's own retry, or cancelled) is `notPastDue`.
   */
  async function sourceOf(req: ChargeRequest): Promise<Omit<SaleRequest, 'amount'> | ChargeOutcome> {
    const { paymentMethodToken, customerId } = vaultToken(req.token);
    if (req.subscriptionId) {
      const subscription = await gateway.subscription.find(req.subscriptionId);
      const earlier = earlierTryOf(subscription, req.idempotencyKey);
      if (earlier) return earlier;
      if (subscription.status !== 'Past Due') return notPastDue;
      if (subscription.paymentMethodToken !== paymentMethodToken) {
        const moved = await gateway.subscription.update(req.subscriptionId, { paymentMethodToken });
        if (!moved.success) throw new Error(`Braintree kept the subscription's card: ${moved.message}`);
      }
      return { subscriptionId: req.subscriptionId };
    }
    const merchantAccountId = merchantAccounts.get(req.currency);
    // Routing only sends a payment to a gateway that has a merchant account in its currency.
    if (!merchantAccountId) throw new Error(`Braintree has no merchant account for ${req.currency}`);
    return { paymentMethodToken, customerId, merchantAccountId, transactionSource: 'recurring' };
  }

  async function charge(req: ChargeRequest): Promise<ChargeOutcome> {
    // Nothing is charged yet: a failure to search throws, and the activity tries again.
    const earlier = await resultOf(req);
    if (earlier === 'pending') return stillAuthorizing;
    if (earlier !== 'none') return earlier;
    // First sent well before now: a retry of an attempt whose worker died or timed out, and the first try's
    // sale may not be in the search yet. The lookup settles it, never a second sale. `firstSentAt` comes from
    // storage: a worker replaying the workflow after a crash sends the charge with a `sentAt` of its own.
    const firstSentAt = req.firstSentAt ?? req.sentAt;
    if (firstSentAt !== undefined && clock().getTime() - firstSentAt >= retriedAfterMs)
      return {
        kind: 'ambiguous',
        reason: 'A retried attempt: Braintree must show that the first try sold nothing',
      };
    const source = await sourceOf(req);
    if ('kind' in source) return source;
    const sale: SaleRequest = {
      ...source,
      amount: majorUnitsOf(req.amount, req.currency),
      orderId: req.idempotencyKey,
      options: { submitForSettlement: true },
    };
    let result: braintree.ValidatedResponse<braintree.Transaction>;
    try {
      result = await gateway.transaction.sale(sale);
    } catch (error) {
      if (isUnansweredSale(error))
        return { kind: 'ambiguous', reason: `Braintree: ${(error as Error).message}` };
      throw error;
    }
    const transaction = result.transaction as Transaction | undefined;
    if (transaction) {
      const outcome = outcomeOf(transaction);
      if (outcome === 'pending') return stillAuthorizing;
      if (outcome === 'duplicate')
        return { kind: 'ambiguous', reason: 'Braintree rejected a duplicate of a sale with this order id' };
      return outcome;
    }
    return validationAnswer(result.errors.deepErrors());
  }

  async function lookup(req: LookupRequest): Promise<LookupOutcome> {
    const found = await resultOf(req);
    // Still authorizing: no answer yet, so the lookup fails and is retried later.
    if (found === 'pending') throw new Error(`Braintree is still authorizing ${req.idempotencyKey}`);
    if (found !== 'none') return found;
    // Braintree's search is an index a sale reaches shortly after it is made: only a search made well after
    // the lost request may conclude that nothing was sold (the engine would otherwise charge again).
    if (clock().getTime() - req.sentAt < searchSettleMs)
      throw new Error(
        `Braintree shows no sale for ${req.idempotencyKey} yet; looking again before concluding`,
      );
    return { kind: 'not_found' };
  }

  /**
   * The default card of each customer whose card expires in one month, a month to a page: this month, then
   * the next four (the sweep warns at most 90 days ahead), found with Braintree's customer search by card
   * expiry, which also gives the customer's email.
   */
  async function listCards(after: string | null): Promise<CardPage> {
    const index = after === null ? 0 : Number(after);
    const now = clock();
    const month = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + index, 1));
    const expiry = `${String(month.getUTCMonth() + 1).padStart(2, '0')}/${month.getUTCFullYear()}`;
    const cards: CardOnFile[] = [];
    const stream = gateway.customer.search((search: CustomerSearch) =>
      search.creditCardExpirationDate().is(expiry),
    );
    for await (const found of stream) {
      const customer = found as braintree.Customer;
      const card = customer.creditCards?.find((c) => c.default);
      if (!card || `${card.expirationMonth}/${card.expirationYear}` !== expiry) continue;
      cards.push({
        token: `${card.token}|${customer.id}`,
        brand: brandOf(card.cardType),
        last4: card.last4,
        expMonth: Number(card.expirationMonth),
        expYear: Number(card.expirationYear),
        customerEmail: customer.email || null,
      });
    }
    return { cards, next: index + 1 < sweepMonths ? String(index + 1) : null };
  }

  return {
    capabilities: {
      wallets: ['apple_pay', 'google_pay', 'paypal', 'venmo'],
      currencies: [...merchantAccounts.keys()],
    },
    charge,
    lookup,
    listCards,
  };
}
