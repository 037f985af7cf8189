import { describe, expect, it } from 'vitest';
import { groupTrials } from './groups.ts';
import { DEFAULT_ADAPTIVE, firstStage } from './adaptive.ts';
import { simulateAdaptive, type SimRow } from './adaptiveSim.ts';
import { createRng } from './prng.ts';
import { buildReport, DEFAULT_REPORT_OPTIONS, type ReportOptions } from './report.ts';
import { row, trial } from './trials.testkit.ts';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';

const OPTS: ReportOptions = { ...DEFAULT_REPORT_OPTIONS, bootstrap: { reps: 300, seed: 1, confidence: 0.95 } };
const report = (events: TrialRecorded[], opts: Partial<ReportOptions> = {}) =>
  buildReport(groupTrials(events), { ...OPTS, ...opts }).groups[0]!;

describe('report of one version', () => {
  it('describes the planned attempts: confirmation runs are left out unless asked for, and counted', () => {
    const planned = [...row('a', 'v', '+++'), ...row('b', 'v', '+-+')];
    const confirm = [0, 1, 2].map((i) =>
      trial({ row: 'b', version: 'v', passed: false, run: 'confirm-1', attempt: 10 + i }),
    );
    const out = report([...planned, ...confirm]);
    expect(out).toMatchObject({ trials: 6, mean_accuracy: 5 / 6, confirmation_attempts: { count: 3, counted: false } });
    const all = report([...planned, ...confirm], { includeConfirmation: true });
    expect(all).toMatchObject({ trials: 9, mean_accuracy: 5 / 9, confirmation_attempts: { count: 3, counted: true } });
  });

  it('leaves ungraded trials out of n by default, or counts them as failures', () => {
    const events = [...row('a', 'v', '++?+'), ...row('b', 'v', '-?--'), ...row('c', 'v', '??')];
    const out = report(events);
    expect(out).toMatchObject({
      rows: 2,
      rows_without_graded: 1,
      trials: 6,
      ungraded: 4,
      mean_accuracy: 3 / 6,
      k_max: 3,
    });
    expect(out.classes).toEqual({ stable_correct: 1, stable_wrong: 1, flip: 0, unclassified: 1 });
    const failures = report(events, { ungradedAsFailure: true });
    expect(failures).toMatchObject({
      rows: 3,
      trials: 10,
      ungraded: 4,
      mean_accuracy: 3 / 10,
      k_max: 2,
      ungraded_as_failure: true,
    });
    expect(failures.classes).toEqual({ stable_correct: 0, stable_wrong: 1, flip: 1, unclassified: 1 });
  });

  it('K by default is the attempts every row was given, graded or not (one unscored epoch of three)', () => {
    const events = [...row('a', 'v', '+++'), ...row('b', 'v', '++?'), ...row('c', 'v', '+-+')];
    const out = report(events);
    expect(out.k_max).toBe(3);
    expect(out.rows_at_k).toEqual({ '1': 3, '2': 3, '3': 2 });
    expect(out.pass_hat_k['3']).toBe(0.5);
    // every row lost an attempt: no k beyond the most graded attempts of any row
    expect(report([...row('a', 'v', '++?'), ...row('b', 'v', '?+-')]).k_max).toBe(2);
    // counted as failures, the ungraded attempt is in n already
    expect(report(events, { ungradedAsFailure: true }).rows_at_k).toEqual({ '1': 3, '2': 3, '3': 3 });
  });

  it('--k reports beyond the default K, leaving rows with fewer attempts out at that k', () => {
    const events = [...row('a', 'v', '++'), ...row('b', 'v', '++++'), ...row('c', 'v', '+++-')];
    expect(report(events).k_max).toBe(2);
    const out = report(events, { k: 4 });
    expect(out.rows_at_k).toEqual({ '1': 3, '2': 3, '3': 2, '4': 2 });
    expect(out.pass_hat_k['4']).toBe(0.5);
    expect(out.pass_hat_k['3']).toBeCloseTo((1 + 1 / 4) / 2, 12);
    expect(report(events, { k: 5 }).pass_hat_k['5']).toBeNull();
  });

  it('reports intermediate-check stability and rows whose verdict is stable while a check flips', () => {
    const events = [
      ...['inside', 'inside', 'outside'].map((w, i) =>
        trial({ row: 'a', version: 'v', attempt: i, passed: true, checks: { window: w, receipt: true } }),
      ),
      ...['inside', 'inside', 'inside'].map((w, i) =>
        trial({ row: 'b', version: 'v', attempt: i, passed: i !== 1, checks: { window: w, receipt: i === 0 } }),
      ),
      ...[0, 1, 2].map((i) =>
        trial({ row: 'c', version: 'v', attempt: i, passed: false, checks: { window: 'inside' } }),
      ),
    ];
    const out = report(events);
    expect(out.checks.map((c) => [c.name, c.rows, c.flipping_rows])).toEqual([
      ['window', 3, 1],
      ['receipt', 2, 1],
    ]);
    expect(out.stable_verdict_check_flips).toEqual([{ row_id: 'a', class: 'stable_correct', checks: ['window'] }]);
  });

  it('counts output flips separately from verdict flips', () => {
    const events = [
      ...['deny', 'denied', 'no'].map((o, i) =>
        trial({ row: 'a', version: 'v', attempt: i, passed: false, output: o }),
      ),
      ...['approve', 'approve', 'approve'].map((o, i) =>
        trial({ row: 'b', version: 'v', attempt: i, passed: true, output: o }),
      ),
      ...row('c', 'v', '+++'),
    ];
    const out = report(events);
    expect(out.output_flip).toEqual({ rate: 0.5, rows: 1, eligible: 2, stable_wrong: 1 });
    expect(out.flip_rate).toBe(0);
  });

  it('gives every headline number its interval and evidence', () => {
    const events = ['a', 'b', 'c', 'd', 'e', 'f'].flatMap((id, i) =>
      row(id, 'v', ['+++', '---', '+-+', '++-', '+++', '-+-'][i]!),
    );
    const out = report(events);
    expect(out.attempts_per_row).toEqual({ min: 3, max: 3, mean: 3, counts: { '3': 6 } });
    const i = out.intervals;
    for (const [value, interval] of [
      [out.pass_at_k['1'], i.pass_at_k['1']],
      [out.pass_hat_k['3'], i.pass_hat_k['3']],
      [out.flip_rate, i.flip_rate.bootstrap],
      [out.flip_rate, i.flip_rate.wilson],
      [out.mean_accuracy, i.mean_accuracy.clustered],
    ] as const) {
      expect(interval![0]).toBeLessThanOrEqual(value!);
      expect(interval![1]).toBeGreaterThanOrEqual(value!);
    }
    expect(i.mean_accuracy.clustered_se).toBeGreaterThan(0);
    expect(report(events)).toEqual(out);
    // A different seed resamples differently (on enough rows for the quantiles to move).
    const many = Array.from({ length: 97 }, (_, r) =>
      row(`r${r}`, 'v', ['+++', '---', '+-+', '++-', '-+-'][r % 5]!),
    ).flat();
    const seeded = (seed: number) => report(many, { bootstrap: { ...OPTS.bootstrap, seed } }).intervals.pass_hat_k;
    expect(seeded(1)).toEqual(seeded(1));
    expect(seeded(2)).not.toEqual(seeded(1));
  });
});

