import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classOf } from './classify.ts';
import { binomial, withinExact } from './exact.testkit.ts';
import { binsWithRecorded, defaultK, histogramOf, summarizeHistogram } from './histogram.ts';

const rows = fc.array(
  fc.integer({ min: 0, max: 8 }).chain((n) => fc.record({ n: fc.constant(n), c: fc.integer({ min: 0, max: n }) })),
  { minLength: 1, maxLength: 30 },
);

/** Exact mean over rows of C(a_i, k)/C(n_i, k), as a BigInt rational. */
const exactMean = (rs: { n: number; a: number }[], k: number) => {
  let num = 0n;
  let den = 1n;
  for (const { n, a } of rs) {
    const [p, q] = [binomial(a, k), binomial(n, k)];
    num = num * q + p * den;
    den *= q;
  }
  return { num, den: den * BigInt(rs.length) };
};

describe('summarizeHistogram', () => {
  it('averages exact per-row values over the rows with n ≥ k, for k up to the default K or a chosen K', () => {
    fc.assert(
      fc.property(rows, fc.option(fc.integer({ min: 1, max: 9 }), { nil: undefined }), (rs, k) => {
        const s = summarizeHistogram(histogramOf(rs), { k, minAttempts: 3 });
        const graded = rs.filter((r) => r.n > 0);
        expect(s.rows).toBe(graded.length);
        expect(s.rows_without_graded).toBe(rs.length - graded.length);
        expect(s.k_max).toBe(k ?? (graded.length ? Math.min(...graded.map((r) => r.n)) : 0));
        for (let j = 1; j <= s.k_max; j++) {
          const used = graded.filter((r) => r.n >= j);
          expect(s.rows_at_k[String(j)]).toBe(used.length);
          if (used.length === 0) {
            expect(s.pass_hat_k[String(j)]).toBeNull();
            continue;
          }
          const hat = exactMean(
            used.map((r) => ({ n: r.n, a: r.c })),
            j,
          );
          const miss = exactMean(
            used.map((r) => ({ n: r.n, a: r.n - r.c })),
            j,
          );
          expect(withinExact(s.pass_hat_k[String(j)]!, hat, 13)).toBe(true);
          expect(withinExact(s.pass_at_k[String(j)]!, { num: miss.den - miss.num, den: miss.den }, 13)).toBe(true);
        }
      }),
    );
  });

  it('counts classes like classOf per row, and flip rate = flips / classified', () => {
    fc.assert(
      fc.property(rows, fc.integer({ min: 1, max: 5 }), (rs, min) => {
        const s = summarizeHistogram(histogramOf(rs), { minAttempts: min });
        for (const cls of ['stable_correct', 'stable_wrong', 'flip', 'unclassified'] as const)
          expect(s.classes[cls]).toBe(rs.filter((r) => classOf(r.n, r.c, min) === cls).length);
        expect(s.classified).toBe(rs.length - s.classes.unclassified);
        expect(s.flip_rate).toBe(s.classified ? s.classes.flip / s.classified : null);
      }),
    );
  });

  it('mean accuracy is Σc/Σn, not the mean of per-row rates', () => {
    const s = summarizeHistogram([
      { n: 1, c: 1, count: 1 },
      { n: 9, c: 0, count: 1 },
    ]);
    expect(s.mean_accuracy).toBe(0.1);
    expect(s.pass_at_k['1']).toBe(0.5);
  });
});

describe("binsWithRecorded (a snapshot's histogram and its rows with ungraded attempts)", () => {
  it('gives the bins and default K that histogramOf gives from the rows themselves', () => {
    const rowsWithUngraded = fc.array(
      fc.record({
        n: fc.integer({ min: 0, max: 6 }),
        u: fc.integer({ min: 0, max: 3 }),
        p: fc.double({ min: 0, max: 1 }),
      }),
      { minLength: 1, maxLength: 30 },
    );
    fc.assert(
      fc.property(rowsWithUngraded, (rs) => {
        const live = rs.filter((r) => r.n + r.u > 0).map((r) => ({ ...r, c: Math.floor(r.p * r.n) }));
        const histogram: Record<string, number> = {};
        const ungraded: Record<string, number> = {};
        for (const { n, c, u } of live) {
          histogram[`${n},${c}`] = (histogram[`${n},${c}`] ?? 0) + 1;
          if (u > 0) ungraded[`${n},${c},${u}`] = (ungraded[`${n},${c},${u}`] ?? 0) + 1;
        }
        const direct = histogramOf(live.map(({ n, c, u }) => ({ n, c, recorded: n + u })));
        const bins = binsWithRecorded(histogram, ungraded);
        // the same bins; `recorded` left out where it is n
        expect(bins).toEqual(direct.map((b) => (b.recorded! > b.n ? b : { n: b.n, c: b.c, count: b.count })));
        expect(defaultK(bins)).toBe(defaultK(direct));
      }),
    );
  });

  it('an older snapshot (no ungraded map) reads each row as recorded n: K is the fewest graded', () => {
    const bins = binsWithRecorded({ '2,1': 1, '3,3': 2 });
    expect(bins).toEqual([
      { n: 2, c: 1, count: 1 },
      { n: 3, c: 3, count: 2 },
    ]);
    expect(defaultK(bins)).toBe(2);
    // one unscored epoch of three in the (2, 1) row: every row was given 3
    expect(defaultK(binsWithRecorded({ '2,1': 1, '3,3': 2 }, { '2,1,1': 1 }))).toBe(3);
    // a bin with a row that has no ungraded attempt was given n
    expect(binsWithRecorded({ '2,1': 2 }, { '2,1,1': 1 })).toEqual([{ n: 2, c: 1, count: 2 }]);
  });
});
