import { describe, expect, it } from 'vitest';
import { classOf } from './classify.ts';
import { pairedStats } from './paired.ts';
import type { RowPair, SideRow } from './pairing.ts';
import { createRng, type Rng } from './prng.ts';
import type { RowSummary } from './rowSummary.ts';

/**
 * Coverage of the paired intervals by seeded simulation, as coverage.unit.test.ts does for one version's. A row is
 * drawn from a population of (baseline, candidate) success probabilities in which some rows get better, some worse and
 * most stay, so the two sides are correlated as a real comparison's are; each side then attempts the row n times,
 * n drawn from 3..5 on each side independently (unequal attempts, so Σc/Σn is not the mean of c/n). The estimands are
 * population differences, candidate − baseline:
 *   mean accuracy = E[n·p_c]/E[n] − E[n·p_b]/E[n] = E[p_c] − E[p_b]   (n independent of p)
 *   pass@1 = E[p_c] − E[p_b]   pass^3 = E[p_c³] − E[p_b³]   flip rate = E[φ(p_c, n)] − E[φ(p_b, n)], φ = 1 − pⁿ − (1−p)ⁿ
 * Each simulated comparison runs the real pairedStats (paired bootstrap over rows; paired clustered SE), and we count
 * how often each 95% interval covers the true difference.
 */
const POPULATION = [
  { b: 0.02, c: 0.02, w: 0.15 },
  { b: 0.3, c: 0.3, w: 0.1 },
  { b: 0.3, c: 0.6, w: 0.1 },
  { b: 0.6, c: 0.3, w: 0.05 },
  { b: 0.6, c: 0.85, w: 0.1 },
  { b: 0.85, c: 0.99, w: 0.15 },
  { b: 0.99, c: 0.99, w: 0.25 },
  { b: 0.99, c: 0.85, w: 0.1 },
];
const NS = [3, 4, 5];
const ROWS = 100;
const SIMS = 1_000;
const REPS = 400;

const truth = (f: (p: number, n: number) => number): number =>
  POPULATION.reduce((a, { b, c, w }) => a + (w * NS.reduce((s, n) => s + f(c, n) - f(b, n), 0)) / NS.length, 0);
const TRUE = {
  mean_accuracy: truth((p) => p),
  pass_at_1: truth((p) => p),
  pass_hat_3: truth((p) => p ** 3),
  flip_rate: truth((p, n) => 1 - p ** n - (1 - p) ** n),
};

const side = (rng: Rng, row_id: string, p: number): SideRow => {
  const n = NS[rng.int(NS.length)]!;
  let c = 0;
  for (let a = 0; a < n; a++) if (rng.next() < p) c++;
  const s: RowSummary = {
    row_id,
    n,
    c,
    ungraded: 0,
    class: classOf(n, c, 3),
    outputs_differ: null,
    checks: [],
    forbidden_trials: 0,
    event_ids: [],
    tags: [],
  };
  return { screening: s, all: s, confirmation: { ...s, n: 0, c: 0, class: 'unclassified' } };
};

const simulate = (rng: Rng): RowPair[] =>
  Array.from({ length: ROWS }, (_, i) => {
    let u = rng.next();
    const pick = POPULATION.find(({ w }) => (u -= w) < 0) ?? POPULATION[POPULATION.length - 1]!;
    const row_id = String(i);
    return { row_id, tags: [], baseline: side(rng, row_id, pick.b), candidate: side(rng, row_id, pick.c) };
  });

const covers = (i: readonly [number, number] | null | undefined, v: number): boolean => !!i && i[0] <= v && v <= i[1];

describe('paired interval coverage (seeded simulation, 1,000 comparisons)', () => {
  it('every paired 95% interval covers the population difference in 93–97% of comparisons', { timeout: 60_000 }, () => {
    const rng = createRng(20_261_205);
    const hits = { mean_accuracy: 0, pass_at_1: 0, pass_hat_3: 0, flip_rate: 0 };
    for (let s = 0; s < SIMS; s++) {
      const p = pairedStats(simulate(rng), { k: 3, bootstrap: { reps: REPS, seed: s + 1, confidence: 0.95 } });
      if (covers(p.mean_accuracy.interval, TRUE.mean_accuracy)) hits.mean_accuracy++;
      if (covers(p.pass_at_1.interval, TRUE.pass_at_1)) hits.pass_at_1++;
      if (covers(p.pass_hat_k['3']!.interval, TRUE.pass_hat_3)) hits.pass_hat_3++;
      if (covers(p.flip_rate.interval, TRUE.flip_rate)) hits.flip_rate++;
    }
    // the differences are not zero, so an interval that always straddles 0 does not pass by accident
    expect(Math.abs(TRUE.mean_accuracy)).toBeGreaterThan(0.01);
    expect(Math.abs(TRUE.flip_rate)).toBeGreaterThan(0.01);
    for (const [name, covered] of Object.entries(hits)) {
      expect(covered / SIMS, `${name} coverage`).toBeGreaterThanOrEqual(0.93);
      expect(covered / SIMS, `${name} coverage`).toBeLessThanOrEqual(0.97);
    }
  });
});
