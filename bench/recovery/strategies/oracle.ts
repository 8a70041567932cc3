import { classifyDecline } from '../../../domain/declines.js';
import { networkDecision } from '../../../domain/network-rules.js';
import type { CardTruth, WorldModel } from '../outcome-model.js';
import { maxAttempts, PaymentRun, tokensOf, type PaymentResult } from '../payment-run.js';
import type { Payment } from '../payments.js';

const hour = 3_600_000;
const day = 24 * hour;
const fresh = '(fresh card)';

/** The oracle's optimal policy for one card: values of trying each hour with k retries done and code c. */
interface CardPolicy {
  token: string;
  codes: string[];
  gatewayFor: string[];
  /** g[k][c][j]: chance of recovering when the next attempt is at grid hour j (penalised: within 24 h). */
  g: Float64Array[][];
  gPenalised: Float64Array[][];
  /** Chance of recovering from the start. */
  value: number;
}

/**
 * The upper reference: knows each payment's latent recoverability and every hour's true success probability,
 * and plays the optimal policy (dynamic programming over whole hours, the retry budget and the decline codes
 * a failure can turn into) on the one card that promises most, within the card networks' rules and the
 * spec's rules on which cards may be charged at all.
 */
export function runOracle(model: WorldModel, payment: Payment, seed: number): PaymentResult {
  const run = new PaymentRun(model, payment, seed);
  const tokens = tokensOf(payment);
  const start = Math.floor(payment.failedAt / hour) * hour + hour;
  const n = Math.max(0, Math.floor((run.horizonEnd - start) / hour) + 1);
  const grid = Array.from({ length: n }, (_, j) => start + j * hour);

  // Only what production may charge: the primary card after a decline it retries, a second card unless the
  // decline is a hard cardholder-state one (the spec's fallback rule), a new card from the account updater.
  const decline = classifyDecline(payment.code);
  const cards: CardTruth[] = [];
  const primary = run.card(tokens.primary)!;
  if (primary.recoverable && decline.retryable) cards.push(primary);
  const fallback = run.card(tokens.fallback);
  if (fallback && decline.allowsFallback) cards.push(fallback);
  const updatable = decline.group === 'expired' && payment.updaterHit;
  if (updatable)
    cards.push({
      ...primary,
      token: tokens.updated,
      kind: 'updated',
      recoverable: true,
      code: null,
      charges: [],
      retries: 0,
    });

  const policies = cards.map((card) => solve(model, run, card, grid));
  const best = policies.reduce<CardPolicy | null>((b, p) => (p.value > (b?.value ?? 0) ? p : b), null);
  if (!best) return run.result();
  if (best.token === tokens.updated && run.refresh() === null) return run.result();

  let last = run.card(best.token)!.charges.at(-1) ?? Number.NEGATIVE_INFINITY;
  let code = run.card(best.token)!.code;
  for (let k = 0; k < maxAttempts; k += 1) {
    const c = best.codes.indexOf(code === null || best.codes[0] === fresh ? fresh : code);
    if (c < 0) break;
    let pick = -1;
    let value = 0;
    for (let j = 0; j < n; j += 1) {
      if (grid[j]! <= last) continue;
      const v = (grid[j]! - last < day ? best.gPenalised : best.g)[k]![c]![j]!;
      if (v > value && run.allowed(best.token, grid[j]!)) [pick, value] = [j, v];
    }
    if (pick < 0) break;
    const out = run.charge(best.token, best.gatewayFor[c]!, grid[pick]!);
    if (out.approved) break;
    last = grid[pick]!;
    code = out.code;
  }
  return run.result();
}

