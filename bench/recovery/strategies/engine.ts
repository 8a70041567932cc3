import { routeOptions } from '../../../activities/gateways/routing.js';
import { classifyDecline } from '../../../domain/declines.js';
import { paymentMethodTypes } from '../../../domain/gateway-kinds.js';
import { customerClock, customerTimeZone, localParts, offsetAt } from '../../../domain/local-time.js';
import { brandFromBin, networkDecision } from '../../../domain/network-rules.js';
import {
  nextStep,
  observe,
  refreshed,
  resumeAfterWait,
  startLoop,
  type ChargeResult,
  type LoopOutcome,
  type LoopState,
} from '../../../domain/recovery-loop.js';
import { Settings } from '../../../domain/settings.js';
import { EventQueue } from '../event-queue.js';
import { AccountLog } from '../learning.js';
import type { WorldModel } from '../outcome-model.js';
import { PaymentRun, tokensOf, type PaymentResult } from '../payment-run.js';
import type { Payment } from '../payments.js';
import type { World } from '../world.js';

const day = 86_400_000;
/** How long the workflow waits before looking an ambiguous charge up (workflows/recovery.ts). */
const reconcileAfterMs = 30_000;
/**
 * The workflow reads its clock when a worker runs its task: a little after the request or timer that woke
 * it (tens of ms on the time-skipping server), never at the exact instant. The loop compares those readings
 * with whole-hour plans (a retry 24 h after one sent at 10:00:00.030 is "the same day" at 10:00 tomorrow),
 * so the driver reads its clock the same moment late.
 */
export const clockLatencyMs = 50;

/** One payment's recovery: the production loop's state and what the driver holds around it. */
interface Session {
  run: PaymentRun;
  loop: LoopState;
  account: AccountLog;
  /** The customer's clock, as the screen gives it (its offset at intake and changes). */
  clock: ReturnType<typeof customerClock>;
  brand: ReturnType<typeof brandFromBin>;
  primaryToken: string;
  /** Network-budget claims per token (store/card-budgets.ts), epoch ms. */
  claims: Map<string, number[]>;
  /** An ambiguous charge waiting to be looked up. */
  unresolved: { result: ChargeResult; sentAt: number; row: LogRow } | null;
  outcome: LoopOutcome | null;
}

type LogRow = Parameters<AccountLog['record']>[0];

/** The account a merchant runs Recoup with: production's settings and defaults, test gateways in world mode. */
export function accountOf(world: World, merchant: World['merchants'][number]) {
  return Settings.parse({
    webhookUrl: 'https://bench.example.com/hooks',
    timezone: merchant.timezone,
    billingCycleDay: merchant.billingCycleDay ?? null,
    ...(merchant.riskSkipThreshold !== undefined ? { riskSkipThreshold: merchant.riskSkipThreshold } : {}),
    retryPolicy: { maxAttempts: 8, maxDays: world.horizonDays },
  });
}

/**
 * The engine: every payment runs production's recovery loop (domain/recovery-loop.ts), driven the way
 * workflows/recovery.ts drives it, with what production would see — the request, the account's settings,
 * decline codes and advice from charges, the clock — and one attempts log per merchant that every
 * recovery of that merchant learns from. All recoveries advance together in simulated time, so a plan only
 * ever knows outcomes that came before it.
 */
