/** part ÷ whole to four decimals; null when there is nothing to divide by. */
export const share = (part: number, whole: number) =>
  whole > 0 ? Math.round((part / whole) * 10_000) / 10_000 : null;

/** A fraction in percentage points, to two decimals: rounded once, from the unrounded fraction. */
export const points = (fraction: number) => Math.round(fraction * 10_000) / 100;
