/**
 * Unbiased finite-sample estimators for one row with n graded attempts and c passes
 * (Chen et al. 2021 for pass@k; Yao et al. 2024, τ-bench, for pass^k).
 *
 *   pass@k = 1 − C(n−c, k) / C(n, k)     at least one of k attempts passes
 *   pass^k = C(c, k) / C(n, k)           all k attempts pass
 *
 * Both ratios are computed in product form: every factor is in [0, 1], so nothing overflows.
 * C(a, k)/C(n, k) has two product forms, ∏_{i<k} (a−i)/(n−i) and ∏_{j=1..n−a} (a−k+j)/(a+j);
 * we use the shorter one, so the rounding error is at most about 2·min(k, n−a) ulps. Where that
 * count is large the ratio itself is tiny, so the absolute error stays far below 1e-12 up to n = 10^5
 * (checked against exact BigInt rationals in the tests).
 */

const check = (n: number, c: number, k: number): void => {
  if (!Number.isInteger(n) || !Number.isInteger(c) || !Number.isInteger(k) || n < 0 || c < 0 || c > n || k < 1 || k > n)
    throw new RangeError(`need integers 0 <= c <= n and 1 <= k <= n; got n=${n}, c=${c}, k=${k}`);
};

/** C(a, k) / C(n, k) for 0 <= a <= n, k <= n, as the shorter of its two products of factors in [0, 1]. */
export const binomialRatio = (a: number, n: number, k: number): number => {
  if (a < k) return 0;
  let r = 1;
  if (k <= n - a) for (let i = 0; i < k; i++) r *= (a - i) / (n - i);
  else for (let j = 1; j <= n - a; j++) r *= (a - k + j) / (a + j);
  return r;
};

/** pass^k for one row: the chance that k attempts drawn without replacement all pass. */
export const passHatK = (n: number, c: number, k: number): number => {
  check(n, c, k);
  return binomialRatio(c, n, k);
};

/** pass@k for one row: the chance that at least one of k attempts drawn without replacement passes. */
export const passAtK = (n: number, c: number, k: number): number => {
  check(n, c, k);
  return 1 - binomialRatio(n - c, n, k);
};

/** Below this many "other" attempts the direct short product is cheap and more exact than the running one. */
const SHORT_PRODUCT = 64;

/** C(a, k)/C(n, k) for k = 1..K: a running product, re-anchored on the short form when n − a is small. */
const ratioCurve = (a: number, n: number, K: number): number[] => {
  const out: number[] = new Array(K);
  let r = 1;
  for (let k = 1; k <= K; k++) {
    const i = k - 1;
    if (a - i <= 0) r = 0;
    else if (n - a <= SHORT_PRODUCT && k > n - a) r = binomialRatio(a, n, k);
    else r *= (a - i) / (n - i);
    out[i] = r;
  }
  return out;
};

/**
 * pass^k and pass@k for k = 1..maxK: index k−1 holds the value at k. maxK is clamped to n.
 */
export type PassCurves = { passHat: number[]; passAt: number[] };

export const passCurves = (n: number, c: number, maxK: number): PassCurves => {
  const K = Math.min(maxK, n);
  if (K >= 1) check(n, c, K);
  const passHat = ratioCurve(c, n, K);
  const passAt = ratioCurve(n - c, n, K).map((miss) => 1 - miss);
  return { passHat, passAt };
};

/**
 * `passCurves` at one maxK, computed once per distinct (n, c): a report's rows share a few dozen, so 200k rows
 * need a few dozen computations, not 200k. The curves returned are shared: read them, never change them.
 */
export const passCurvesAt = (maxK: number): ((n: number, c: number) => Readonly<PassCurves>) => {
  const byN = new Map<number, Map<number, PassCurves>>();
  return (n, c) => {
    let byC = byN.get(n);
    if (!byC) byN.set(n, (byC = new Map()));
    let curves = byC.get(c);
    if (!curves) byC.set(c, (curves = passCurves(n, c, maxK)));
    return curves;
  };
};
