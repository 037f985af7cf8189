import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bootstrapMeans, bootstrapMeansOfKeys, MULTINOMIAL_ROWS_PER_BIN, type BootstrapOptions } from './bootstrap.ts';
import { clusteredMeanAccuracy } from './intervals.ts';
import { classOf } from './classify.ts';
import { passCurvesAt } from './estimators.ts';
import { pairedMeanAccuracy, pairedStats, type PairedDelta } from './paired.ts';
import type { CountedPair, CountedSide } from './pairing.ts';
import { DEFAULT_REPORT_OPTIONS, reportGroup } from './report.ts';
import { rowColumns } from './rowColumns.ts';
import type { ReportRow } from './rowSummary.ts';

/**
 * The report's and the comparison's numbers are computed by key (one per distinct (n, c), or (n, c) pair) and in one
 * pass over the rows (docs/performance.md, 2026-12-07): these tests hold them to the computation row by row that
 * they replaced, written out here, on random rows: equal to the bit, intervals included (same seed, same stream).
 */
const BOOT: BootstrapOptions = { reps: 60, seed: 7, confidence: 0.9 };

/** Rows of small counts: n up to 6 (0 = nothing graded), ungraded, outputs and forbidden actions. */
const arbRow = fc.record({
  n: fc.nat({ max: 6 }),
  pass: fc.double({ min: 0, max: 1, noNaN: true }),
  ungraded: fc.nat({ max: 2 }),
  od: fc.constantFrom(null, true, false),
  forbidden: fc.nat({ max: 1 }),
});
type ArbRow = { n: number; pass: number; ungraded: number; od: boolean | null; forbidden: number };
const reportRow = ({ n, pass, ungraded, od, forbidden }: ArbRow, i: number, minAttempts: number): ReportRow => {
  const c = Math.round(pass * n);
  return {
    row_id: `r${i}`,
    n,
    c,
    ungraded,
    class: classOf(n, c, minAttempts),
    outputs_differ: n < 2 ? null : od,
    forbidden_trials: forbidden,
    checks: [],
  };
};
const side = (screening: ReportRow): CountedSide => ({
  screening,
  all: { n: screening.n, c: screening.c, ungraded: screening.ungraded, class: screening.class },
  confirmation: { n: 0, c: 0 },
});

const mean = (xs: readonly number[]): number | null =>
  xs.length > 0 ? xs.reduce((a, b) => a + b, 0) / xs.length : null;

/** pairedStats as it was computed before the keys: one record and one column entry per row. */
const pairedRowByRow = (pairs: readonly CountedPair[], k: number, bootstrap: BootstrapOptions) => {
  const both = pairs.filter((p) => p.baseline.screening.n > 0 && p.candidate.screening.n > 0);
  const curvesOf = passCurvesAt(k);
  const curves = both.map((p) => ({
    b: curvesOf(p.baseline.screening.n, p.baseline.screening.c).passHat,
    c: curvesOf(p.candidate.screening.n, p.candidate.screening.c).passHat,
  }));
  const columns = Array.from({ length: k }, (_, i) =>
    Float64Array.from(curves, ({ b, c }) => (b[i] === undefined || c[i] === undefined ? NaN : c[i]! - b[i]!)),
  );
  const intervals = bootstrapMeans(columns, bootstrap);
  const at = (i: number): PairedDelta => {
    const used = curves.filter(({ b, c }) => b[i] !== undefined && c[i] !== undefined);
    const base = mean(used.map(({ b }) => b[i]!));
    const cand = mean(used.map(({ c }) => c[i]!));
    const delta = base === null || cand === null ? null : cand - base;
    return { rows: used.length, baseline: base, candidate: cand, delta, interval: intervals[i] ?? null };
  };
  const classified = pairs.filter(
    (p) => p.baseline.screening.class !== 'unclassified' && p.candidate.screening.class !== 'unclassified',
  );
  const isFlip = (s: CountedSide) => (s.screening.class === 'flip' ? 1 : 0);
  const flipBase = mean(classified.map((p) => isFlip(p.baseline)));
  const flipCand = mean(classified.map((p) => isFlip(p.candidate)));
  const [flip] = bootstrapMeans(
    [Float64Array.from(classified, (p) => isFlip(p.candidate) - isFlip(p.baseline))],
    bootstrap,
  );
  return {
    rows: both.length,
    k_max: k,
    mean_accuracy: pairedMeanAccuracy(
      both.map((p) => ({ b: p.baseline.screening, c: p.candidate.screening })),
      bootstrap.confidence,
    ),
    pass_at_1: k >= 1 ? at(0) : { rows: 0, baseline: null, candidate: null, delta: null, interval: null },
    pass_hat_k: Object.fromEntries(Array.from({ length: k }, (_, i) => [String(i + 1), at(i)])),
    flip_rate: {
      rows: classified.length,
      baseline: flipBase,
      candidate: flipCand,
      delta: flipBase === null || flipCand === null ? null : flipCand - flipBase,
      interval: flip ?? null,
    },
  };
};

