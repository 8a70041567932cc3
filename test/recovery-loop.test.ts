import { describe, expect, it } from 'vitest';
import { routeOptions } from '../activities/gateways/routing.js';
import { classifyDecline } from '../domain/declines.js';
import type { PlanOption } from '../domain/plan.js';
import {
  currentPrediction,
  nextStep,
  observe,
  refreshed,
  reopenWithNewCard,
  resumeAfterWait,
  startLoop,
  type ChargeResult,
  type LoopSetup,
  type LoopState,
  type LoopStep,
} from '../domain/recovery-loop.js';
import { emptyStats } from '../domain/success-model.js';

// The recovery loop is what the workflow and the benchmark both drive: these tests walk it step by step.

const hour = 3_600_000;
const day = 24 * hour;
const failedAt = Date.parse('2026-03-10T10:00:00Z');
const primary: PlanOption = { gateway: 'main', token: 'tok_card', role: 'primary' };
const fallback: PlanOption = { gateway: 'main', token: 'tok_second', role: 'fallback_token' };

function setup(code: string, overrides: Partial<LoopSetup> = {}): LoopSetup {
  return {
    failedAt,
    decline: classifyDecline(code),
    primaryToken: 'tok_card',
    options: [primary],
    maxAttempts: 8,
    maxDays: 21,
    critical: false,
    offsetMinutes: 0,
    billingCycleDay: null,
    riskSkipThreshold: 100,
    stats: emptyStats(),
    simulate: false,
    ...overrides,
  };
}

/** Runs `nextStep` and returns the step, keeping the state in `box`. */
function step(box: { s: LoopState }, now: number): LoopStep {
  const { state, step: next } = nextStep(box.s, now);
  box.s = state;
  return next;
}

function charge(box: { s: LoopState }, result: ChargeResult, now: number, reconciled = false) {
  box.s = observe(box.s, result, { sentAt: now, now, reconciled });
}

const approved: ChargeResult = { kind: 'approved', gatewayTransactionId: 'gt_1' };
const declined = (code: string, advice: string | null = null): ChargeResult => ({
  kind: 'declined',
  code,
  advice,
  gatewayTransactionId: 'gt_d',
});

describe('a billing day past the end of the month', () => {
  it('falls on the month’s last day in a recovery begun now; one begun before planned without it', () => {
    // Failed late on Friday 27 February; the merchant bills on the 31st, which February has not.
    const at = Date.parse('2026-02-27T22:00:00Z');
    const until = (overrides: Partial<LoopSetup>) => {
      const box = {
        s: startLoop(setup('generic_decline', { failedAt: at, billingCycleDay: 31, ...overrides })),
      };
      const next = step(box, at);
      if (next.kind !== 'wait') throw new Error(`expected a wait, got ${next.kind}`);
      return new Date(next.until).toISOString();
    };
    expect(until({ lastDayBills: true })).toBe('2026-02-28T22:00:00.000Z');
    expect(until({})).toBe('2026-03-01T10:00:00.000Z');
  });
});

describe('the customer’s clock', () => {
  it('plans with the offset changes the screen found: the wait ends an hour earlier in UTC once clocks go forward', () => {
    // Failed late on 6 March in New York (EST); the retry waits for the morning of 8 March (EDT).
    const at = Date.parse('2026-03-07T03:00:00Z');
    const until = (overrides: Partial<LoopSetup>) => {
      const box = {
        s: startLoop(setup('insufficient_funds', { failedAt: at, offsetMinutes: -300, ...overrides })),
      };
      const next = step(box, at);
      if (next.kind !== 'wait') throw new Error(`expected a wait, got ${next.kind}`);
      return next.until;
    };
    const spring = [{ at: Date.parse('2026-03-08T07:00:00Z'), offsetMinutes: -240 }];
    expect(until({ offsetChanges: spring })).toBe(until({}) - hour);
  });
});

