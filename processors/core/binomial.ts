import type { Rng } from './prng.ts';

/**
 * Exact samplers for the bootstrap's bin counts: how many of R rows drawn with replacement fall in each bin is
 * multinomial, so it can be drawn in work that grows with the number of bins, not with R.
 */

/** Gamma(shape, 1) for shape >= 1 (Marsaglia and Tsang, 2000), normals by Box–Muller. */
const gamma = (rng: Rng, shape: number): number => {
  const d = shape - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    const x = Math.sqrt(-2 * Math.log(1 - rng.next())) * Math.cos(2 * Math.PI * rng.next());
    const t = 1 + c * x;
    if (t <= 0) continue;
    const v = t * t * t;
    const u = 1 - rng.next();
    if (u < 1 - 0.0331 * x * x * x * x || Math.log(u) < 0.5 * x * x + d * (1 - v + Math.log(v))) return d * v;
  }
};

/** Below this mean a binomial is drawn by inversion (expected work: the mean). */
const INVERSION_MEAN = 16;

/**
 * Binomial(n, p), exactly. A small mean by inversion; otherwise Knuth's split (TAOCP 3.4.1): the a-th smallest of
 * n uniforms is Beta(a, n + 1 − a); the uniforms below p are then all among the a − 1 below it, or it and the
 * a − 1 below it plus some of the n − a above it. Each split halves n: a loop of depth log2(n), no recursion.
 */
export const binomial = (rng: Rng, n: number, p: number): number => {
  let base = 0;
  let sign = 1; // the answer is base + sign × Binomial(n, p)
  for (;;) {
    if (n <= 0 || p <= 0) return base;
    if (p >= 1) return base + sign * n;
    if (p > 0.5) {
      // Binomial(n, p) = n − Binomial(n, 1 − p)
      base += sign * n;
      sign = -sign;
      p = 1 - p;
    }
    if (n * p < INVERSION_MEAN) {
      const q = 1 - p;
      const s = p / q;
      const a = (n + 1) * s;
      let r = Math.pow(q, n);
      let u = rng.next();
      let x = 0;
      while (u > r && x < n) {
        u -= r;
        x++;
        r *= a / x - s;
      }
      return base + sign * x;
    }
    const a = (n >> 1) + 1;
    const b = n + 1 - a;
    const ga = gamma(rng, a);
    const beta = ga / (ga + gamma(rng, b));
    if (beta >= p) {
      n = a - 1;
      p = p / beta;
    } else {
      base += sign * a;
      n = b - 1;
      p = (p - beta) / (1 - beta);
    }
  }
};

/**
 * Fills `out` with a multinomial draw of `total` over bins of the given weights (each weight ÷ their sum is a
 * bin's probability), by conditional binomials: what R draws with replacement put in each bin, in distribution.
 */
export const multinomial = (rng: Rng, total: number, weights: ArrayLike<number>, out: Int32Array): void => {
  let left = total;
  let weightLeft = 0;
  for (let i = 0; i < weights.length; i++) weightLeft += weights[i]!;
  for (let i = 0; i < weights.length; i++) {
    const w = weights[i]!;
    const k = left === 0 ? 0 : i === weights.length - 1 ? left : binomial(rng, left, w / weightLeft);
    out[i] = k;
    left -= k;
    weightLeft -= w;
  }
};
