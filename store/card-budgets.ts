import type { Db } from 'mongodb';
import {
  maxNetworkCap,
  networkDecision,
  parseAdvice,
  type CardBrand,
  type NetworkDecision,
  type NetworkRules,
} from '../domain/network-rules.js';
import { idsOfAccount } from './account-data.js';
import { collections } from './collections.js';
import { upsert } from './mongo.js';
import { sequence, type SequenceDoc } from './sequence.js';

interface ClaimDoc extends SequenceDoc {
  // _id `${cardKey}:${n}`: the card's n-th attempt
  cardKey: string;
  at: Date;
  attemptKey: string;
}

/**
 * Mastercard's advice about a card, kept beside its claims: its "never again" (03 or 21) for good, under
 * `_id` `${cardKey}:stop`, and its latest wait (02, 24–30) under `${cardKey}:wait`, which no claim number
 * can be. The claims' unique (cardKey, attemptKey) index counts a missing attemptKey as null (MongoDB's
 * rule; FerretDB's differs), so only the stop goes without one: the wait has `waitAttemptKey`, which no
 * attempt's key can be.
 */
interface AdviceDoc {
  _id: string;
  cardKey: string;
  advice: string;
  /** When the decline carrying the advice happened. */
  at: Date;
  attemptKey?: typeof waitAttemptKey;
}

/** The attempt key of the card's wait advice: attempts' keys are `<workflowId>/<n>` or `erased:<n>`. */
const waitAttemptKey = ':wait' as const;

/** The attempt key of a claim whose recovery's customer was erased: `erased:<n>`, unique per card. */
const erasedAttempt = 'erased:';

/** The longest window any network rule counts over. */
const windowMs = 30 * 24 * 3_600_000;
/** As many claims as the largest cap allows in a window: reading this many back judges any cap exactly. */
const maxWindowClaims = maxNetworkCap;

export interface CardClaim {
  /**
   * Identifies one card across recoveries: the caller builds it from the account id and a hash of the
   * payment-method token (never the token itself), e.g. `${accountId}:${sha256(token)}`.
   */
  cardKey: string;
  brand: CardBrand;
  declineCode: string | null;
  advice: string | null;
  /** Unique per attempt (e.g. `${workflowId}/${attemptNo}`): claiming it again returns the same answer. */
  attemptKey: string;
  now: Date;
  /**
   * When the decline carrying `advice` happened; defaults to the card's latest claimed attempt. Pass it when
   * the advice came from the merchant's own charge (no claim yet), or the wait would count from `now`.
   */
  lastAttemptAt?: Date | null;
  rules?: NetworkRules;
}

/**
 * The network rules' answer to a claim. An allowed one carries `claimedAt`, when the attempt was first
 * claimed: the time of its own earlier claim for a retry (the claim is durable and made once per attempt
 * key), else `now`; so it is when the attempt first got past the budget, however often it is retried.
 */
export type ClaimDecision = { allowed: true; claimedAt: Date } | Extract<NetworkDecision, { allowed: false }>;

/**
 * Per-card attempt counters shared by every recovery, exact under any concurrency without atomic updates
 * (FerretDB has none): attempts are numbered claims of their card (see `sequence`). Claim n+1 is inserted
 * only after its claimer asked the network rules with claims 1..n in view, and only once, so no cap can be
 * exceeded; a lost race looks again and decides again. Everything is read by `_id`.
 */
