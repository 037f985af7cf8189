import { describe, expect, it } from 'vitest';
import { DEFAULT_ADAPTIVE, firstStage, planRound, type AdaptiveOptions, type AdaptiveRow } from './adaptive.ts';
import { adaptiveGate, fixedGate, simulateAdaptive, type SimRow } from './adaptiveSim.ts';
import { createRng, type Rng } from './prng.ts';
import { DEFAULT_SEQUENTIAL_GATE, sequentialGate, settleGate } from './sequentialGate.ts';

const row = (row_id: string, n: number, c: number, must_not_break = false, attempts = n): AdaptiveRow => ({
  row_id,
  must_not_break,
  attempts,
  n,
  c,
});
const opts = (o: Partial<AdaptiveOptions> = {}): AdaptiveOptions => ({ ...DEFAULT_ADAPTIVE, ...o });

describe('planRound: who gets the next attempts', () => {
  it('gives every row its first stage, then one attempt a round to the uncertain rows only', () => {
    const r0 = planRound(0, [row('a', 0, 0), row('b', 0, 0, true)], 0, opts());
    expect(r0.grants).toEqual([
      { row_id: 'a', attempts: 2 },
      { row_id: 'b', attempts: 2 },
    ]);
    const r1 = planRound(
      1,
      [row('flip', 2, 1), row('same', 2, 2), row('mnb', 2, 2, true), row('wrong', 3, 0)],
      4,
      opts(),
    );
    expect(r1.grants).toEqual([
      { row_id: 'mnb', attempts: 1 },
      { row_id: 'same', attempts: 1 },
    ]);
    const stops = Object.fromEntries(r1.decisions.filter((d) => d.decision === 'stop').map((d) => [d.row_id, d]));
    expect(stops['flip']).toMatchObject({ reason: 'flip_seen', class: 'flip' });
    expect(stops['wrong']).toMatchObject({ reason: 'classified', class: 'stable_wrong' });
    expect(r1.done).toBe(false);
  });

  it('runs a passing must-not-break row to max-k and stops a failing one once it is classifiable', () => {
    const o = opts({ maxK: 5 });
    expect(planRound(1, [row('m', 4, 4, true)], 0, o).grants).toEqual([{ row_id: 'm', attempts: 1 }]);
    expect(planRound(1, [row('m', 5, 5, true)], 0, o).decisions[0]).toMatchObject({
      reason: 'max_k',
      class: 'stable_correct',
    });
    expect(planRound(1, [row('m', 2, 1, true)], 0, o).grants).toEqual([{ row_id: 'm', attempts: 1 }]);
    expect(planRound(1, [row('m', 3, 2, true)], 0, o).decisions[0]).toMatchObject({
      reason: 'must_not_break_failed',
      class: 'flip',
    });
  });

  it('replaces ungraded attempts, up to twice max-k attempts in all', () => {
    expect(planRound(0, [row('u', 1, 1, false, 2)], 0, opts()).grants).toEqual([{ row_id: 'u', attempts: 1 }]);
    expect(planRound(0, [row('u', 1, 1, false, 16)], 0, opts()).decisions[0]).toMatchObject({ reason: 'max_k' });
  });

  it('spends the budget on must-not-break rows first and keeps back what they still need', () => {
    const rows = [row('x', 2, 2), row('y', 2, 2), row('m', 2, 2, true)];
    // 10 left: m takes 1 now and keeps 5 back (max-k 8), so x and y share the other 4
    const r = planRound(1, rows, 0, opts({ budget: 10 }));
    expect(r.grants.map((g) => g.row_id)).toEqual(['m', 'x', 'y']);
    const tight = planRound(1, rows, 4, opts({ budget: 10 }));
    expect(tight.grants.map((g) => g.row_id)).toEqual(['m']);
    expect(tight.decisions.filter((d) => d.reason === 'budget').map((d) => d.row_id)).toEqual(['x', 'y']);
    const spent = planRound(1, rows, 10, opts({ budget: 10 }));
    expect(spent.done).toBe(true);
    expect(spent.decisions.every((d) => d.decision === 'stop' && d.reason === 'budget')).toBe(true);
  });
});

describe('a gate decided early', () => {
  it('stops every open row with reason gate_decided, and the simulated candidate stops there', () => {
    const r = planRound(3, [row('a', 2, 2), row('m', 3, 2, true)], 7, opts(), true);
    expect(r).toMatchObject({ done: true, grants: [] });
    expect(r.decisions.map((d) => [d.row_id, d.reason])).toEqual([
      ['a', 'gate_decided'],
      ['m', 'gate_decided'],
    ]);
    const rows: SimRow[] = [
      { row_id: 'x', p: 0.5, must_not_break: false },
      { row_id: 'm', p: 1, must_not_break: true },
    ];
    const run = simulateAdaptive(rows, opts(), createRng(1), () => true);
    expect(run.attempts).toBe(4);
    expect(run.rounds.at(-1)!.decisions.every((d) => d.reason === 'gate_decided')).toBe(true);
  });
});

