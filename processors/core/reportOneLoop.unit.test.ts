import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bootstrapMeans, DEFAULT_BOOTSTRAP, MULTINOMIAL_ROWS_PER_BIN, quantileSorted } from './bootstrap.ts';
import { classOf } from './classify.ts';
import { multinomial } from './binomial.ts';
import { passCurvesAt } from './estimators.ts';
import type { Interval } from './intervals.ts';
import { createRng } from './prng.ts';
import { DEFAULT_REPORT_OPTIONS, reportGroup } from './report.ts';
import { rowColumns } from './rowColumns.ts';
import type { ReportRow } from './rowSummary.ts';

/**
 * The report's one-pass parts (attempts per row, output flips, the bootstrap's bins, the bootstrap's columns) hold
 * the answers of the code they replaced (issue #32's overview at 1M trials): each reference below is that code as it
 * was, and random rows must give equal answers.
 */

const minOf = (xs: number[]): number => xs.reduce((a, b) => (b < a ? b : a));
const maxOf = (xs: number[]): number => xs.reduce((a, b) => (b > a ? b : a));
const oldAttemptsPerRow = (used: readonly ReportRow[]) => {
  const ns = used.map((r) => r.n);
  const counts: Record<string, number> = {};
  for (const n of ns) counts[String(n)] = (counts[String(n)] ?? 0) + 1;
  if (ns.length === 0) return { min: null, max: null, mean: null, counts };
  return { min: minOf(ns), max: maxOf(ns), mean: ns.reduce((a, b) => a + b, 0) / ns.length, counts };
};
const oldOutputFlip = (rows: readonly ReportRow[]) => {
  const eligible = rows.filter((r) => r.outputs_differ !== null);
  const differ = eligible.filter((r) => r.outputs_differ === true);
  return {
    rate: eligible.length > 0 ? differ.length / eligible.length : null,
    rows: differ.length,
    eligible: eligible.length,
    stable_wrong: differ.filter((r) => r.class === 'stable_wrong').length,
  };
};

const bits = new Float64Array(1);
const words = new Uint32Array(bits.buffer);
const oldRowHash = (columns: readonly ArrayLike<number>[], i: number): number => {
  let h = 0x811c9dc5;
  for (const col of columns) {
    bits[0] = col[i]!;
    h = Math.imul(h ^ words[0]!, 16777619);
    h = Math.imul(h ^ words[1]!, 16777619);
  }
  return h;
};
const oldBinRows = (columns: readonly ArrayLike<number>[], R: number) => {
  const binOf = new Int32Array(R);
  const byHash = new Map<number, number[]>();
  const firstRow: number[] = [];
  const same = (a: number, b: number) => columns.every((col) => Object.is(col[a], col[b]));
  for (let i = 0; i < R; i++) {
    const h = oldRowHash(columns, i);
    const candidates = byHash.get(h) ?? [];
    let b = candidates.find((bin) => same(firstRow[bin]!, i));
    if (b === undefined) {
      b = firstRow.length;
      firstRow.push(i);
      candidates.push(b);
      byHash.set(h, candidates);
    }
    binOf[i] = b;
  }
  return { binOf, values: columns.map((col) => Float64Array.from(firstRow, (i) => col[i]!)) };
};
const oldBootstrapMeans = (columns: readonly ArrayLike<number>[], opts = DEFAULT_BOOTSTRAP): (Interval | null)[] => {
  const R = columns[0]?.length ?? 0;
  if (R === 0) return columns.map(() => null);
  const { binOf, values } = oldBinRows(columns, R);
  const bins = values[0]!.length;
  const rng = createRng(opts.seed);
  const drawn = new Int32Array(bins);
  const reps = columns.map(() => new Float64Array(opts.reps));
  const filled = new Int32Array(columns.length);
  const byBin = bins * MULTINOMIAL_ROWS_PER_BIN <= R;
  const weights = new Float64Array(bins);
  if (byBin) for (let i = 0; i < R; i++) weights[binOf[i]!]!++;
  const draws = new Int32Array(byBin ? 0 : R);
  for (let b = 0; b < opts.reps; b++) {
    if (byBin) multinomial(rng, R, weights, drawn);
    else {
      drawn.fill(0);
      rng.ints(R, draws);
      for (let i = 0; i < R; i++) drawn[binOf[draws[i]!]!]!++;
    }
    for (let j = 0; j < values.length; j++) {
      const v = values[j]!;
      let sum = 0;
      let used = 0;
      for (let bin = 0; bin < v.length; bin++)
        if (drawn[bin]! > 0 && !Number.isNaN(v[bin]!)) {
          sum += drawn[bin]! * v[bin]!;
          used += drawn[bin]!;
        }
      if (used > 0) reps[j]![filled[j]!++] = sum / used;
    }
  }
  return reps.map((r, j) => {
    const count = filled[j]!;
    if (count === 0) return null;
    const sorted = r.subarray(0, count).sort();
    const alpha = (1 - opts.confidence) / 2;
    return [quantileSorted(sorted, alpha), quantileSorted(sorted, 1 - alpha)] as Interval;
  });
};
const oldRowColumns = (rows: readonly { n: number; c: number }[], K: number, minAttempts: number) => {
  const passAt = Array.from({ length: K }, () => new Float64Array(rows.length).fill(NaN));
  const passHat = Array.from({ length: K }, () => new Float64Array(rows.length).fill(NaN));
  const flip = new Float64Array(rows.length).fill(NaN);
  const curvesOf = passCurvesAt(K);
  rows.forEach(({ n, c }, r) => {
    const curves = curvesOf(n, c);
    curves.passAt.forEach((v, i) => (passAt[i]![r] = v));
    curves.passHat.forEach((v, i) => (passHat[i]![r] = v));
    if (n >= Math.max(1, minAttempts)) flip[r] = c > 0 && c < n ? 1 : 0;
  });
  return { passAt, passHat, flip };
};