describe('report of an adaptive run (--first-stage)', () => {
  it("counts only each adaptive run's first k graded attempts of a row, and gives the run's first-stage numbers", () => {
    const rng = createRng(4);
    const rows: SimRow[] = Array.from({ length: 40 }, (_, i) => ({
      row_id: `r${i}`,
      p: [0.1, 0.5, 0.9, 1][i % 4]!,
      must_not_break: i % 10 === 0,
    }));
    const run = simulateAdaptive(rows, { ...DEFAULT_ADAPTIVE, budget: 100 }, rng);
    const events = run.verdicts.flatMap((v, i) =>
      v.map((passed, attempt) =>
        trial({ row: `r${i}`, version: 'v', passed, run: 'adaptive-x', attempt, at: attempt }),
      ),
    );
    const stage = firstStage(run.verdicts, 2, OPTS.bootstrap);
    const out = report(events, { firstStage: 2, k: 2 });
    expect(out.trials).toBe(80);
    expect(out.pass_at_k['1']).toBeCloseTo(stage.pass_at_k['1']!, 12);
    expect(out.pass_hat_k['2']).toBeCloseTo(stage.pass_hat_k['2']!, 12);
    // pooled, the rows that ran longer count their later attempts too
    expect(report(events, { k: 2 }).trials).toBe(run.attempts);
    expect(run.attempts).toBeGreaterThan(80);
  });

  it('keeps ungraded attempts before the k-th graded one, and leaves other runs alone', () => {
    const events = [
      ...row('a', 'v', '?+-++', { run: 'adaptive-x' }),
      ...row('a', 'v', '---', { run: 'run-1', at: 100 }),
    ];
    const out = report(events, { firstStage: 2 });
    // adaptive-x: attempts 0 (ungraded), 1 and 2; run-1: all three (trials counts the graded ones)
    expect(out).toMatchObject({ trials: 5, ungraded: 1 });
    expect(out.mean_accuracy).toBeCloseTo(1 / 5, 12);
  });
});

