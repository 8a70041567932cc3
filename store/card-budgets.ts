import type { Db } from 'mongodb';
import {
  networkDecision,
  type CardBrand,
  type NetworkDecision,
  type NetworkRules,
} from '../domain/network-rules.js';
import { collections } from './collections.js';
import { isDuplicateKey } from './mongo.js';

interface ClaimDoc {
  _id: string; // `${cardKey}:${seq}`
  cardKey: string;
  seq: number;
  at: Date;
  attemptKey: string;
}

/** The longest window any network rule counts over. */
const windowMs = 30 * 24 * 3_600_000;
/** Each lost race means another claim on the card succeeded; this many in a row points at a fault. */
const maxRounds = 100;

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
 * Per-card attempt counters shared by every recovery, exact under any concurrency without atomic updates
 * (FerretDB has none): each attempt inserts claim number max+1 of its card. The insert only succeeds if no
 * other claimer took that number, which proves the claimer saw claims 1..max when it asked the network
 * rules, so no cap can ever be exceeded. A lost race (E11000) re-reads and decides again.
 */
export function createCardBudgetStore(db: Db) {
  const claims = db.collection<ClaimDoc>(collections.cardBudgets);

  async function latestClaim(cardKey: string): Promise<{ seq: number; at: Date } | null> {
    const top = await claims
      .find({ cardKey }, { projection: { seq: 1, at: 1 } })
      .sort({ seq: -1 })
      .limit(1)
      .toArray();
    return top[0] ?? null;
  }

  async function attemptsSince(cardKey: string, since: Date): Promise<number[]> {
    const docs = await claims.find({ cardKey, at: { $gt: since } }, { projection: { at: 1 } }).toArray();
    return docs.map((d) => d.at.getTime()).sort((a, b) => a - b);
  }

  async function alreadyClaimed(cardKey: string, attemptKey: string): Promise<boolean> {
    return (await claims.countDocuments({ cardKey, attemptKey }, { limit: 1 })) > 0;
  }

  return {
    /** Asks the network rules for one more attempt on the card and, if allowed, records it. */
    async claim(input: CardClaim): Promise<NetworkDecision> {
      const { cardKey, attemptKey, now } = input;
      for (let round = 0; round < maxRounds; round += 1) {
        if (await alreadyClaimed(cardKey, attemptKey)) return { allowed: true };
        // The highest number is read before the window: the claims it proves exist are all in the window read.
        const latest = await latestClaim(cardKey);
        const seq = (latest?.seq ?? 0) + 1;
        const prior = await attemptsSince(cardKey, new Date(now.getTime() - windowMs));
        const decision = networkDecision({
          brand: input.brand,
          declineCode: input.declineCode,
          advice: input.advice,
          priorAttemptsAt: prior,
          lastAttemptAt: (input.lastAttemptAt ?? latest?.at)?.getTime() ?? null,
          now: now.getTime(),
          ...(input.rules ? { rules: input.rules } : {}),
        });
        if (!decision.allowed) return decision;
        try {
          await claims.insertOne({ _id: `${cardKey}:${seq}`, cardKey, seq, at: now, attemptKey });
          return decision;
        } catch (error) {
          if (!isDuplicateKey(error)) throw error;
        }
      }
      throw new Error(`Card budget claim ${attemptKey} lost ${maxRounds} races in a row`);
    },

    /** Epoch ms of the card's claimed attempts after `since`, oldest first. */
    attemptsSince,
  };
}

export type CardBudgetStore = ReturnType<typeof createCardBudgetStore>;
