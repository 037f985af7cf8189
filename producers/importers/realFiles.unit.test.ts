import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { passCurves } from '../../processors/core/estimators.ts';
import type { ImportedTrial, ImportOptions } from './common.ts';
import { detectFormat, parseResultsFile } from './detect.ts';
import { readResultsText } from './readResults.ts';
import { summarize } from './summary.ts';

// Edge cases of other tools' real files (issue #13): each test fails on the importers before the fix.
const FIXTURES = fileURLToPath(new URL('../../test/fixtures', import.meta.url));
const TOOL = join(FIXTURES, 'tool-outputs');

const parseText = (file: string, text: string, opts: ImportOptions = {}) => {
  const format = detectFormat(file, text);
  if (format === 'jsonl' || format === 'csv') throw new Error(`unexpected format ${format}`);
  return { ...parseResultsFile(file, text, format, opts), detected: format };
};
const load = (file: string, opts: ImportOptions = {}) => parseText(file, readFileSync(file, 'utf8'), opts);

const passHat = (trials: readonly ImportedTrial[], maxK: number): number[] => {
  const rows = new Map<string, { n: number; c: number }>();
  for (const t of trials) {
    const r = rows.get(String(t.row_id)) ?? { n: 0, c: 0 };
    rows.set(String(t.row_id), r);
    if (t.passed !== null) {
      r.n++;
      if (t.passed) r.c++;
    }
  }
  const graded = [...rows.values()].filter((r) => r.n > 0);
  const curves = graded.map((r) => passCurves(r.n, r.c, maxK).passHat);
  return Array.from({ length: maxK }, (_, i) => curves.reduce((s, c) => s + c[i]!, 0) / curves.length);
};
const round4 = (xs: number[]) => xs.map((x) => Math.round(x * 10_000) / 10_000);

describe("τ-bench's own published trajectories (gpt-4o airline, five entries with info.user_cost: null)", () => {
  const file = join(TOOL, 'tau-bench-gpt-4o-airline-historical.json');
  it("imports, and reproduces τ-bench's display_metrics: 200 trials, 84 passes, pass^1..4 = 0.42 / 0.2733 / 0.22 / 0.2", () => {
    const { detected, trials } = load(file);
    expect(detected).toBe('tau-bench');
    expect(trials).toHaveLength(200);
    expect(trials.filter((t) => t.passed === true)).toHaveLength(84);
    expect(round4(passHat(trials, 4))).toEqual([0.42, 0.2733, 0.22, 0.2]);
  });

  it('keeps the dataset version when a run ends a task with an exception entry (no task in its info)', () => {
    const doc = JSON.parse(readFileSync(file, 'utf8')) as { task_id: number; trial: number; info: unknown }[];
    const clean = parseText(file, JSON.stringify(doc)).trials[0]!.dataset_version;
    // τ-bench's run.py writes a failed attempt as {task_id, reward: 0, info: {error, traceback}, traj: [], trial}.
    const last = doc.length - 1;
    doc[last] = {
      ...doc[last]!,
      reward: 0,
      info: { error: 'litellm.RateLimitError: rate limited', traceback: 'Traceback (most recent call last): …' },
      traj: [],
    } as (typeof doc)[number];
    const { trials } = parseText(file, JSON.stringify(doc));
    expect(trials[0]!.dataset_version).toBe(clean);
    expect(trials[last]).toMatchObject({ passed: null, error_kind: 'exception', failure_category: 'test_environment' });
  });

  it('accepts every info field τ-bench writes as None (error, traceback, task, trial, traj)', () => {
    const doc = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>[];
    doc[0] = {
      ...doc[0],
      trial: null,
      traj: null,
      info: { task: null, user_cost: null, error: null, reward_info: null },
    };
    const { trials } = parseText(file, JSON.stringify(doc));
    expect(trials).toHaveLength(200);
    expect(trials[0]!.passed).not.toBeNull();
  });
});

