import type { PaymentMethodType } from '../../domain/gateway-kinds.js';

/** One charge's result in our own terms; adapters translate gateway responses into this at the edge. */
export type ChargeOutcome =
  | { kind: 'approved'; gatewayTransactionId: string }
  | {
      kind: 'declined';
      code: string;
      advice: string | null;
      gatewayTransactionId: string | null;
      /**
       * The gateway refused the payment method itself before any charge (it does not know the token: deleted,
       * or the key of another account; or it will not charge it any more: blocked by the gateway, a mandate
       * replaced): this recovery cannot charge it, but no issuer said anything about the card, so it is not
       * remembered as blocked.
       */
      tokenRefused?: true;
    }
  /**
   * Timeout, 5xx or a lost response: the charge may or may not have happened. Or a payment the gateway has
   * taken but not settled (pending), which it names: its lookup reads it by that id.
   */
  | { kind: 'ambiguous'; reason: string; gatewayTransactionId?: string };

/** A gateway's definite answer to a charge. */
export type ChargeAnswer = Exclude<ChargeOutcome, { kind: 'ambiguous' }>;

/** What a lookup by idempotency key finds. */
export type LookupOutcome = ChargeAnswer | { kind: 'not_found' };

/**
 * A lookup that found the attempt's payment but no outcome yet (pending: an eCheck, a review), naming it by
 * the gateway's id. Thrown, so the lookup is tried again; the id is kept with the attempt, and every later
 * lookup of it reads the payment by that id (`LookupRequest.gatewayTransactionId`) instead of sending the
 * request again, which the gateway may answer differently once it has forgotten the request's key.
 */
export class PaymentPendingError extends Error {
  override name = 'PaymentPendingError';
  constructor(
    message: string,
    readonly gatewayTransactionId: string,
  ) {
    super(message);
  }
}

/** A decline with its code, the network's advice code and the gateway's id for it (each may be missing). */
export const declined = (code: string, advice: string | null, id: string | null): ChargeAnswer => ({
  kind: 'declined',
  code,
  advice,
  gatewayTransactionId: id,
});

/** A payment method the gateway refuses before charging (see `tokenRefused`): no longer chargeable here. */
export const refusedToken = (): ChargeAnswer => ({
  kind: 'declined',
  code: 'card_no_longer_chargeable',
  advice: null,
  gatewayTransactionId: null,
  tokenRefused: true,
});

/**
 * An amount the gateway will not charge as asked (one it cannot express exactly in its units, or outside
 * its limits), refused with nothing charged: that payment method is not tried again for it, while another
 * gateway or payment method still may be.
 */
export const unchargeableAmount = (): ChargeAnswer => declined('invalid_amount', null, null);

/**
 * A charge the gateway refused as it was sent, with nothing charged, and would refuse the same way every
 * time (a parameter or a setting it will not take: a currency the account does not charge, a field it
 * rejects): declined `request_refused`, which the engine does not retry on that payment method, where an
 * error would be retried for ever.
 */
export const refusedRequest = (): ChargeAnswer => declined('request_refused', null, null);

/**
 * The charge whose answer was lost: its idempotency key, the token, amount and currency it charged (a
 * gateway whose only lookup is resending the same request needs them), and when it was sent.
 */
export interface LookupRequest {
  idempotencyKey: string;
  token: string;
  amount: number;
  currency: string;
  /** Epoch ms, the recovery's clock: when the try whose answer was lost was sent. */
  sentAt: number;
  /**
   * When the attempt was first sent, from durable storage (as `ChargeRequest.firstSentAt`): earlier than
   * `sentAt` when a worker that replayed the workflow sent the attempt again.
   */
  firstSentAt?: number;
  /**
   * The gateway's id of the payment, when the charge's ambiguous outcome or an earlier lookup (its
   * PaymentPendingError) named one: the payment is read by it.
   */
  gatewayTransactionId?: string;
  /** The billing platform's subscription the charge went through (Braintree's recurring billing). */
  subscriptionId?: string;
  /**
   * A stop (paid elsewhere, not owed) was asked while the charge's answer was lost: the lookup may only
   * read, never make the payment. A gateway whose lookup would otherwise send the request again (which
   * makes the attempt's one payment if the first never reached the gateway) reads instead, and answers
   * `not_found` when its read finds none: nothing was charged, and now nothing will be. A lookup that only
   * reads anyway (Stripe, Braintree, a payment read by its `gatewayTransactionId`) is the same either way;
   * one that cannot read a payment without sending its request again (Adyen but for a payment it held and
   * named; PayPal without the payment's id) still sends it: its answer is always recorded, where a
   * `not_found` it cannot know could hide a payment the first request made (docs/gateways.md).
   */
  readOnly?: boolean;
}