const reportRow = fc
  .record({
    n: fc.nat(7),
    pass: fc.nat(7),
    ungraded: fc.nat(2),
    outputs: fc.constantFrom(null, true, false),
    forbidden: fc.nat(1),
  })
  .map(({ n, pass, ungraded, outputs, forbidden }): ReportRow => {
    const c = Math.min(pass, n);
    return {
      row_id: 'r',
      n,
      c,
      ungraded,
      class: classOf(n, c, DEFAULT_REPORT_OPTIONS.minAttempts),
      outputs_differ: outputs,
      forbidden_trials: forbidden,
      checks: [],
    };
  });
// many rows over few distinct values (the multinomial's side of the line) or few rows (the row draws' side)
const rowsOf = fc.oneof(
  fc.array(reportRow, { maxLength: 40 }),
  fc
    .array(reportRow, { minLength: 2, maxLength: 6 })
    .chain((kinds) =>
      fc
        .array(fc.nat(kinds.length - 1), { minLength: 3000, maxLength: 4000 })
        .map((picks) => picks.map((p) => kinds[p]!)),
    ),
);
const key = { suite: 's', dataset_version: 'd', agent_version: 'v' };
const opts = { ...DEFAULT_REPORT_OPTIONS, bootstrap: { ...DEFAULT_BOOTSTRAP, reps: 100 } };

describe('the report in one pass per part, against the code it replaced', () => {
  it('attempts per row and output flips', () => {
    fc.assert(
      fc.property(rowsOf, (rows) => {
        const r = reportGroup(key, rows, opts);
        expect(r.attempts_per_row).toEqual(oldAttemptsPerRow(rows.filter((x) => x.n > 0)));
        expect(Object.keys(r.attempts_per_row.counts)).toEqual(
          Object.keys(oldAttemptsPerRow(rows.filter((x) => x.n > 0)).counts),
        );
        expect(r.output_flip).toEqual(oldOutputFlip(rows));
      }),
      { numRuns: 200 },
    );
  });

  it("the bootstrap's columns and intervals", () => {
    fc.assert(
      fc.property(rowsOf, fc.integer({ min: 1, max: 6 }), fc.nat(3), (rows, K, minAttempts) => {
        const now = rowColumns(rows, K, minAttempts);
        expect(now).toEqual(oldRowColumns(rows, K, minAttempts));
        const columns = [...now.passAt, ...now.passHat, now.flip];
        expect(bootstrapMeans(columns, opts.bootstrap)).toEqual(oldBootstrapMeans(columns, opts.bootstrap));
      }),
      { numRuns: 30 },
    );
  });

  it('bins rows whose 32-bit hashes collide apart by their values', () => {
    // 1/52779 and 1/86714 share their FNV hash: two bins in one hash's chain
    const [x, y] = [1 / 52_779, 1 / 86_714];
    expect(oldRowHash([[x, y]], 0)).toBe(oldRowHash([[x, y]], 1));
    const column = Float64Array.from({ length: 600 }, (_, i) => [x, y, 0.5][i % 3]!);
    const o = { ...DEFAULT_BOOTSTRAP, reps: 50 };
    const [interval] = bootstrapMeans([column], o);
    expect(interval).toEqual(oldBootstrapMeans([column], o)[0]);
    // and it holds the column's mean
    expect(interval![0]).toBeLessThan((x + y + 0.5) / 3);
    expect(interval![1]).toBeGreaterThan((x + y + 0.5) / 3);
  });
});
