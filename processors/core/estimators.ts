/**
 * Unbiased finite-sample estimators for one row with n graded attempts and c passes
 * (Chen et al. 2021 for pass@k; Yao et al. 2024, τ-bench, for pass^k).
 *
 *   pass@k = 1 − C(n−c, k) / C(n, k)     at least one of k attempts passes
 *   pass^k = C(c, k) / C(n, k)           all k attempts pass
 *
 * Both ratios are computed in product form, ∏ (a−i)/(n−i) for i < k: every factor is in [0, 1],
 * so nothing overflows and the result stays within a few ulps per factor of the exact rational,
 * for n up to 10^5 and beyond.
 */

const check = (n: number, c: number, k: number): void => {
  if (!Number.isInteger(n) || !Number.isInteger(c) || !Number.isInteger(k) || n < 0 || c < 0 || c > n || k < 1 || k > n)
    throw new RangeError(`need integers 0 <= c <= n and 1 <= k <= n; got n=${n}, c=${c}, k=${k}`);
};

/** C(a, k) / C(n, k) for 0 <= a <= n, k <= n, as a product of k factors in [0, 1]. */
const binomialRatio = (a: number, n: number, k: number): number => {
  if (a < k) return 0;
  let r = 1;
  for (let i = 0; i < k; i++) r *= (a - i) / (n - i);
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

/**
 * pass^k and pass@k for k = 1..maxK in one pass of O(maxK): index k−1 holds the value at k.
 * maxK is clamped to n.
 */
export const passCurves = (n: number, c: number, maxK: number): { passHat: number[]; passAt: number[] } => {
  const K = Math.min(maxK, n);
  const passHat: number[] = new Array(K);
  const passAt: number[] = new Array(K);
  let hat = 1;
  let miss = 1;
  for (let k = 1; k <= K; k++) {
    const i = k - 1;
    hat = c - i <= 0 ? 0 : hat * ((c - i) / (n - i));
    miss = n - c - i <= 0 ? 0 : miss * ((n - c - i) / (n - i));
    passHat[i] = hat;
    passAt[i] = 1 - miss;
  }
  return { passHat, passAt };
};