export interface ChargeRequest {
  token: string;
  amount: number;
  currency: string;
  paymentMethodType: PaymentMethodType;
  /** Same key ⇒ same charge at the gateway: a retried activity can never charge twice. */
  idempotencyKey: string;
  /** Sandbox only: forces an outcome (the request's simulateOutcome on a test gateway). */
  simulate?: 'success' | 'failed';
  /**
   * When the recovery sent this try of the charge: its workflow's clock (epoch ms). A worker that replays
   * the workflow after another died mid-charge sends it again with a later `sentAt`. Real gateways stamp
   * charges with their own clock; the test gateway's world mode prices the charge at this simulated time.
   */
  sentAt?: number;
  /**
   * When this attempt was first sent (epoch ms, the recovery's clock), read from durable storage (the record
   * every attempt makes before its first try: `store/attempt-sends.ts`), not from the workflow: earlier than
   * `sentAt` when the charge is a retry, also one sent by a worker replaying the workflow after a crash.
   * Braintree tells a retry from a first try by it (by `sentAt` when it is absent); gateways whose keys
   * expire tell a charge sent again after their window by it (Stripe and GoCardless then look the attempt
   * up first, Adyen sends nothing); Adyen builds the attempt's request as it was first sent.
   */
  firstSentAt?: number;
  /**
   * The subscription of the gateway's own recurring billing that owes the payment (a Braintree connector's
   * recovery): the charge goes through it, so it clears the subscription's balance. Gateways without
   * recurring billing of their own never get one.
   */
  subscriptionId?: string;
}

/** Card details typed by the customer on the hosted page; held in memory only, never stored or logged. */
export interface CardDetails {
  number: string; // digits only
  expMonth: number;
  expYear: number; // four digits
  cvc: string;
}

/** A tokenized card (gateway-native token and card brand), or the gateway's refusal code. */
export type TokenizeOutcome = { token: string; brand: string } | { error: string };

/** A card the customer saved in a gateway's own form. */
export interface SavedCard {
  token: string;
  brand: string;
  last4: string;
}

/**
 * A card form the gateway hosts itself, for gateways that take card data only in their own form: the
 * customer leaves for it and comes back to `returnUrl` with the session's id in the `session` parameter.
 */
export interface HostedCardForm {
  /**
   * Opens the form for the owner of `token`, for payments in `currency`; `reference` ties the session to
   * the link that opened it, and the form closes after `openForMs` (the link's remaining life) as far as
   * the gateway allows.
   */
  start(req: {
    token: string;
    currency: string;
    reference: string;
    returnUrl: string;
    cancelUrl: string;
    openForMs: number;
  }): Promise<{ url: string }>;
  /** The card saved in `session`, or null while it is not finished or was not opened for `reference`. */
  finish(session: string, reference: string): Promise<SavedCard | null>;
}

/** A card a gateway keeps for a customer, with its expiry: what the card health sweep looks at. */
export interface CardOnFile {
  token: string;
  brand: string;
  last4: string;
  expMonth: number;
  expYear: number;
  customerEmail: string | null;
}

/** One page of a gateway's cards on file; `next` continues the listing, null after the last page. */
export interface CardPage {
  cards: CardOnFile[];
  next: string | null;
}

/** What a gateway can do; the planner routes by it. */
export interface GatewayCapabilities {
  /** Wallet types this gateway can charge for recurring payments (card is always supported). */
  wallets: PaymentMethodType[];
  /** Currencies (ISO 4217, upper case) it can charge in; null for every currency. */
  currencies: readonly string[] | null;
  /**
   * Which tokens of its kind's shapes this gateway's credentials can charge (PayPal's reference
   * transactions need NVP credentials); absent: all of them.
   */
  takesToken?: (token: string) => boolean;
}

/** A payment gateway behind one small interface. */
export interface GatewayAdapter {
  readonly capabilities: GatewayCapabilities;
  charge(req: ChargeRequest): Promise<ChargeOutcome>;
  /**
   * Finds what became of a charge whose answer was lost, without ever charging it twice: a read at gateways
   * that can look a charge up; at a gateway whose idempotency only replays (Adyen), the same request with
   * the same key, which answers with the first result and charges only if the first never arrived (not at a
   * gateway that can read, when `readOnly`: a stop was asked). Throws PaymentPendingError when it found the
   * payment but the gateway has not settled it yet.
   */
  lookup(req: LookupRequest): Promise<LookupOutcome>;
  /**
   * Account updater: a fresh token for an expired card, or null when the network has none. Absent when the
   * gateway offers no updater that yields a new token.
   */
  refreshCard?(token: string): Promise<string | null>;
  /**
   * Turns card details into a reusable gateway token (hosted card-update page). Absent when the gateway
   * collects card data in its own client-side form, so that it never passes through Recoup.
   */
  tokenize?(card: CardDetails, customer: { email: string | null }): Promise<TokenizeOutcome>;
  /** The gateway's own card form, for the hosted card-update page when the gateway has no `tokenize`. */
  readonly hostedCardForm?: HostedCardForm;
  /**
   * The account's cards on file with their expiry, a page at a time from the cursor `after` (null: the
   * first page), for the card health sweep. Absent when the gateway cannot list them.
   */
  listCards?(after: string | null): Promise<CardPage>;
}
