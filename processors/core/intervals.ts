/**
 * Closed-form intervals. Wilson for proportions of independent units (rows, or trials when
 * they are independent), because it keeps its coverage near 0 and 1 and for small n, where the
 * Wald interval collapses. A cluster-robust standard error for mean accuracy, because attempts
 * on the same row are correlated: treating them as independent understates the uncertainty.
 */
export type Interval = readonly [number, number];

/** The standard normal quantile (Acklam's rational approximation, relative error < 1.2e-9). */
export const normalQuantile = (p: number): number => {
  if (!(p > 0 && p < 1)) throw new RangeError(`quantile needs 0 < p < 1, got ${p}`);
  const a = [
    -39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239,
  ];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
  const c = [
    -0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968,
    2.938163982698783,
  ];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const tail = (q: number): number =>
    (((((c[0]! * q + c[1]!) * q + c[2]!) * q + c[3]!) * q + c[4]!) * q + c[5]!) /
    ((((d[0]! * q + d[1]!) * q + d[2]!) * q + d[3]!) * q + 1);
  if (p < 0.02425) return tail(Math.sqrt(-2 * Math.log(p)));
  if (p > 1 - 0.02425) return -tail(Math.sqrt(-2 * Math.log(1 - p)));
  const q = p - 0.5;
  const r = q * q;
  return (
    ((((((a[0]! * r + a[1]!) * r + a[2]!) * r + a[3]!) * r + a[4]!) * r + a[5]!) * q) /
    (((((b[0]! * r + b[1]!) * r + b[2]!) * r + b[3]!) * r + b[4]!) * r + 1)
  );
};

/** z for a two-sided interval at `confidence`, e.g. 1.959964 for 0.95. */
export const zFor = (confidence: number): number => normalQuantile(1 - (1 - confidence) / 2);

/** Wilson score interval for `successes` out of `total`; null when total is 0. */
export const wilson = (successes: number, total: number, confidence: number): Interval | null => {
  if (total <= 0) return null;
  const z = zFor(confidence);
  const p = successes / total;
  const z2n = (z * z) / total;
  const centre = (p + z2n / 2) / (1 + z2n);
  const half = (z * Math.sqrt((p * (1 - p)) / total + z2n / (4 * total))) / (1 + z2n);
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
};

export type ClusteredMean = { value: number; se: number | null; interval: Interval | null };

/**
 * Mean accuracy Σc / Σn with a cluster-robust (CR1) standard error, clusters = rows:
 * Var = R/(R−1) · Σ (c_i − p̂·n_i)² / (Σn)². Normal interval, clipped to [0, 1].
 * Rows may come grouped: `count` rows with the same (n, c) (a histogram bin; default 1), so the
 * store's (n, c) histogram gives the interval without one object per row.
 */
export const clusteredMeanAccuracy = (
  rows: readonly { n: number; c: number; count?: number }[],
  confidence: number,
): ClusteredMean | null => {
  let N = 0;
  let C = 0;
  let R = 0;
  for (const r of rows) {
    const k = r.count ?? 1;
    N += k * r.n;
    C += k * r.c;
    if (r.n > 0) R += k;
  }
  if (N === 0) return null;
  const value = C / N;
  if (R < 2) return { value, se: null, interval: null };
  let ss = 0;
  for (const r of rows) if (r.n > 0) ss += (r.count ?? 1) * (r.c - value * r.n) ** 2;
  const se = Math.sqrt((R / (R - 1)) * ss) / N;
  const half = zFor(confidence) * se;
  return { value, se, interval: [Math.max(0, value - half), Math.min(1, value + half)] };
};