export function runEngine(
  model: WorldModel,
  payments: Payment[],
  seed: number,
): Array<PaymentResult & { outcome: LoopOutcome }> {
  const world = model.world;
  const accounts = new Map(
    world.merchants.map((m) => [m.id, { log: new AccountLog(), settings: accountOf(world, m) }]),
  );
  const gateways = world.gateways.map((g) => ({
    name: g.name,
    kind: 'test' as const,
    wallets: paymentMethodTypes.filter((t) => t !== 'card'),
    currencies: null,
  }));
  const queue = new EventQueue<{ payment: number; kind: 'arrive' | 'wake' | 'resolve' }>();
  const sessions: Array<Session | null> = payments.map(() => null);
  // Recoveries of one account due at the same instant take their steps one at a time in payment order, each
  // seeing what the ones before it learned (through-workflows/sequencer.ts holds the workflows to it).
  const push = (at: number, i: number, kind: 'arrive' | 'wake' | 'resolve') =>
    queue.push(at, { payment: i, kind }, payments[i]!.index);
  payments.forEach((p, i) => push(p.failedAt, i, 'arrive'));

  /** screenRecovery: decline, routing, the customer's clock and the account's statistics. */
  function screen(p: Payment, now: number): Session {
    const account = accounts.get(p.merchant.id)!;
    const tokens = tokensOf(p);
    const decline = classifyDecline(p.code);
    const maxDays = account.settings.retryPolicy.maxDays;
    const clock = customerClock(customerTimeZone(p.country, account.settings.timezone), now, maxDays);
    const fallbacks = p.fallbackBrand ? [tokens.fallback] : [];
    const options = routeOptions(gateways, tokens.primary, 'card', fallbacks, p.merchant.currency, p.country);
    const loop = startLoop({
      failedAt: now,
      decline,
      primaryToken: tokens.primary,
      options,
      maxAttempts: account.settings.retryPolicy.maxAttempts,
      maxDays,
      critical: false,
      // As the workflow decides today (its `patched` versions).
      stopAdviceEnds: true,
      lastDayBills: true,
      ...clock,
      billingCycleDay: account.settings.billingCycleDay,
      riskSkipThreshold: account.settings.riskSkipThreshold,
      stats: account.log.stats(),
      simulate: false,
    });
    const session: Session = {
      run: new PaymentRun(model, p, seed),
      loop,
      account: account.log,
      clock,
      brand: brandFromBin(p.bin),
      primaryToken: tokens.primary,
      claims: new Map(),
      unresolved: null,
      outcome: null,
    };
    // Blocked at intake: no attempt at all.
    if (decline.stopsImmediately)
      session.outcome = {
        kind: 'blocked',
        declineCode: decline.code,
        reason: decline.reason,
        action: decline.recommendedAction,
        token: tokens.primary,
      };
    return session;
  }

  /** store/card-budgets.ts's claim: the network rules over the card's earlier claims, recorded if allowed. */
  function claim(s: Session, token: string, fromCode: string, advice: string | null, now: number) {
    const claims = s.claims.get(token) ?? [];
    const decision = networkDecision({
      brand: token === s.primaryToken ? s.brand : 'unknown',
      declineCode: fromCode,
      advice,
      priorAttemptsAt: claims.filter((at) => at > now - 30 * day),
      lastAttemptAt: claims.at(-1) ?? null,
      now,
    });
    if (decision.allowed) s.claims.set(token, [...claims, now]);
    return decision;
  }

  /** Runs the loop's steps at `now` until it waits, reconciles or ends. */
  function drive(i: number, s: Session, now: number): void {
    while (!s.outcome) {
      const { state, step } = nextStep(s.loop, now);
      s.loop = state;
      if (step.kind === 'finish') {
        s.outcome = step.outcome;
      } else if (step.kind === 'refresh') {
        s.loop = refreshed(s.loop, s.run.refresh());
      } else if (step.kind === 'wait') {
        push(step.until, i, 'wake');
        return;
      } else {
        const decision = claim(s, step.option.token, step.fromCode, step.advice, now);
        if (!decision.allowed) {
          const result: ChargeResult = { kind: 'not_allowed', retryAt: decision.retryAt };
          s.loop = observe(s.loop, result, { sentAt: now, now, reconciled: false });
          continue;
        }
        const out = s.run.charge(step.option.token, step.option.gateway, now);
        const result: ChargeResult = out.approved
          ? { kind: 'approved', gatewayTransactionId: `sim_${i}_${step.attemptNo}` }
          : {
              kind: 'declined',
              code: out.code ?? 'card_declined',
              advice: out.advice,
              gatewayTransactionId: `sim_${i}_${step.attemptNo}`,
            };
        const row: LogRow = {
          fromCode: step.fromCode,
          local: localParts(now, offsetAt(now, s.clock.offsetMinutes, s.clock.offsetChanges)),
          gateway: step.option.gateway,
          approved: out.approved,
          depth: step.depth,
          exposure: step.exposure,
          ...(step.sameDay !== null ? { sameDay: step.sameDay } : {}),
        };
        if (out.ambiguous) {
          // The answer is lost: the workflow looks the charge up 30 s later and only then learns from it.
          s.unresolved = { result, sentAt: now, row };
          push(now + reconcileAfterMs, i, 'resolve');
          return;
        }
        s.account.record(row);
        s.loop = observe(s.loop, result, { sentAt: now, now, reconciled: false });
      }
    }
  }

  for (let e = queue.pop(); e; e = queue.pop()) {
    const { payment: i, kind } = e.item;
    const now = e.at + clockLatencyMs;
    if (kind === 'arrive') {
      const s = screen(payments[i]!, now);
      sessions[i] = s;
      drive(i, s, now);
      continue;
    }
    const s = sessions[i]!;
    if (kind === 'wake') {
      s.loop = resumeAfterWait(s.loop, { stats: s.account.stats() });
    } else {
      const { result, sentAt, row } = s.unresolved!;
      s.unresolved = null;
      s.account.record(row);
      s.loop = observe(s.loop, result, { sentAt, now, reconciled: true });
    }
    drive(i, s, now);
  }
  return sessions.map((s) => {
    if (!s?.outcome) throw new Error('A recovery never finished');
    return { ...s.run.result(), outcome: s.outcome };
  });
}