/** Backward induction over (retries done, current code, hour of the next attempt). */
function solve(model: WorldModel, run: PaymentRun, card: CardTruth, grid: number[]): CardPolicy {
  const w = model.world;
  const n = grid.length;
  const isFresh = card.kind !== 'primary';
  const codes = isFresh ? [fresh] : reachableCodes(model, card.code!);
  const facts = run.facts();
  // The best gateway for a code is the one with the highest multiplier; fresh cards use their own key.
  const gatewayFor = codes.map((c) => {
    const key = isFresh ? 'fresh' : c;
    return w.gateways.reduce((b, g) => ((g.multiplier[key] ?? 1) > (b.multiplier[key] ?? 1) ? g : b)).name;
  });
  const retryable = codes.map(
    (c) =>
      isFresh ||
      networkDecision({
        brand: card.brand,
        declineCode: c,
        advice: null,
        priorAttemptsAt: [],
        lastAttemptAt: null,
        now: 0,
      }).allowed,
  );
  const q = codes.map((c, ci) => {
    const probe: CardTruth = { ...card, code: isFresh ? null : c, charges: [], retries: 0 };
    return retryable[ci] ? model.hourly(probe, gatewayFor[ci]!, grid[0] ?? 0, n, facts) : new Float64Array(n);
  });
  // Sparse rows: [code index, probability] of the code a failed retry returns.
  const transitions = codes.map((c, ci): Array<[number, number]> => {
    const next = isFresh ? undefined : w.declines[c]?.nextCode;
    if (!next) return [[ci, 1]];
    const total = Object.values(next).reduce((s, x) => s + x, 0);
    return Object.entries(next)
      .filter(([, x]) => x > 0)
      .map(([to, x]) => [codes.indexOf(to), x / total]);
  });

  // One buffer for every table the policy keeps: g and its penalised twin for each (k, c).
  const tables = new Float64Array(2 * maxAttempts * codes.length * n);
  const table = (which: number, k: number, c: number) => {
    const at = ((which * maxAttempts + k) * codes.length + c) * n;
    return tables.subarray(at, at + n);
  };
  const g = Array.from({ length: maxAttempts }, (_, k) => codes.map((_c, ci) => table(0, k, ci)));
  const gPenalised = Array.from({ length: maxAttempts }, (_, k) => codes.map((_c, ci) => table(1, k, ci)));
  // V[k+1][c][i]: the value after an attempt at hour i; two generations are enough.
  let valueAfter = codes.map(() => new Float64Array(n));
  let valueNow = codes.map(() => new Float64Array(n));
  const future = new Float64Array(n);
  const window = new Int32Array(n + 1);
  for (let k = maxAttempts - 1; k >= 0; k -= 1) {
    const fatigue = w.fatiguePerAttempt ** k;
    for (let ci = 0; ci < codes.length; ci += 1) {
      const gk = g[k]![ci]!;
      const gp = gPenalised[k]![ci]!;
      const qc = q[ci]!;
      future.fill(0);
      for (const [cj, pr] of transitions[ci]!) {
        const after = valueAfter[cj]!;
        for (let j = 0; j < n; j += 1) future[j] = future[j]! + pr * after[j]!;
      }
      for (let j = 0; j < n; j += 1) {
        const p = Math.min(1, qc[j]! * fatigue);
        const pp = Math.min(1, p * w.sameDayRepeat);
        gk[j] = p + (1 - p) * future[j]!;
        gp[j] = pp + (1 - pp) * future[j]!;
      }
      // V[k][c][i] = best of: an unpenalised attempt 24 h or more after hour i, a penalised one sooner;
      // a monotonic deque holds the best penalised hour of the sliding 23-hour window.
      const v = valueNow[ci]!;
      let head = 0;
      let tail = 0;
      let suffix = 0;
      for (let i = n - 1; i >= 0; i -= 1) {
        if (i + 24 < n) suffix = Math.max(suffix, gk[i + 24]!);
        const j = i + 1;
        if (j < n) {
          while (tail > head && gp[window[tail - 1]!]! <= gp[j]!) tail -= 1;
          window[tail] = j;
          tail += 1;
        }
        while (tail > head && window[head]! > i + 23) head += 1;
        v[i] = Math.max(suffix, tail > head ? gp[window[head]!]! : 0);
      }
    }
    [valueAfter, valueNow] = [valueNow, valueAfter];
  }
  const c0 = 0;
  const last = card.charges.at(-1) ?? Number.NEGATIVE_INFINITY;
  let value = 0;
  for (let j = 0; j < n; j += 1) {
    const v = (grid[j]! - last < day ? gPenalised : g)[0]![c0]![j]!;
    value = Math.max(value, v);
  }
  return { token: card.token, codes, gatewayFor, g, gPenalised, value };
}

/** The card's code and every code a failed retry can turn it into, the card's own code first. */
function reachableCodes(model: WorldModel, code: string): string[] {
  const seen = [code];
  for (let i = 0; i < seen.length; i += 1) {
    for (const next of Object.keys(model.world.declines[seen[i]!]?.nextCode ?? {}))
      if (!seen.includes(next)) seen.push(next);
  }
  return seen;
}