describe('sequential gate', () => {
  const g = { ...DEFAULT_SEQUENTIAL_GATE, passAttempts: 5 };
  const gr = (b: [number, number], conf: [number, number], c: [number, number]) => ({
    row_id: 'r',
    baseline: { n: b[0], c: b[1] },
    baseline_confirmation: { n: conf[0], c: conf[1] },
    candidate: { n: c[0], c: c[1] },
  });
  it('fails as soon as a failure is confirmed by the baseline, and asks for the confirmation first', () => {
    const suspect = sequentialGate([gr([5, 5], [0, 0], [3, 2])], g);
    expect(suspect.verdict).toBe('open');
    expect(suspect.rows[0]).toMatchObject({ status: 'suspect', needs: { baseline: 3, candidate: 0 } });
    expect(sequentialGate([gr([8, 8], [3, 3], [3, 2])], g)).toMatchObject({ verdict: 'fail', broken: ['r'] });
    // the baseline failed during its confirmation: never reliably right, so the rule does not bind
    expect(sequentialGate([gr([8, 7], [3, 2], [3, 2])], g).verdict).toBe('pass');
    // a failure before min-attempts is not yet a classified row
    expect(sequentialGate([gr([5, 5], [0, 0], [1, 0])], g).rows[0]).toMatchObject({
      status: 'open',
      needs: { candidate: 2 },
    });
  });
  it('passes once every row is held on passAttempts or not covered, and not before', () => {
    expect(sequentialGate([gr([5, 5], [0, 0], [4, 4])], g).verdict).toBe('open');
    expect(sequentialGate([gr([5, 5], [0, 0], [5, 5]), { ...gr([3, 1], [0, 0], [0, 0]), row_id: 's' }], g)).toEqual({
      verdict: 'pass',
      broken: [],
      rows: [
        { row_id: 'r', status: 'ok', needs: { baseline: 0, candidate: 0 } },
        { row_id: 's', status: 'not_covered', needs: { baseline: 0, candidate: 0 } },
      ],
    });
  });
  it('settles an open gate by the fixed rules: an unclassifiable row fails it', () => {
    expect(settleGate([gr([5, 5], [0, 0], [4, 4])], g)).toBe('pass');
    expect(settleGate([gr([5, 5], [0, 0], [2, 2])], g)).toBe('fail');
    expect(settleGate([gr([5, 5], [0, 0], [4, 3])], g)).toBe('fail');
  });
});

/**
 * The population of coverage.unit.test.ts: per-row success probabilities p with weights w. An adaptive
 * run (budget 2.5 attempts a row) gives each row a number of attempts that depends on its outcomes.
 */
const POPULATION = [
  { p: 0.02, w: 0.2 },
  { p: 0.3, w: 0.15 },
  { p: 0.6, w: 0.15 },
  { p: 0.85, w: 0.2 },
  { p: 0.99, w: 0.3 },
];
const truth = (f: (p: number) => number) => POPULATION.reduce((a, { p, w }) => a + w * f(p), 0);
const drawP = (rng: Rng): number => {
  let u = rng.next();
  for (const { p, w } of POPULATION) if ((u -= w) < 0) return p;
  return POPULATION[POPULATION.length - 1]!.p;
};
const ROWS = 100;
const population = (rng: Rng): SimRow[] =>
  Array.from({ length: ROWS }, (_, i) => ({ row_id: `r${i}`, p: drawP(rng), must_not_break: i % 20 === 0 }));