export function createCardBudgetStore(db: Db) {
  const claims = db.collection<ClaimDoc>(collections.cardBudgets);
  const advices = db.collection<AdviceDoc>(collections.cardBudgets);
  const numbered = sequence(claims, { remember: true });
  const adviceIdOf = (cardKey: string, kind: 'stop' | 'wait') => `${cardKey}:${kind}`;

  /** The advice code (03 or 21) that stopped every attempt on the card, or null. */
  async function stopOf(cardKey: string): Promise<string | null> {
    return (await advices.findOne({ _id: adviceIdOf(cardKey, 'stop') }))?.advice ?? null;
  }

  /** The latest wait advice the card got, and when; null if none. */
  async function waitOf(cardKey: string): Promise<{ advice: string; at: number } | null> {
    const wait = await advices.findOne({ _id: adviceIdOf(cardKey, 'wait') });
    return wait && { advice: wait.advice, at: wait.at.getTime() };
  }

  /** The card's claims after `since`, newest first. */
  async function recent(cardKey: string, since: Date): Promise<ClaimDoc[]> {
    return numbered.readDown(cardKey, await numbered.highest(cardKey), (c) => c.at > since, maxWindowClaims);
  }

  return {
    /**
     * Asks the network rules for one more attempt on the card and, if allowed, records it; an allowed answer
     * says when the attempt was first claimed.
     */
    async claim(input: CardClaim): Promise<ClaimDecision> {
      const { cardKey, attemptKey, now } = input;
      // A stop the card met in any recovery stands as this attempt's advice: it outlasts every window. So
      // does a wait it met in another recovery until it is over. Both are read at once, each by its `_id`
      // (an `$in` would be one round trip, but FerretDB scans the collection for it).
      const [stop, wait] = await Promise.all([stopOf(cardKey), waitOf(cardKey)]);
      const advice = stop ?? input.advice;
      const cardWait = stop === null ? wait : null;
      let decision: ClaimDecision = { allowed: true, claimedAt: now };
      await numbered.claim(
        cardKey,
        async (highest) => {
          const inWindow = await numbered.readDown(
            cardKey,
            highest,
            (c) => c.at.getTime() > now.getTime() - windowMs,
            maxWindowClaims,
          );
          // A retried activity finds its own claim: it was counted once, and stays allowed.
          const own = inWindow.find((c) => c.attemptKey === attemptKey);
          if (own) {
            decision = { allowed: true, claimedAt: own.at };
            return false;
          }
          const answer = networkDecision({
            brand: input.brand,
            declineCode: input.declineCode,
            advice,
            priorAttemptsAt: inWindow.map((c) => c.at.getTime()),
            lastAttemptAt: (input.lastAttemptAt ?? inWindow[0]?.at)?.getTime() ?? null,
            cardWait,
            now: now.getTime(),
            ...(input.rules ? { rules: input.rules } : {}),
          });
          decision = answer.allowed ? { allowed: true, claimedAt: now } : answer;
          return decision.allowed;
        },
        () => ({ cardKey, at: now, attemptKey }),
      );
      return decision;
    },

    /**
     * Remembers Mastercard's advice about the card from a decline at `at`, in every recovery of it: after 03
     * or 21 every later claim on the card is refused, and after 02 or 24–30 every claim until the wait is
     * over, as the advice's own recovery is. A wait replaces an earlier one (the issuer's latest word), not
     * a later one (an answer looked up late). Other advice is the recovery's own.
     */
    async rememberAdvice(cardKey: string, { advice, at }: { advice: string; at: Date }): Promise<void> {
      const kind = parseAdvice(advice)?.kind;
      if (kind !== 'stop' && kind !== 'wait') return;
      if (kind === 'wait' && ((await waitOf(cardKey))?.at ?? -Infinity) > at.getTime()) return;
      const _id = adviceIdOf(cardKey, kind);
      const doc = { cardKey, advice, at, ...(kind === 'wait' ? { attemptKey: waitAttemptKey } : {}) };
      await upsert(() => advices.replaceOne({ _id }, doc, { upsert: true }));
    },

    stopOf,

    /**
     * Forgets which recovery made the card's attempts of the given workflows (a customer's erasure): each of
     * their claims keeps its number and time, so the card's budgets hold as before, and its attempt key
     * (`<workflowId>/<attemptNo>`) becomes `erased:<n>`. Claims of other recoveries of the card (one begun
     * since the erasure looked) keep theirs: a retry of their attempt must find its own claim. Returns how
     * many claims changed.
     */
    async forgetAttempts(cardKey: string, workflowIds: readonly string[]): Promise<number> {
      const all = await numbered.readDown(cardKey, await numbered.highest(cardKey), () => true, Infinity);
      const erasedOnes = all.filter((c) => workflowIds.some((id) => c.attemptKey.startsWith(`${id}/`)));
      for (const c of erasedOnes)
        await claims.updateOne({ _id: c._id }, { $set: { attemptKey: `${erasedAttempt}${c.n}` } });
      return erasedOnes.length;
    },

    /**
     * Forgets which recovery made each attempt the account's cards claimed before `cutoff` (data retention),
     * as `forgetAttempts` does for an erasure: the claims keep their numbers and times, and their attempt
     * keys become `erased:<n>`. `cutoff` lies further back than any network rule counts and any recovery
     * runs, so no retry of those attempts can look for its claim; a card's wait advice from before it is
     * deleted. Returns how many claims changed.
     */
    async forgetAttemptsBefore(accountId: string, cutoff: Date): Promise<number> {
      const old = claims.find(
        { _id: { $regex: idsOfAccount(accountId) }, at: { $lt: cutoff } },
        { projection: { attemptKey: 1, n: 1 } },
      );
      let forgotten = 0;
      // Read as they come (forgotten claims stay, so the old ones only grow): the card's stop (no attempt
      // key, no number) stays as it is; so does a claim forgotten before. Its wait, long over, goes.
      for await (const c of old) {
        if (c.attemptKey === waitAttemptKey) {
          await advices.deleteOne({ _id: c._id });
          continue;
        }
        if (typeof c.attemptKey !== 'string' || c.attemptKey.startsWith(erasedAttempt)) continue;
        await claims.updateOne({ _id: c._id }, { $set: { attemptKey: `${erasedAttempt}${c.n}` } });
        forgotten += 1;
      }
      return forgotten;
    },

    /** Epoch ms of the card's claimed attempts after `since`, oldest first. */
    async attemptsSince(cardKey: string, since: Date): Promise<number[]> {
      return (await recent(cardKey, since)).map((c) => c.at.getTime()).sort((a, b) => a - b);
    },
  };
}

export type CardBudgetStore = ReturnType<typeof createCardBudgetStore>;
