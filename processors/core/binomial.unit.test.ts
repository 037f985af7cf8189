import { describe, expect, it } from 'vitest';
import { binomial, multinomial } from './binomial.ts';
import { bootstrapMeans, MULTINOMIAL_ROWS_PER_BIN } from './bootstrap.ts';
import { createRng } from './prng.ts';

const moments = (xs: readonly number[]): { mean: number; variance: number } => {
  const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
  return { mean, variance: xs.reduce((s, x) => s + (x - mean) ** 2, 0) / (xs.length - 1) };
};

describe('binomial', () => {
  it('has the mean and variance of Binomial(n, p) by inversion, by splits and by symmetry', () => {
    const rng = createRng(11);
    // small means (inversion), large ones (Knuth's splits), p above one half (n − Binomial(n, 1 − p))
    for (const [n, p] of [
      [3, 0.4],
      [100_000, 0.00005],
      [1_000, 0.5],
      [100_000, 0.3],
      [50, 0.9],
      [250_000, 0.999],
    ] as const) {
      const xs = Array.from({ length: 20_000 }, () => binomial(rng, n, p));
      expect(xs.filter((x) => !Number.isInteger(x) || x < 0 || x > n)).toEqual([]);
      const { mean, variance } = moments(xs);
      const sd = Math.sqrt(n * p * (1 - p));
      // the sample mean within 5 standard errors, the variance within 10%
      expect(Math.abs(mean - n * p)).toBeLessThan((5 * sd) / Math.sqrt(xs.length));
      expect(variance / (sd * sd)).toBeGreaterThan(0.9);
      expect(variance / (sd * sd)).toBeLessThan(1.1);
    }
  });

  it('gives each value of a small binomial its probability', () => {
    const rng = createRng(5);
    const seen = [0, 0, 0, 0];
    const draws = 100_000;
    for (let i = 0; i < draws; i++) seen[binomial(rng, 3, 0.4)]!++;
    const pmf = [0.216, 0.432, 0.288, 0.064];
    seen.forEach((count, x) => expect(Math.abs(count / draws - pmf[x]!)).toBeLessThan(0.005));
  });

  it('is 0 or n at the ends', () => {
    const rng = createRng(1);
    expect(binomial(rng, 0, 0.5)).toBe(0);
    expect(binomial(rng, 10, 0)).toBe(0);
    expect(binomial(rng, 10, 1)).toBe(10);
  });
});

describe('multinomial', () => {
  it('puts every draw in some bin, each bin its share on average', () => {
    const rng = createRng(3);
    const weights = Float64Array.from([50_000, 30_000, 15_000, 4_990, 10]);
    const out = new Int32Array(weights.length);
    const sums = new Float64Array(weights.length);
    for (let rep = 0; rep < 2_000; rep++) {
      multinomial(rng, 100_000, weights, out);
      if (out.reduce((s, x) => s + x, 0) !== 100_000) expect.fail(`replicate ${rep}: ${out.join(', ')}`);
      out.forEach((x, i) => (sums[i]! += x));
    }
    weights.forEach((w, i) => {
      const sd = Math.sqrt(100_000 * (w / 100_000) * (1 - w / 100_000));
      expect(Math.abs(sums[i]! / 2_000 - w)).toBeLessThan((5 * sd) / Math.sqrt(2_000));
    });
  });
});

describe('bootstrapMeans over many rows in few bins', () => {
  it('draws bin counts as one multinomial and gives the interval of the mean', () => {
    // 100k rows of 6 values (a report's rows with 5 attempts): far more rows per bin than the multinomial needs
    const R = 100_000;
    const col = Float64Array.from({ length: R }, (_, i) => ((i * 7919) % 6) / 5);
    expect(6 * MULTINOMIAL_ROWS_PER_BIN).toBeLessThanOrEqual(R);
    const opts = { reps: 2_000, seed: 1, confidence: 0.95 };
    const [interval] = bootstrapMeans([col], opts);
    const { mean, variance } = moments(Array.from(col));
    const se = Math.sqrt(variance / R);
    // the percentile interval of a mean over 100k rows is the normal one, mean ± 1.96 se, up to Monte Carlo error
    expect(interval![0]).toBeCloseTo(mean - 1.96 * se, 3);
    expect(interval![1]).toBeCloseTo(mean + 1.96 * se, 3);
    expect(Math.abs((interval![1] - interval![0]) / (2 * 1.96 * se) - 1)).toBeLessThan(0.1);
    expect(bootstrapMeans([col], opts)).toEqual([interval]);
  });
});