describe('report of an adaptive run, detected (headline numbers from the first stage)', () => {
  it("counts the version's other runs beside the first stage, and says how many attempts they gave", () => {
    const adaptive = [...row('a', 'v', '++-+', { run: 'adaptive-x' }), ...row('b', 'v', '+-', { run: 'adaptive-x' })];
    const fixed = [
      ...row('a', 'v', '+++', { run: 'run-1', at: 100 }),
      ...row('b', 'v', '+++', { run: 'run-1', at: 100 }),
    ];
    const out = report([...adaptive, ...fixed], { headlineFirstStage: 2 });
    // each row's first 2 adaptive attempts and the fixed run's 3: pass^5, not a first stage of 2 alone
    expect(out.first_stage).toEqual({ k: 2, runs: ['adaptive-x'], rows: 2, flips: 1, other_attempts: 6 });
    expect(out.k_max).toBe(5);
    expect(report(adaptive, { headlineFirstStage: 2 }).first_stage).not.toHaveProperty('other_attempts');
  });

  it("classes an adaptive run's rows by its rule: a pass and a fail make a flip at two attempts", () => {
    const rows = (run: string) => [...row('a', 'v', '+-', { run }), ...row('b', 'v', '++', { run })];
    expect(report(rows('adaptive-x'), { headlineFirstStage: 2 }).classes).toMatchObject({ flip: 1, unclassified: 1 });
    expect(report(rows('run-1'), { headlineFirstStage: 2 }).classes).toMatchObject({ flip: 0, unclassified: 2 });
  });

  it('takes pass@k, pass^k, the flip rate and mean accuracy from the first stage, and the classes from all attempts', () => {
    const rng = createRng(7);
    const rows: SimRow[] = Array.from({ length: 40 }, (_, i) => ({
      row_id: `r${i}`,
      p: [0.1, 0.5, 0.9, 1][i % 4]!,
      must_not_break: i % 10 === 0,
    }));
    const run = simulateAdaptive(rows, { ...DEFAULT_ADAPTIVE, budget: 120 }, rng);
    const events = (runId: string) =>
      run.verdicts.flatMap((v, i) =>
        v.map((passed, attempt) => trial({ row: `r${i}`, version: 'v', passed, run: runId, attempt, at: attempt })),
      );
    const stage = firstStage(run.verdicts, 2, OPTS.bootstrap);
    const pooled = report(events('adaptive-x'));
    const out = report(events('adaptive-x'), { headlineFirstStage: 2 });
    expect(out.first_stage).toEqual({ k: 2, runs: ['adaptive-x'], rows: stage.rows, flips: expect.any(Number) });
    expect(out.pass_at_k['1']).toBeCloseTo(stage.pass_at_k['1']!, 12);
    expect(out.pass_hat_k['2']).toBeCloseTo(stage.pass_hat_k['2']!, 12);
    expect(out.flip_rate).toBeCloseTo(stage.flip_rate!, 12);
    expect(out.mean_accuracy).toBeCloseTo(stage.pass_at_k['1']!, 12);
    expect(out.intervals.pass_at_k['1']).not.toEqual(pooled.intervals.pass_at_k['1']);
    // the rest is the pooled report's, with the run's own class rule: a row it stopped with a pass and a fail is a
    // flip, where the fixed rule (3 graded attempts) left it unclassified
    const ruled = report(events('adaptive-x'), { mixedIsFlip: true });
    expect(out).toMatchObject({ trials: pooled.trials, classes: ruled.classes, min_attempts: 3 });
    expect(out.intervals.classes).toEqual(ruled.intervals.classes);
    expect(out.classes.flip).toBeGreaterThan(pooled.classes.flip);
    expect(out.classes.unclassified).toBe(pooled.classes.unclassified - (out.classes.flip - pooled.classes.flip));
    // a run given its own id is adaptive when its rounds name it; a fixed run is untouched
    expect(report(events('mine'), { headlineFirstStage: 2 }).first_stage).toBeUndefined();
    expect(report(events('mine'), { headlineFirstStage: 2, adaptiveRuns: ['mine'] })).toEqual({
      ...out,
      first_stage: { ...out.first_stage, runs: ['mine'] },
    });
  });
});
