import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classOf } from './classify.ts';
import { passAtK, passCurves, passHatK } from './estimators.ts';
import { binomial, withinExact, type Rational } from './exact.testkit.ts';

/** All k-subsets of {0..n-1}, as arrays of indexes. */
const subsets = (n: number, k: number): number[][] => {
  if (k === 0) return [[]];
  if (n < k) return [];
  return [...subsets(n - 1, k), ...subsets(n - 1, k - 1).map((s) => [...s, n - 1])];
};

/** Brute force over every k-subset of n attempts of which the first c pass. */
const bruteForce = (n: number, c: number, k: number): { all: Rational; any: Rational } => {
  const subs = subsets(n, k);
  const den = BigInt(subs.length);
  return {
    all: { num: BigInt(subs.filter((s) => s.every((i) => i < c)).length), den },
    any: { num: BigInt(subs.filter((s) => s.some((i) => i < c)).length), den },
  };
};

/** The class by brute force: look at every non-empty subset of the attempts. */
const bruteClass = (n: number, c: number, min: number): string => {
  if (n < Math.max(1, min)) return 'unclassified';
  const all = Array.from({ length: n }, (_, k) => subsets(n, k + 1)).flat();
  if (all.every((s) => s.every((i) => i < c))) return 'stable_correct';
  if (all.every((s) => s.every((i) => i >= c))) return 'stable_wrong';
  return 'flip';
};

const rowArb = fc
  .integer({ min: 1, max: 10 })
  .chain((n) => fc.record({ n: fc.constant(n), c: fc.integer({ min: 0, max: n }), k: fc.integer({ min: 1, max: n }) }));

describe('pass@k and pass^k equal brute-force enumeration (n ≤ 10)', () => {
  it('pass^k = share of k-subsets that all pass, pass@k = share with at least one pass', () => {
    fc.assert(
      fc.property(rowArb, ({ n, c, k }) => {
        const { all, any } = bruteForce(n, c, k);
        expect(withinExact(passHatK(n, c, k), all, 14)).toBe(true);
        expect(withinExact(passAtK(n, c, k), any, 14)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('every (n, c, k) with n ≤ 10, exhaustively, also through passCurves', () => {
    for (let n = 1; n <= 10; n++)
      for (let c = 0; c <= n; c++) {
        const curves = passCurves(n, c, n);
        for (let k = 1; k <= n; k++) {
          const { all, any } = bruteForce(n, c, k);
          expect(withinExact(curves.passHat[k - 1]!, all, 14), `pass^${k} n=${n} c=${c}`).toBe(true);
          expect(withinExact(curves.passAt[k - 1]!, any, 14), `pass@${k} n=${n} c=${c}`).toBe(true);
        }
      }
  });

  it('the stability class equals the brute-force class, for any minimum', () => {
    fc.assert(
      fc.property(rowArb, fc.integer({ min: 0, max: 11 }), ({ n, c }, min) => {
        expect(classOf(n, c, min)).toBe(bruteClass(n, c, min));
      }),
      { numRuns: 300 },
    );
  });
});

describe('extremes: n = 100,000', () => {
  const n = 100_000;
  const exact = (a: number, k: number): Rational => ({ num: binomial(a, k), den: binomial(n, k) });
  const cs = [0, 1, 2, 50_000, 75_000, 99_998, 99_999, 100_000];
  const ks = [1, 2, 3, 10, 1_000, 99_999, 100_000];

  it('pass^k and pass@k are finite and within 1e-12 of the exact rational', () => {
    for (const c of cs)
      for (const k of ks) {
        const hat = passHatK(n, c, k);
        const at = passAtK(n, c, k);
        expect(Number.isFinite(hat) && Number.isFinite(at)).toBe(true);
        expect(withinExact(hat, exact(c, k), 12), `pass^${k} c=${c}`).toBe(true);
        const miss = exact(n - c, k);
        expect(withinExact(at, { num: miss.den - miss.num, den: miss.den }, 12), `pass@${k} c=${c}`).toBe(true);
      }
  });

  it('passCurves stays within 1e-12 of exact at every sampled k, up to K = n', () => {
    for (const c of [1, 10, 99_990, 99_999]) {
      const { passHat, passAt } = passCurves(n, c, n);
      expect(passHat.every(Number.isFinite) && passAt.every(Number.isFinite)).toBe(true);
      for (const k of [1, 2, 64, 65, 5_000, 99_990, 99_999, 100_000]) {
        expect(withinExact(passHat[k - 1]!, exact(c, k), 12), `pass^${k} c=${c}`).toBe(true);
        const miss = exact(n - c, k);
        expect(withinExact(passAt[k - 1]!, { num: miss.den - miss.num, den: miss.den }, 12), `pass@${k} c=${c}`).toBe(
          true,
        );
      }
    }
  });

  it('random rows at n = 100,000 with k ≤ 300 match the exact rational', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: n }), fc.integer({ min: 1, max: 300 }), (c, k) => {
        expect(withinExact(passHatK(n, c, k), exact(c, k), 12)).toBe(true);
      }),
      { numRuns: 40 },
    );
  });

  it('rejects impossible inputs instead of returning NaN', () => {
    expect(() => passHatK(3, 4, 1)).toThrow(RangeError);
    expect(() => passAtK(3, 1, 4)).toThrow(RangeError);
    expect(() => passHatK(3, 1, 0)).toThrow(RangeError);
  });
});

/** E[f(C)] for C ~ Binomial(n, p), summed exactly over the pmf (the estimators are unbiased). */
const expectation = (n: number, p: number, f: (c: number) => number): number => {
  let sum = 0;
  for (let c = 0; c <= n; c++) sum += Number(binomial(n, c)) * p ** c * (1 - p) ** (n - c) * f(c);
  return sum;
};

describe('the seed numbers', () => {
  it('a stable p = 0.75 gives pass@3 = 98.4% and pass^3 = 42.2%, for any n ≥ 3 (unbiased estimators)', () => {
    for (const n of [3, 4, 10, 25]) {
      expect((100 * expectation(n, 0.75, (c) => passAtK(n, c, 3))).toFixed(1)).toBe('98.4');
      expect((100 * expectation(n, 0.75, (c) => passHatK(n, c, 3))).toFixed(1)).toBe('42.2');
      expect(expectation(n, 0.75, (c) => passHatK(n, c, 3))).toBeCloseTo(0.75 ** 3, 12);
    }
    // One row observed 100,000 times at 75%: the plug-in values.
    expect((100 * passAtK(100_000, 75_000, 3)).toFixed(1)).toBe('98.4');
    expect((100 * passHatK(100_000, 75_000, 3)).toFixed(1)).toBe('42.2');
  });

  it('a 90%-accurate agent gets eight right in a row about 43% of the time (0.9^8)', () => {
    for (const n of [8, 10, 20]) {
      const v = expectation(n, 0.9, (c) => passHatK(n, c, 8));
      expect(v).toBeCloseTo(0.9 ** 8, 12);
      expect(Math.round(100 * v)).toBe(43);
    }
  });
});
