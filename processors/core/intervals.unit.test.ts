import { describe, expect, it } from 'vitest';
import { bootstrapMeans, quantileSorted } from './bootstrap.ts';
import { clusteredMeanAccuracy, normalQuantile, wilson, zFor } from './intervals.ts';
import { binomialHalfCdf, mcnemarExact } from './mcnemar.ts';
import { createRng } from './prng.ts';

describe('normal quantile', () => {
  it('matches known values', () => {
    expect(zFor(0.95)).toBeCloseTo(1.959963985, 8);
    expect(zFor(0.9)).toBeCloseTo(1.644853627, 8);
    expect(normalQuantile(0.001)).toBeCloseTo(-3.090232306, 8);
  });
});

describe('Wilson interval', () => {
  it('matches the closed form on textbook cases', () => {
    // 8 of 10 at 95%: 0.4902 – 0.9433 (Newcombe 1998, method 3)
    const [lo, hi] = wilson(8, 10, 0.95)!;
    expect(lo).toBeCloseTo(0.4902, 4);
    expect(hi).toBeCloseTo(0.9433, 4);
  });
  it('stays inside [0, 1] and has width at 0 and n successes', () => {
    expect(wilson(0, 20, 0.95)![0]).toBe(0);
    expect(wilson(0, 20, 0.95)![1]).toBeGreaterThan(0.1);
    expect(wilson(20, 20, 0.95)![1]).toBe(1);
    expect(wilson(0, 0, 0.95)).toBeNull();
  });
});

describe('clustered mean accuracy', () => {
  it('is Σc/Σn with the CR1 sandwich standard error', () => {
    const rows = [
      { n: 4, c: 4 },
      { n: 4, c: 0 },
      { n: 2, c: 1 },
    ];
    const r = clusteredMeanAccuracy(rows, 0.95)!;
    expect(r.value).toBe(0.5);
    // residuals c - p n: 2, -2, 0; Var = 3/2 · 8 / 10² = 0.12
    expect(r.se).toBeCloseTo(Math.sqrt(0.12), 12);
  });
  it('is wider than the independent-trials interval when rows are all-or-nothing', () => {
    const rows = Array.from({ length: 20 }, (_, i) => ({ n: 5, c: i % 2 === 0 ? 5 : 0 }));
    const r = clusteredMeanAccuracy(rows, 0.95)!;
    const [lo, hi] = wilson(50, 100, 0.95)!;
    expect(r.interval![1] - r.interval![0]).toBeGreaterThan(hi - lo);
  });
  it('gives the same answer from rows grouped into (n, c) bins as from the rows one by one', () => {
    const rows = Array.from({ length: 60 }, (_, i) => ({ n: 3 + (i % 3), c: (i * 7) % (4 + (i % 3)) }));
    const bins = new Map<string, { n: number; c: number; count: number }>();
    for (const r of rows) {
      const b = bins.get(`${r.n},${r.c}`) ?? { ...r, count: 0 };
      b.count++;
      bins.set(`${r.n},${r.c}`, b);
    }
    const one = clusteredMeanAccuracy(rows, 0.9)!;
    const grouped = clusteredMeanAccuracy([...bins.values(), { n: 0, c: 0, count: 5 }], 0.9)!;
    expect(bins.size).toBeLessThan(rows.length);
    expect(grouped.value).toBe(one.value);
    expect(grouped.se).toBeCloseTo(one.se!, 14);
    expect(grouped.interval![0]).toBeCloseTo(one.interval![0], 14);
  });
});

describe('exact McNemar', () => {
  it('matches the binomial tail', () => {
    expect(mcnemarExact(0, 5).p_value).toBeCloseTo(0.0625, 12);
    expect(mcnemarExact(1, 9).p_value).toBeCloseTo(22 / 1024, 12);
    expect(mcnemarExact(5, 5).p_value).toBe(1);
    expect(mcnemarExact(0, 0).p_value).toBe(1);
  });
  it('stays finite for many discordant rows', () => {
    expect(binomialHalfCdf(5_000, 10_000)).toBeGreaterThan(0.5);
    expect(mcnemarExact(4_000, 6_000).p_value).toBeLessThan(1e-50);
  });
});

describe('seeded PRNG and bootstrap', () => {
  it('the same seed gives the same stream; another seed another one', () => {
    const a = createRng(7);
    const b = createRng(7);
    const c = createRng(8);
    const xs = Array.from({ length: 5 }, () => a.next());
    expect(Array.from({ length: 5 }, () => b.next())).toEqual(xs);
    expect(Array.from({ length: 5 }, () => c.next())).not.toEqual(xs);
  });
  it('is roughly uniform', () => {
    const rng = createRng(1);
    const bins = new Array(10).fill(0);
    for (let i = 0; i < 100_000; i++) bins[rng.int(10)]++;
    for (const b of bins) expect(Math.abs(b - 10_000)).toBeLessThan(500);
  });
  it('bootstrap intervals are reproducible, contain the mean, and skip NaN rows', () => {
    const col = Float64Array.from({ length: 50 }, (_, i) => (i % 3 === 0 ? 1 : 0));
    const withGaps = Float64Array.from(col, (v, i) => (i >= 45 ? NaN : v));
    const opts = { reps: 500, seed: 3, confidence: 0.95 };
    const [a, b] = bootstrapMeans([col, withGaps], opts);
    expect(bootstrapMeans([col, withGaps], opts)).toEqual([a, b]);
    expect(a![0]).toBeLessThan(17 / 50);
    expect(a![1]).toBeGreaterThan(17 / 50);
    expect(b).not.toEqual(a);
    expect(bootstrapMeans([Float64Array.from([NaN, NaN])], opts)).toEqual([null]);
  });
  it('quantiles interpolate between order statistics', () => {
    expect(quantileSorted([0, 10], 0.25)).toBe(2.5);
    expect(quantileSorted([1, 2, 3, 4, 5], 0.5)).toBe(3);
  });
});
