import { describe, expect, it } from 'vitest';
import { assessRisk, calibrates, type RiskFacts } from '../domain/risk.js';

/** A Wednesday the 10th at 14:00, no payday near, nothing known against the card. */
const quiet: RiskFacts = {
  local: { hour: 14, dayOfMonth: 10, weekday: 2, daysInMonth: 30 },
  expiredBy: false,
  refusal: null,
  failingCode: null,
  pastDueElsewhere: 0,
  billingCycleDay: null,
  calibration: {},
};
const assess = (facts: Partial<RiskFacts>) => assessRisk({ ...quiet, ...facts }, { alert: 70 });

describe('risk prediction before a charge', () => {
  it('a renewal with nothing known against it has the research’s 8% chance of failing: proceed', () => {
    const risk = assess({});
    expect(risk).toMatchObject({ riskScore: 8, recommendation: 'proceed', factors: [] });
    expect(risk.reasoning).toMatch(/^8% chance of failure/);
  });

  it.each([
    [
      'a card blocked on an earlier recovery',
      { refusal: { kind: 'blocked_before', declineCode: 'stolen_card' } },
      'card_blocked_before',
    ],
    [
      'a card Mastercard advised never to charge again',
      { refusal: { kind: 'network_stop', advice: '21' } },
      'card_network_stop',
    ],
    ['a card that expires before the charge', { expiredBy: true }, 'card_expires_before_charge'],
  ] satisfies Array<[string, Partial<RiskFacts>, string]>)(
    '%s is blocked with a 99 risk score',
    (_, facts, factor) => {
      const risk = assess(facts);
      expect(risk).toMatchObject({ riskScore: 99, recommendation: 'block', confidence: 95 });
      expect(risk.factors.map((f) => f.factor)).toEqual([factor]);
    },
  );

  it('a card whose recovery is still waiting for a retry will most likely fail again: delay', () => {
    const risk = assess({ failingCode: 'insufficient_funds' });
    expect(risk).toMatchObject({ riskScore: 80, recommendation: 'delay' });
    expect(risk.reasoning).toContain('insufficient_funds');
  });

  it.each([
    ['night', { local: { ...quiet.local, hour: 3 } }, 11.5, 'night_hour'],
    ['payday', { local: { ...quiet.local, dayOfMonth: 15 } }, 7.3, 'payday'],
    ['the days before a payday', { local: { ...quiet.local, dayOfMonth: 13 } }, 8.9, 'before_payday'],
    ['a customer behind on another card', { pastDueElsewhere: 1 }, 14.8, 'customer_past_due'],
  ])('%s moves the risk to %s', (_, facts, score, factor) => {
    const risk = assess(facts);
    expect(risk.riskScore).toBe(score);
    expect(risk.factors.map((f) => f.factor)).toEqual([factor]);
  });

  it.each([
    [0, false],
    [1, true],
    [4, true],
    [5, false],
  ])('a charge at %i:00 is at a night hour: %s', (hour, night) => {
    const risk = assess({ local: { ...quiet.local, hour } });
    expect(risk.factors.some((f) => f.factor === 'night_hour')).toBe(night);
  });

  it('recommends proceed_with_caution from a risk score of 30 (docs/risk-prediction.md), proceed below it', () => {
    expect(assess({ calibration: { '0': { n: 15, failed: 10 } } })).toMatchObject({
      riskScore: 30,
      recommendation: 'proceed_with_caution',
    });
    expect(assess({ calibration: { '0': { n: 15, failed: 9 } } })).toMatchObject({
      riskScore: 27.5,
      recommendation: 'proceed',
    });
    expect(assess({ calibration: { '0': { n: 500, failed: 250 } } }).recommendation).toBe(
      'proceed_with_caution',
    );
  });

  it('a risk score exactly at the alert threshold recommends delay; just below it does not', () => {
    expect(assessRisk(quiet, { alert: 8 })).toMatchObject({ riskScore: 8, recommendation: 'delay' });
    expect(assessRisk(quiet, { alert: 8.1 })).toMatchObject({ riskScore: 8, recommendation: 'proceed' });
  });

  it('a merchant billing cycle day is not a payday of its own: it leaves the risk unchanged', () => {
    expect(assess({ billingCycleDay: 10 }).riskScore).toBe(8);
  });

  it('factors come strongest first, and the reasoning names the strongest', () => {
    const risk = assess({ failingCode: 'do_not_honor', local: { ...quiet.local, hour: 2 } });
    expect(risk.factors.map((f) => f.factor)).toEqual(['card_failing_now', 'night_hour']);
    expect(risk.reasoning).toContain('do_not_honor');
  });

  it("reported outcomes calibrate the band they fall in: the account's own failure rate wins as they add up", () => {
    const few = assess({ calibration: { '0': { n: 5, failed: 5 } } });
    const many = assess({ calibration: { '0': { n: 500, failed: 250 } } });
    const otherBand = assess({ failingCode: 'do_not_honor', calibration: { '0': { n: 500, failed: 250 } } });
    expect(few.riskScore).toBeCloseTo(((5 + 25 * 0.08) / 30) * 100, 1);
    expect(many.riskScore).toBeCloseTo(((250 + 25 * 0.08) / 525) * 100, 1);
    expect(many.confidence).toBeGreaterThan(few.confidence);
    expect(otherBand.riskScore).toBe(80);
  });

  it('a decisive fact’s block calibrates no band; every other prediction calibrates its own', () => {
    const blocked = assess({ expiredBy: true });
    expect(blocked).toMatchObject({ band: 9, recommendation: 'block' });
    expect(calibrates(blocked)).toBe(false);
    // The most the model itself predicts (risk capped at 99, band 9) does count there.
    const worst = assess({
      failingCode: 'do_not_honor',
      pastDueElsewhere: 1,
      local: { ...quiet.local, hour: 3 },
    });
    expect(worst).toMatchObject({ band: 9, recommendation: 'delay' });
    expect(calibrates(worst)).toBe(true);
  });
});