describe('statistics by key equal the row-by-row computation', () => {
  it('bootstrapMeansOfKeys: the intervals of the columns written out row by row', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.constantFrom(NaN, 0, 0.5, 1, 1 / 3, -1), { minLength: 4, maxLength: 4 }), {
          minLength: 1,
          maxLength: 5,
        }),
        fc.array(fc.nat({ max: 4 }), { maxLength: 40 }),
        fc.boolean(),
        (keyed, picks, many) => {
          // `many`: enough rows per bin for the multinomial draws, else one draw per row
          const keyOf = Int32Array.from(
            many
              ? Array.from(
                  { length: 2 * 4 * MULTINOMIAL_ROWS_PER_BIN },
                  (_, i) => picks[i % Math.max(1, picks.length)] ?? 0,
                )
              : picks,
          );
          const columns = [0, 1, 2, 3].map((j) => Float64Array.from(keyed.map((k) => k[j]!)));
          const keyOfIn = keyOf.map((k) => k % keyed.length);
          const rowByRow = columns.map((col) => Float64Array.from(keyOfIn, (k) => col[k]!));
          expect(bootstrapMeansOfKeys(keyOfIn, columns, BOOT)).toEqual(bootstrapMeans(rowByRow, BOOT));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('pairedStats: every paired number and interval', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(arbRow, arbRow), { maxLength: 120 }),
        fc.integer({ min: 0, max: 4 }),
        fc.integer({ min: 1, max: 3 }),
        (rows, k, minAttempts) => {
          const pairs = rows.map(([b, c], i): CountedPair => ({
            row_id: `r${i}`,
            baseline: side(reportRow(b, i, minAttempts)),
            candidate: side(reportRow(c, i, minAttempts)),
          }));
          expect(pairedStats(pairs, { k, bootstrap: BOOT })).toEqual(pairedRowByRow(pairs, k, BOOT));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('reportGroup: the counts per row, the output flips, the short rows and the intervals', () => {
    fc.assert(
      fc.property(
        fc.array(arbRow, { maxLength: 150 }),
        fc.integer({ min: 1, max: 3 }),
        fc.boolean(),
        fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined }),
        (arb, minAttempts, ungradedAsFailure, declared) => {
          const rows = arb.map((r, i) => reportRow(r, i, minAttempts));
          const key = { suite: 's', dataset_version: 'd', agent_version: 'v' };
          const opts = {
            ...DEFAULT_REPORT_OPTIONS,
            minAttempts,
            ungradedAsFailure,
            bootstrap: BOOT,
            ...(declared === undefined ? {} : { declared: [{ ...key, run_id: 'run-1', k: declared }] }),
          };
          const g = reportGroup(key, rows, opts);
          // row by row, as before
          const graded = rows.filter((r) => r.n > 0);
          const ns = graded.map((r) => r.n);
          const counts: Record<string, number> = {};
          for (const n of ns) counts[String(n)] = (counts[String(n)] ?? 0) + 1;
          expect(g.attempts_per_row).toEqual(
            ns.length === 0
              ? { min: null, max: null, mean: null, counts }
              : { min: Math.min(...ns), max: Math.max(...ns), mean: ns.reduce((a, b) => a + b, 0) / ns.length, counts },
          );
          expect(JSON.stringify(Object.keys(g.attempts_per_row.counts))).toBe(JSON.stringify(Object.keys(counts)));
          const eligible = rows.filter((r) => r.outputs_differ !== null);
          const differ = eligible.filter((r) => r.outputs_differ === true);
          expect(g.output_flip).toEqual({
            rate: eligible.length > 0 ? differ.length / eligible.length : null,
            rows: differ.length,
            eligible: eligible.length,
            stable_wrong: differ.filter((r) => r.class === 'stable_wrong').length,
          });
          expect(g.ungraded).toBe(rows.reduce((a, r) => a + r.ungraded, 0));
          expect(g.forbidden_trials).toBe(rows.reduce((a, r) => a + r.forbidden_trials, 0));
          const recorded = rows.map((r) => (ungradedAsFailure ? r.n : r.n + r.ungraded));
          const declaredK = g.declared_k ?? undefined;
          expect(g.rows_short).toBe(
            declaredK === undefined ? 0 : recorded.filter((x) => x > 0 && x < declaredK).length,
          );
          const cols = rowColumns(graded, g.k_max, minAttempts);
          const boot = bootstrapMeans([...cols.passAt, ...cols.passHat, cols.flip], BOOT);
          const byK = (offset: number) =>
            Object.fromEntries(cols.passAt.map((_, i) => [String(i + 1), boot[offset + i] ?? null]));
          expect(g.intervals.pass_at_k).toEqual(byK(0));
          expect(g.intervals.pass_hat_k).toEqual(byK(g.k_max));
          expect(g.intervals.flip_rate.bootstrap).toEqual(boot[2 * g.k_max] ?? null);
          expect(g.intervals.mean_accuracy.clustered_se).toBe(clusteredMeanAccuracy(rows, BOOT.confidence)?.se ?? null);
        },
      ),
      { numRuns: 150 },
    );
  });
});
