import { errorFunction } from 'simple-statistics';
import { points, share } from './rates.js';

/** Successes out of trials of one group. */
export interface Group {
  trials: number;
  successes: number;
}

/** The comparison of a treatment group with its control: uplift in percentage points, its 95 % CI, a p-value. */
export interface Comparison {
  treatmentRate: number | null;
  controlRate: number | null;
  upliftPoints: number | null;
  confidenceInterval95: [number, number] | null;
  pValue: number | null;
  /** Too few decided payments for the normal approximation the test rests on. */
  insufficientData: boolean;
}

/**
 * A group whose trials come in clusters — one customer's payments: Proof Mode draws customers, not payments,
 * and one customer's payments tend to share their outcome (the same card, the same customer), so they are
 * fewer independent trials than they number. Rao and Scott's correction: the group's design effect `d` (the
 * variance of its rate estimated across its clusters, over the binomial variance; at least 1) divides its
 * trials and successes, and the test, the interval and `insufficientData` rest on that effective sample. The
 * rate is unchanged; with one payment per customer `d` is 1 and so is everything else.
 */
export function clusteredGroup(clusters: readonly Group[]): Group {
  const trials = clusters.reduce((sum, c) => sum + c.trials, 0);
  const successes = clusters.reduce((sum, c) => sum + c.successes, 0);
  const p = trials > 0 ? successes / trials : 0;
  const binomial = trials * p * (1 - p);
  if (binomial === 0) return { trials, successes };
  const spread = clusters.reduce((sum, c) => sum + (c.successes - p * c.trials) ** 2, 0);
  // Equal to the binomial variance, to rounding, when every cluster is one trial.
  const designEffect = spread / binomial > 1 + 1e-9 ? spread / binomial : 1;
  return { trials: trials / designEffect, successes: successes / designEffect };
}

/** Fewest decided payments per group, and fewest expected successes and failures in each, for the test. */
const minTrials = 30;
const minExpected = 5;
const z95 = 1.959963984540054;

const normalCdf = (z: number) => 0.5 * (1 + errorFunction(z / Math.SQRT2));

/**
 * Two-proportion comparison: each group's success rate (to four decimals, as the report's other rates),
 * the uplift of the treatment's rate over the control's, a 95 % Wald interval on that difference (unpooled
 * standard error) and the two-sided p-value of the pooled z-test, all from the unrounded rates. `insufficientData` when either group has fewer than 30 trials or fewer than 5 expected successes
 * or failures under the pooled rate; the figures are still given when they can be computed.
 */
export function compareProportions(treatment: Group, control: Group): Comparison {
  const rate = (g: Group) => (g.trials > 0 ? g.successes / g.trials : null);
  const pT = rate(treatment);
  const pC = rate(control);
  const pooledTrials = treatment.trials + control.trials;
  const pooled = pooledTrials > 0 ? (treatment.successes + control.successes) / pooledTrials : 0;
  const insufficientData = [treatment, control].some(
    (g) => g.trials < minTrials || g.trials * pooled < minExpected || g.trials * (1 - pooled) < minExpected,
  );
  const rates = {
    treatmentRate: share(treatment.successes, treatment.trials),
    controlRate: share(control.successes, control.trials),
  };
  if (pT === null || pC === null)
    return {
      ...rates,
      upliftPoints: null,
      confidenceInterval95: null,
      pValue: null,
      insufficientData,
    };
  const diff = pT - pC;
  const se = Math.sqrt((pT * (1 - pT)) / treatment.trials + (pC * (1 - pC)) / control.trials);
  const pooledSe = Math.sqrt(pooled * (1 - pooled) * (1 / treatment.trials + 1 / control.trials));
  const pValue = pooledSe > 0 ? 2 * (1 - normalCdf(Math.abs(diff) / pooledSe)) : diff === 0 ? 1 : 0;
  return {
    ...rates,
    upliftPoints: points(diff),
    confidenceInterval95: [points(diff - z95 * se), points(diff + z95 * se)],
    pValue: Math.min(1, Math.max(0, Math.round(pValue * 1e6) / 1e6)),
    insufficientData,
  };
}