describe('headline estimators under adaptive stopping (seeded simulation)', () => {
  const o = opts({ budget: 2.5 * ROWS });
  const SIMS = 2_000;
  const rng = createRng(31);
  const est = { pass1: [] as number[], pass2: [] as number[], at2: [] as number[], flip: [] as number[] };
  const naive: number[] = [];
  for (let s = 0; s < SIMS; s++) {
    const run = simulateAdaptive(population(rng), o, rng);
    const f = firstStage(run.verdicts, o.firstK, { reps: 1, seed: 1, confidence: 0.95 });
    est.pass1.push(f.pass_at_k['1']!);
    est.pass2.push(f.pass_hat_k['2']!);
    est.at2.push(f.pass_at_k['2']!);
    est.flip.push(f.flip_rate!);
    // the flip rate over every attempt, as if k were fixed: rows that went on had more chances to flip
    naive.push(run.verdicts.filter((v) => v.some(Boolean) && !v.every(Boolean)).length / ROWS);
  }
  const meanSe = (xs: number[]) => {
    const m = xs.reduce((a, b) => a + b, 0) / xs.length;
    const sd = Math.sqrt(xs.reduce((a, b) => a + (b - m) ** 2, 0) / (xs.length - 1));
    return { m, se: sd / Math.sqrt(xs.length) };
  };
  // tolerance: 4 standard errors of the simulated mean (a false alarm about once in 16,000 runs)
  it.each([
    ['pass@1', 'pass1', truth((p) => p)],
    ['pass^2', 'pass2', truth((p) => p ** 2)],
    ['pass@2', 'at2', truth((p) => 1 - (1 - p) ** 2)],
    ['flip rate (2 attempts)', 'flip', truth((p) => 2 * p * (1 - p))],
  ] as const)('%s from the first stage is unbiased within 4 simulation SEs', (_, key, value) => {
    const { m, se } = meanSe(est[key]);
    expect(Math.abs(m - value)).toBeLessThanOrEqual(4 * se);
  });
  it('while the flip rate over all attempts is biased beyond that tolerance (the test can see bias)', () => {
    const { m, se } = meanSe(naive);
    expect(Math.abs(m - truth((p) => 2 * p * (1 - p)))).toBeGreaterThan(4 * se);
  });

  it('bootstrap intervals of the first-stage numbers cover the population value 95% ± 3.3 points', () => {
    const N = 400;
    const r = createRng(3131);
    const hits = { pass1: 0, pass2: 0, flip: 0 };
    for (let s = 0; s < N; s++) {
      const run = simulateAdaptive(population(r), o, r);
      const f = firstStage(run.verdicts, o.firstK, { reps: 300, seed: s + 1, confidence: 0.95 });
      const covers = (i: readonly [number, number] | null, v: number) => i !== null && i[0] <= v && v <= i[1];
      if (
        covers(
          f.intervals.pass_at_k['1']!,
          truth((p) => p),
        )
      )
        hits.pass1++;
      if (
        covers(
          f.intervals.pass_hat_k['2']!,
          truth((p) => p ** 2),
        )
      )
        hits.pass2++;
      if (
        covers(
          f.intervals.flip_rate,
          truth((p) => 2 * p * (1 - p)),
        )
      )
        hits.flip++;
    }
    // 3 binomial SEs of a 95% coverage estimated from N data sets: 3·√(0.95·0.05/400) ≈ 0.033
    const tol = 3 * Math.sqrt((0.95 * 0.05) / N);
    for (const [name, h] of Object.entries(hits)) {
      expect(h / N, name).toBeGreaterThanOrEqual(0.95 - tol);
      expect(h / N, name).toBeLessThanOrEqual(0.95 + tol);
    }
  });
});

describe('gate error rates: adaptive against fixed k = 5 on the same rows', () => {
  // 100 rows of the population, 5 must-not-break rows with p = 1 on the baseline but one flaky one
  const rows: SimRow[] = population(createRng(5)).map((r, i) =>
    r.must_not_break ? { ...r, p: i === 0 ? 0.85 : 1 } : r,
  );
  const planted = rows.map((r, i) => (i === 20 ? { ...r, p: 0.8 } : r));
  const SIMS = 1_500;
  const rate = (f: () => { verdict: string; attempts: number }) => {
    let fails = 0;
    let attempts = 0;
    for (let s = 0; s < SIMS; s++) {
      const g = f();
      if (g.verdict === 'fail') fails++;
      attempts += g.attempts;
    }
    return { fail: fails / SIMS, attempts: attempts / SIMS };
  };
  const o = opts({ budget: 2.5 * ROWS });
  const fixedRng = createRng(8);
  const adaptiveRng = createRng(9);
  const fixedNone = rate(() => fixedGate(rows, rows, 5, 3, 3, fixedRng));
  const fixedReg = rate(() => fixedGate(rows, planted, 5, 3, 3, fixedRng));
  const adNone = rate(() => adaptiveGate(rows, rows, o, DEFAULT_SEQUENTIAL_GATE, adaptiveRng));
  const adReg = rate(() => adaptiveGate(rows, planted, o, DEFAULT_SEQUENTIAL_GATE, adaptiveRng));
  // tolerance: 2 SEs of the difference of two simulated rates
  const tol = (a: number, b: number) => 2 * Math.sqrt((a * (1 - a) + b * (1 - b)) / SIMS);

  it('false-fail rate (no regression) is no higher than fixed k = 5', () => {
    expect(fixedNone.fail).toBeGreaterThan(0);
    expect(adNone.fail).toBeLessThanOrEqual(fixedNone.fail + tol(adNone.fail, fixedNone.fail));
  });
  it('false-pass rate (a planted must-not-break regression, p 1 → 0.8) is no higher than fixed k = 5', () => {
    expect(1 - adReg.fail).toBeLessThanOrEqual(1 - fixedReg.fail + tol(adReg.fail, fixedReg.fail));
  });
  it('at no more than half the attempts of fixed k = 5', () => {
    expect(adNone.attempts).toBeLessThanOrEqual(0.5 * fixedNone.attempts);
    expect(adReg.attempts).toBeLessThanOrEqual(0.5 * fixedReg.attempts);
  });
});