describe('τ²-bench terminations (grok-4 airline)', () => {
  const file = join(TOOL, 'tau2-grok-4-airline-4trials.json');
  type Sim = { termination_reason: string; reward_info: { reward: number } | null };
  const withReason = (reason: string, drop = false) => {
    const doc = JSON.parse(readFileSync(file, 'utf8')) as { simulations: Sim[] };
    const i = doc.simulations.findIndex((s) => s.reward_info!.reward < 0.5);
    doc.simulations[i]!.termination_reason = reason;
    if (drop) doc.simulations[i]!.reward_info = null;
    return { i, trials: parseText(file, JSON.stringify(doc)).trials };
  };

  it("counts agent_error and user_error as failures (τ²'s evaluator: reward 0), so pass^1 stays 0.4375", () => {
    for (const reason of ['agent_error', 'user_error']) {
      const { i, trials } = withReason(reason, true);
      expect(trials[i]).toMatchObject({ passed: false, score: 0, error_kind: reason });
      expect(trials[i]!.failure_category).toBeUndefined();
      expect(round4(passHat(trials, 4))).toEqual([0.4375, 0.2083, 0.0625, 0]);
    }
  });

  it('excludes only infrastructure_error (ungraded, a test-environment failure)', () => {
    const { i, trials } = withReason('infrastructure_error');
    expect(trials[i]).toMatchObject({ passed: null, failure_category: 'test_environment' });
  });
});

describe('Inspect: unscored epochs (NaN, a null score, neither scores nor error)', () => {
  // Derived from the vitals log: 4 sample ids × 3 epochs; id 1's three epochs are unscored, as Inspect writes them.
  const file = join(FIXTURES, 'inspect-unscored-epochs.json');
  it('reads the log, leaving the three epochs ungraded as Inspect leaves them out of its metrics', () => {
    const { trials } = load(file);
    expect(trials).toHaveLength(12);
    const row1 = trials.filter((t) => t.row_id === '1');
    expect(row1.map((t) => [t.passed, t.score, t.error_kind])).toEqual([
      [null, null, 'unscored'],
      [null, null, 'unscored'],
      [null, null, 'unscored'],
    ]);
    const [s] = summarize(trials.map((t) => ({ ...t, row_id: String(t.row_id) })));
    // Graded: C C P P P P P I I. Inspect's rule (value ≥ 1) passes the two C; its mean counts P as 0.5.
    expect(s).toMatchObject({ trials: 12, ungraded: 3, passed: 2, failed: 7 });
    expect(s!.meanScore).toBeCloseTo(0.5, 12);
  });

  it('--pass-threshold 0.5 counts partial credit as a pass', () => {
    const { trials } = load(file, { passThreshold: 0.5 });
    expect(trials.filter((t) => t.passed === true)).toHaveLength(7);
  });

  it("reports Inspect's headline mean on the vitals log: 0.506 (P counted as 0.5)", () => {
    const { trials } = load(join(TOOL, 'vitals-inspect-format-epochs3-are-gpt-4o.json'));
    const [s] = summarize(trials.map((t) => ({ ...t, row_id: String(t.row_id) })));
    expect(s).toMatchObject({ trials: 84, passed: 28, failed: 56, ungraded: 0 });
    expect(Math.round(s!.meanScore! * 1000) / 1000).toBe(0.506);
  });
});

describe("Inspect's binary .eval log (a zip of JSON)", () => {
  it('reads the same trials as the JSON log of the same eval', async () => {
    const evalFile = join(FIXTURES, 'inspect-epochs2-intercode-ctf.eval');
    const jsonFile = join(TOOL, 'inspect-epochs2-intercode-ctf.json');
    const fromEval = parseText(evalFile, await readResultsText(evalFile));
    const fromJson = load(jsonFile);
    expect(fromEval.detected).toBe('inspect');
    expect(fromEval.trials.map((t) => [t.row_id, t.attempt, t.passed])).toEqual([
      ['59', 1, true],
      ['59', 2, false],
    ]);
    expect(fromEval.trials).toEqual(fromJson.trials);
  });

  it('names the file when the zip is not an Inspect log', async () => {
    const bad = join(FIXTURES, 'inspect-epochs2-intercode-ctf.eval');
    const buf = readFileSync(bad);
    const { inspectEvalToJson } = await import('./readResults.ts');
    expect(() => inspectEvalToJson(buf.subarray(0, 100), 'broken.eval')).toThrow(/broken\.eval: not a readable/);
  });
});
