import { describe, expect, it } from 'vitest';
import { classOf } from './classify.ts';
import { createRng, type Rng } from './prng.ts';
import { reportGroup } from './report.ts';
import type { RowSummary } from './rowSummary.ts';

/**
 * Interval coverage by seeded simulation. The estimand is the population value: a row is drawn from
 * a heterogeneous population of per-row success probabilities (most rows easy or hard, some in
 * between, as real suites are), and the agent attempts it `n` times independently. Then
 *   pass@1 = E[p]      pass^3 = E[p^3]      flip rate (at n attempts) = E[1 − p^n − (1 − p)^n]
 * over the population. Each simulated data set draws R rows, runs the real report (bootstrap over
 * rows, Wilson, clustered SE), and we count how often each 95% interval covers the true value.
 */
const POPULATION = [
  { p: 0.02, w: 0.2 },
  { p: 0.3, w: 0.15 },
  { p: 0.6, w: 0.15 },
  { p: 0.85, w: 0.2 },
  { p: 0.99, w: 0.3 },
];
const ROWS = 100;
const ATTEMPTS = 4;
const SIMS = 1_000;
const REPS = 400;

const truth = (f: (p: number) => number): number => POPULATION.reduce((a, { p, w }) => a + w * f(p), 0);
const TRUE_PASS1 = truth((p) => p);
const TRUE_PASS3 = truth((p) => p ** 3);
const TRUE_FLIP = truth((p) => 1 - p ** ATTEMPTS - (1 - p) ** ATTEMPTS);

const drawP = (rng: Rng): number => {
  let u = rng.next();
  for (const { p, w } of POPULATION) if ((u -= w) < 0) return p;
  return POPULATION[POPULATION.length - 1]!.p;
};

const simulateRows = (rng: Rng): RowSummary[] =>
  Array.from({ length: ROWS }, (_, i) => {
    const p = drawP(rng);
    let c = 0;
    for (let a = 0; a < ATTEMPTS; a++) if (rng.next() < p) c++;
    return {
      row_id: String(i),
      n: ATTEMPTS,
      c,
      ungraded: 0,
      class: classOf(ATTEMPTS, c, 3),
      outputs_differ: null,
      checks: [],
      forbidden_trials: 0,
      event_ids: [],
      tags: [],
    };
  });

const covers = (i: readonly [number, number] | null | undefined, v: number): boolean => !!i && i[0] <= v && v <= i[1];

describe('interval coverage (seeded simulation, 1,000 data sets)', () => {
  it('95% intervals cover the population value in 93–97% of data sets', { timeout: 60_000 }, () => {
    const rng = createRng(20_260_101);
    const hits = { pass1: 0, pass3: 0, meanAccuracy: 0, flipWilson: 0, flipBoot: 0 };
    for (let s = 0; s < SIMS; s++) {
      const g = reportGroup({ suite: 's', dataset_version: 'd', agent_version: 'v' }, simulateRows(rng), {
        ungradedAsFailure: false,
        minAttempts: 3,
        k: 3,
        bootstrap: { reps: REPS, seed: s + 1, confidence: 0.95 },
      });
      if (covers(g.intervals.pass_at_k['1'], TRUE_PASS1)) hits.pass1++;
      if (covers(g.intervals.pass_hat_k['3'], TRUE_PASS3)) hits.pass3++;
      if (covers(g.intervals.mean_accuracy.clustered, TRUE_PASS1)) hits.meanAccuracy++;
      if (covers(g.intervals.flip_rate.wilson, TRUE_FLIP)) hits.flipWilson++;
      if (covers(g.intervals.flip_rate.bootstrap, TRUE_FLIP)) hits.flipBoot++;
    }
    // Bootstrap over rows for pass@1 and pass^3 (required), plus the clustered SE for mean accuracy
    // and both flip-rate intervals: every 95% interval the report prints.
    for (const [name, covered] of Object.entries(hits)) {
      expect(covered / SIMS, `${name} coverage`).toBeGreaterThanOrEqual(0.93);
      expect(covered / SIMS, `${name} coverage`).toBeLessThanOrEqual(0.97);
    }
  });
});