describe('the recovery loop', () => {
  it('retries a technical failure at once and reports the primary as the strategy', () => {
    const box = { s: startLoop(setup('try_again_later')) };
    expect(step(box, failedAt)).toMatchObject({ kind: 'attempt', option: primary, attemptNo: 1, depth: 0 });
    charge(box, approved, failedAt);
    expect(step(box, failedAt)).toMatchObject({
      kind: 'finish',
      outcome: { kind: 'succeeded', strategy: 'primary', gatewaysAttempted: 1, gatewayTransactionId: 'gt_1' },
    });
  });

  it("a trial conversion is attempted at once, then its retries are planned as any other's, not spent in seconds", () => {
    const box = {
      s: startLoop(setup('insufficient_funds', { critical: true, criticalRetriesPlanned: true })),
    };
    expect(step(box, failedAt)).toMatchObject({ kind: 'attempt', attemptNo: 1 });
    charge(box, declined('insufficient_funds'), failedAt);
    const next = step(box, failedAt + 2_000);
    expect(next.kind).toBe('wait');
    if (next.kind === 'wait') expect(next.until - failedAt).toBeGreaterThanOrEqual(hour);
  });

  it('a trial conversion a workflow began before its retries were planned tries every attempt at once, as it did', () => {
    const box = { s: startLoop(setup('insufficient_funds', { critical: true })) };
    for (let attemptNo = 1; attemptNo <= 8; attemptNo += 1) {
      const now = failedAt + attemptNo * 2_000;
      expect(step(box, now)).toMatchObject({ kind: 'attempt', attemptNo });
      charge(box, declined('insufficient_funds'), now);
    }
    expect(step(box, failedAt + 20_000)).toMatchObject({ kind: 'finish', outcome: { kind: 'failed' } });
  });

  it("Mastercard's advice 03 on the payment's card ends the recovery at once, asking for a new card", () => {
    const box = { s: startLoop(setup('try_again_later', { stopAdviceEnds: true })) };
    expect(step(box, failedAt)).toMatchObject({ kind: 'attempt', attemptNo: 1 });
    charge(box, declined('do_not_honor', '03'), failedAt);
    expect(step(box, failedAt + 2_000)).toMatchObject({
      kind: 'finish',
      outcome: {
        kind: 'blocked',
        declineCode: 'card_no_longer_chargeable',
        action: 'request_card_update',
        reason: expect.stringContaining('advice code 03'),
        failure: { kind: 'failed', declineCode: 'do_not_honor' },
      },
    });
  });

  it("Mastercard's advice 21 on a fallback card drops that card, and does not end the recovery", () => {
    const box = { s: startLoop(setup('try_again_later', { stopAdviceEnds: true, options: [fallback] })) };
    expect(step(box, failedAt)).toMatchObject({ kind: 'attempt', option: fallback });
    charge(box, declined('do_not_honor', '21'), failedAt);
    expect(box.s.options).toEqual([]);
    expect(box.s.pending).toBeNull();
  });

  it("a recovery a workflow began before Mastercard's advice ended it plans past the advice, as it did", () => {
    const box = { s: startLoop(setup('try_again_later')) };
    step(box, failedAt);
    charge(box, declined('do_not_honor', '03'), failedAt);
    expect(step(box, failedAt + 2_000).kind).not.toBe('finish');
  });

  it('waits for a better time, then reports smart_retry', () => {
    const box = { s: startLoop(setup('insufficient_funds')) };
    const wait = step(box, failedAt);
    expect(wait.kind).toBe('wait');
    if (wait.kind !== 'wait') return;
    box.s = resumeAfterWait(box.s, { stats: emptyStats() });
    expect(step(box, wait.until)).toMatchObject({
      kind: 'attempt',
      attemptNo: 1,
      fromCode: 'insufficient_funds',
    });
    charge(box, approved, wait.until);
    expect(step(box, wait.until)).toMatchObject({ kind: 'finish', outcome: { strategy: 'smart_retry' } });
  });

  it('sends an expired card to the account updater first, and fails with card_expired when there is none', () => {
    const box = { s: startLoop(setup('expired_card')) };
    expect(step(box, failedAt)).toEqual({ kind: 'refresh', token: 'tok_card', gateway: 'main' });
    box.s = refreshed(box.s, null);
    expect(step(box, failedAt)).toMatchObject({
      kind: 'finish',
      outcome: { kind: 'expired', gatewaysAttempted: 0 },
    });
  });

  it('charges the updated card at once as a fresh card', () => {
    const box = { s: startLoop(setup('expired_card')) };
    step(box, failedAt);
    box.s = refreshed(box.s, 'tok_new');
    expect(step(box, failedAt)).toMatchObject({
      kind: 'attempt',
      option: { token: 'tok_new', role: 'primary' },
      fromCode: 'fresh_token',
    });
  });

  it('sends a card found expired on a retry to the account updater, and fails with card_expired when there is none', () => {
    const box = { s: startLoop(setup('try_again_later')) };
    step(box, failedAt);
    charge(box, declined('expired_card'), failedAt);
    expect(step(box, failedAt)).toEqual({ kind: 'refresh', token: 'tok_card', gateway: 'main' });
    box.s = refreshed(box.s, null);
    expect(step(box, failedAt)).toMatchObject({
      kind: 'finish',
      outcome: { kind: 'expired', gatewaysAttempted: 1 },
    });
  });

  it('charges at once the updated card of a card found expired on a retry', () => {
    const box = { s: startLoop(setup('try_again_later')) };
    step(box, failedAt);
    charge(box, declined('expired_card'), failedAt);
    step(box, failedAt);
    box.s = refreshed(box.s, 'tok_new');
    expect(step(box, failedAt)).toMatchObject({
      kind: 'attempt',
      option: { token: 'tok_new' },
      fromCode: 'fresh_token',
    });
  });

  it('drops a fallback card found expired with no update, and goes on with the primary', () => {
    const box = { s: startLoop(setup('try_again_later', { options: [primary, fallback] })) };
    expect(step(box, failedAt)).toMatchObject({ option: primary });
    charge(box, declined('do_not_honor'), failedAt);
    expect(step(box, failedAt)).toMatchObject({ option: fallback });
    charge(box, declined('expired_card'), failedAt);
    expect(step(box, failedAt)).toEqual({ kind: 'refresh', token: 'tok_second', gateway: 'main' });
    box.s = refreshed(box.s, null);
    expect(box.s.options).toEqual([primary]);
    expect(step(box, failedAt).kind).toBe('wait');
  });

  it('drops an invalid card at intake and goes to the fallback token', () => {
    const box = { s: startLoop(setup('incorrect_cvc', { options: [primary, fallback] })) };
    expect(step(box, failedAt)).toMatchObject({ kind: 'attempt', option: fallback, fromCode: 'fresh_token' });
    charge(box, approved, failedAt);
    expect(step(box, failedAt)).toMatchObject({ outcome: { strategy: 'fallback_token' } });
  });

  it('spends nothing on a charge the card networks refuse, and waits until they allow it', () => {
    const box = { s: startLoop(setup('try_again_later', { options: [primary, fallback] })) };
    expect(step(box, failedAt)).toMatchObject({ option: primary, attemptNo: 1 });
    charge(box, { kind: 'not_allowed', retryAt: failedAt + 2 * day }, failedAt);
    expect(box.s.notBefore).toEqual({ tok_card: failedAt + 2 * day });
    expect(step(box, failedAt)).toMatchObject({ option: fallback, attemptNo: 1 });
    charge(box, { kind: 'not_allowed', retryAt: null }, failedAt);
    expect(box.s.notBefore.tok_second).toBe(Number.POSITIVE_INFINITY);
    const next = step(box, failedAt);
    expect(next).toMatchObject({ kind: 'wait' });
    if (next.kind === 'wait') expect(next.until).toBeGreaterThanOrEqual(failedAt + 2 * day);
  });

  it('waits at least a minute on a card network refusal whose retryAt has already passed', () => {
    const box = { s: startLoop(setup('try_again_later')) };
    step(box, failedAt);
    charge(box, { kind: 'not_allowed', retryAt: failedAt - 1 }, failedAt);
    expect(box.s.notBefore.tok_card).toBe(failedAt + 60_000);
  });

  it('blocks on a decline that stops at once, after an attempt', () => {
    const box = { s: startLoop(setup('try_again_later')) };
    step(box, failedAt);
    charge(box, declined('stolen_card'), failedAt);
    expect(step(box, failedAt)).toMatchObject({
      kind: 'finish',
      outcome: { kind: 'blocked', declineCode: 'stolen_card', action: 'manual_review' },
    });
  });

  it('ends on a hard decline of the primary without trying the fallback token', () => {
    const box = { s: startLoop(setup('try_again_later', { options: [primary, fallback] })) };
    step(box, failedAt);
    charge(box, declined('duplicate_transaction'), failedAt);
    expect(step(box, failedAt)).toMatchObject({
      kind: 'finish',
      outcome: { kind: 'failed', declineCode: 'duplicate_transaction', gatewayTransactionId: 'gt_d' },
    });
  });

  it('judges each card by its own decline and advice code', () => {
    const box = { s: startLoop(setup('try_again_later', { options: [primary, fallback] })) };
    expect(step(box, failedAt)).toMatchObject({ option: primary, fromCode: 'try_again_later', advice: null });
    charge(box, declined('do_not_honor', '02'), failedAt);
    expect(step(box, failedAt)).toMatchObject({ option: fallback, fromCode: 'fresh_token', advice: null });
    charge(box, declined('insufficient_funds', '25'), failedAt);
    expect(box.s.advice).toEqual({ tok_card: '02', tok_second: '25' });
    const seen = new Map<string, LoopStep>();
    for (let now = failedAt, i = 0; i < 20 && seen.size < 2; i += 1) {
      const next = step(box, now);
      if (next.kind === 'wait') {
        box.s = resumeAfterWait(box.s, { stats: emptyStats() });
        now = next.until;
      } else if (next.kind === 'attempt') {
        seen.set(next.option.token, next);
        charge(box, declined(next.option.token === 'tok_card' ? 'do_not_honor' : 'insufficient_funds'), now);
      } else break;
    }
    expect(seen.get('tok_card')).toMatchObject({ fromCode: 'do_not_honor', advice: '02', depth: 1 });
    expect(seen.get('tok_second')).toMatchObject({ fromCode: 'insufficient_funds', advice: '25', depth: 0 });
  });

  it('counts gateways, not attempts, as gatewaysAttempted', () => {
    const box = { s: startLoop(setup('try_again_later')) };
    step(box, failedAt);
    charge(box, declined('try_again_later'), failedAt);
    const wait = step(box, failedAt + hour);
    if (wait.kind !== 'wait') throw new Error('expected a wait');
    box.s = resumeAfterWait(box.s, { stats: emptyStats() });
    expect(step(box, wait.until)).toMatchObject({ kind: 'attempt', attemptNo: 2 });
    charge(box, { kind: 'approved', gatewayTransactionId: 'gt_2' }, wait.until);
    expect(step(box, wait.until)).toMatchObject({
      kind: 'finish',
      outcome: { kind: 'succeeded', gatewaysAttempted: 1 },
    });
  });

  it('counts retries of a card as its depth', () => {
    const box = { s: startLoop(setup('try_again_later', { options: [primary] })) };
    expect(step(box, failedAt)).toMatchObject({ depth: 0 });
    charge(box, declined('try_again_later'), failedAt);
    // A technical failure that fails its first retry waits out the same day like any other decline.
    const wait = step(box, failedAt + hour);
    if (wait.kind !== 'wait') throw new Error('expected a wait');
    box.s = resumeAfterWait(box.s, { stats: emptyStats() });
    expect(step(box, wait.until)).toMatchObject({ kind: 'attempt', depth: 1, attemptNo: 2 });
  });

  it('reports a reconciled success with trigger reconciliation', () => {
    const box = { s: startLoop(setup('try_again_later')) };
    step(box, failedAt);
    charge(box, approved, failedAt + 30_000, true);
    expect(step(box, failedAt + 30_000)).toMatchObject({
      outcome: { kind: 'succeeded', trigger: 'reconciliation' },
    });
  });

  it('stops at the budget with the plan’s prediction', () => {
    const box = { s: startLoop(setup('try_again_later', { maxAttempts: 1 })) };
    step(box, failedAt);
    charge(box, declined('try_again_later'), failedAt);
    expect(step(box, failedAt)).toMatchObject({
      kind: 'finish',
      outcome: { kind: 'failed', ai: { score: 0 } },
    });
  });

  it('takes up again, with the customer’s new card only, a recovery about to end on the old one', () => {
    const box = { s: startLoop(setup('try_again_later', { options: [primary, fallback] })) };
    step(box, failedAt);
    charge(box, declined('authentication_required'), failedAt);
    expect(step(box, failedAt)).toMatchObject({ kind: 'finish', outcome: { kind: 'blocked' } });
    const newCard: PlanOption = { gateway: 'main', token: 'tok_new', role: 'primary' };
    box.s = reopenWithNewCard(box.s, { stats: emptyStats(), newCard: [newCard] });
    expect(step(box, failedAt)).toMatchObject({ kind: 'attempt', option: newCard, attemptNo: 2 });
    charge(box, declined('insufficient_funds'), failedAt);
    // The fallback card, which the old card's ending left untried, is not brought back.
    const next = step(box, failedAt);
    expect(next.kind === 'attempt' && next.option.token).not.toBe('tok_second');
  });

  it('a new card gets no attempt past the budget', () => {
    const box = { s: startLoop(setup('try_again_later', { maxAttempts: 1 })) };
    step(box, failedAt);
    charge(box, declined('try_again_later'), failedAt);
    expect(step(box, failedAt)).toMatchObject({ kind: 'finish', outcome: { kind: 'failed' } });
    const newCard: PlanOption = { gateway: 'main', token: 'tok_new', role: 'primary' };
    box.s = reopenWithNewCard(box.s, { stats: emptyStats(), newCard: [newCard] });
    expect(step(box, failedAt)).toMatchObject({ kind: 'finish', outcome: { kind: 'failed' } });
  });

  it('fails with the latest decline of any card, and the primary card’s for the recommended action', () => {
    const box = {
      s: startLoop(setup('try_again_later', { options: [primary, fallback], maxAttempts: 2 })),
    };
    expect(step(box, failedAt)).toMatchObject({ option: primary });
    charge(box, declined('do_not_honor'), failedAt);
    expect(step(box, failedAt)).toMatchObject({ option: fallback });
    charge(box, declined('insufficient_funds'), failedAt);
    expect(step(box, failedAt)).toMatchObject({
      kind: 'finish',
      outcome: { kind: 'failed', declineCode: 'do_not_honor', lastDeclineCode: 'insufficient_funds' },
    });
  });

  it('a PayPal billing agreement declined soft (PayPal’s 10207, try again later) is retried on PayPal, never cascaded to Braintree (which would refuse it and block the recovery)', () => {
    const agreement = 'billing-agreement|B-7AB12345CD678901E';
    const options = routeOptions(
      [
        { name: 'paypal', kind: 'paypal', wallets: ['paypal'], currencies: null },
        {
          name: 'braintree',
          kind: 'braintree',
          wallets: ['apple_pay', 'google_pay', 'paypal', 'venmo'],
          currencies: ['USD'],
        },
      ],
      agreement,
      'paypal',
      [],
      'USD',
    );
    const box = {
      s: startLoop(setup('try_again_later', { primaryToken: agreement, options, maxAttempts: 4 })),
    };
    const tried: string[] = [];
    let end: LoopStep | undefined;
    for (let now = failedAt, i = 0; i < 40 && !end; i += 1) {
      const next = step(box, now);
      if (next.kind === 'wait') {
        box.s = resumeAfterWait(box.s, { stats: emptyStats() });
        now = next.until;
      } else if (next.kind === 'attempt') {
        tried.push(next.option.gateway);
        // Braintree does not know PayPal's token: it refuses it (91518), as no longer chargeable.
        charge(
          box,
          next.option.gateway === 'braintree' ? declined('card_no_longer_chargeable') : declined('10207'),
          now,
        );
      } else end = next;
    }
    expect(tried.length).toBeGreaterThan(1);
    expect(new Set(tried)).toEqual(new Set(['paypal']));
    expect(end).toMatchObject({
      kind: 'finish',
      outcome: { kind: 'failed', declineCode: 'try_again_later' },
    });
  });

  it('explains itself before any attempt (the holdout answer)', () => {
    expect(currentPrediction(startLoop(setup('insufficient_funds')), failedAt).score).toBeGreaterThan(0);
  });
});
