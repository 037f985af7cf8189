import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { passCurves } from '../../processors/core/estimators.ts';
import { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import { fileRun, fileTrial, type ImportedTrial } from './common.ts';
import { detectFormat, parseResultsFile } from './detect.ts';
import { inspectValue } from './inspect.ts';
import { summarize } from './summary.ts';

const DIR = fileURLToPath(new URL('../../test/fixtures/tool-outputs', import.meta.url));
const load = (name: string, opts = {}) => {
  const file = join(DIR, name);
  const text = readFileSync(file, 'utf8');
  const format = detectFormat(file, text);
  if (format === 'jsonl' || format === 'csv') throw new Error('unexpected');
  return { ...parseResultsFile(file, text, format, opts), detected: format };
};

/** pass^k per row with the estimator the processors use, averaged over rows. */
const passHatCurve = (trials: readonly ImportedTrial[], maxK: number): number[] => {
  const rows = new Map<string, { n: number; c: number }>();
  for (const t of trials) {
    const r = rows.get(String(t.row_id)) ?? { n: 0, c: 0 };
    rows.set(String(t.row_id), r);
    if (t.passed !== null) {
      r.n++;
      if (t.passed) r.c++;
    }
  }
  const curves = [...rows.values()].map((r) => passCurves(r.n, r.c, maxK).passHat);
  return Array.from({ length: maxK }, (_, i) => curves.reduce((s, c) => s + c[i]!, 0) / curves.length);
};

const round4 = (xs: number[]) => xs.map((x) => Math.round(x * 10_000) / 10_000);

/** Every trial is a valid TrialRecorded once the recorder adds the envelope, and ids are unique. */
const expectValid = (trials: readonly ImportedTrial[]) => {
  for (const t of trials)
    expect(() =>
      TrialRecorded.parse({
        ...t,
        type: 'TrialRecorded',
        schema_version: 1,
        producer: 'test',
        occurred_at: t.occurred_at ?? 0,
      }),
    ).not.toThrow();
  expect(new Set(trials.map((t) => t.event_id)).size).toBe(trials.length);
};

describe('τ-bench results (neo-τ-bench, claude-3.7-sonnet, airline revised test)', () => {
  const { detected, trials } = load('tau-bench-claude-3.7-sonnet-airline-revised-test.json', {
    agentVersion: 'claude-3.7-sonnet',
  });
  it('reproduces the fork README: 108 trials, 56 passes, pass^1..4 = 0.5185 / 0.3580 / 0.2685 / 0.2222', () => {
    expect(detected).toBe('tau-bench');
    expect(trials).toHaveLength(108);
    expect(trials.filter((t) => t.passed).length).toBe(56);
    expect(round4(passHatCurve(trials, 4))).toEqual([0.5185, 0.358, 0.2685, 0.2222]);
    expect(new Set(trials.map((t) => t.row_id)).size).toBe(27);
    expectValid(trials);
  });
  it('reads the domain from the policy, and records the tool calls in order', () => {
    expect(trials[0]!.suite).toBe('airline');
    expect(trials[0]!.actions?.[0]?.tool).toBe('list_all_airports');
  });
  it('counts 15 tasks with mixed outcomes', () => {
    const byRow = new Map<string, Set<boolean | null>>();
    for (const t of trials) byRow.set(String(t.row_id), (byRow.get(String(t.row_id)) ?? new Set()).add(t.passed));
    expect([...byRow.values()].filter((s) => s.size > 1)).toHaveLength(15);
  });
});

describe('τ²-bench results', () => {
  it('telecom, gpt-4.1 solo: 20 trials, 16 passes, every task 4/4 or 0/4', () => {
    const { detected, trials } = load('tau2-gpt-4.1-telecom-no-user-4trials.json');
    expect(detected).toBe('tau2-bench');
    expect(trials).toHaveLength(20);
    expect(trials.filter((t) => t.passed).length).toBe(16);
    expect(round4(passHatCurve(trials, 4))).toEqual([0.8, 0.8, 0.8, 0.8]);
    expect(trials[0]).toMatchObject({
      suite: 'telecom',
      agent: { version: 'gpt-4.1-2025-04-14', id: 'llm_agent_solo' },
      dataset_version: 'tau2@21e5e57',
    });
    expectValid(trials);
  });
  it('airline, grok-4: 16 trials, 7 passes, pass^1..4 = 0.4375 / 0.2083 / 0.0625 / 0', () => {
    const { trials } = load('tau2-grok-4-airline-4trials.json');
    expect(trials).toHaveLength(16);
    expect(trials.filter((t) => t.passed).length).toBe(7);
    expect(round4(passHatCurve(trials, 4))).toEqual([0.4375, 0.2083, 0.0625, 0]);
    expect(trials.every((t) => typeof t.cost_usd === 'number' && t.tokens && t.latency_ms! > 0)).toBe(true);
    expectValid(trials);
  });
  it('counts a simulation that ended in an agent or user error as a failure, as τ² does', () => {
    const file = join(DIR, 'tau2-grok-4-airline-4trials.json');
    const doc = JSON.parse(readFileSync(file, 'utf8')) as { simulations: { termination_reason: string }[] };
    doc.simulations[0]!.termination_reason = 'user_error';
    const text = JSON.stringify(doc);
    const { trials } = parseResultsFile(file, text, 'tau2-bench', {});
    expect(trials[0]).toMatchObject({ passed: false, score: 0, error_kind: 'user_error' });
  });
});

describe('promptfoo -o results.json (--repeat 3)', () => {
  const { detected, trials } = load('promptfoo-repeat3-results.json');
  it("matches promptfoo's summary: 120 results, 50 successes, 70 failures", () => {
    expect(detected).toBe('promptfoo');
    expect(trials).toHaveLength(120);
    expect(trials.filter((t) => t.passed === true)).toHaveLength(50);
    expect(trials.filter((t) => t.passed === false)).toHaveLength(70);
    expectValid(trials);
  });
  it('makes each test a row and its repeats attempts 0..2, per provider', () => {
    const summary = summarize(trials);
    expect(summary.map((s) => [s.agentVersion, s.rows, s.trials, s.passed])).toEqual([
      ['agent-v1', 20, 60, 24],
      ['agent-v2', 20, 60, 26],
    ]);
    const v1 = trials.filter((t) => t.agent.version === 'agent-v1' && t.row_id === 'sample-00');
    expect(v1.map((t) => t.attempt)).toEqual([0, 1, 2]);
    expect(v1[0]).toMatchObject({ expected: 'approve', input: 'Decide the refund: order 1000' });
  });
});

describe('Inspect AI eval logs', () => {
  it('intercode ctf (epochs 2): 2 samples, 1 pass', () => {
    const { detected, trials } = load('inspect-epochs2-intercode-ctf.json');
    expect(detected).toBe('inspect');
    expect(trials.map((t) => [t.row_id, t.attempt, t.passed])).toEqual([
      ['59', 1, true],
      ['59', 2, false],
    ]);
    expect(trials[0]).toMatchObject({
      suite: 'inspect_evals/luce_intercode_ctf',
      agent: { version: 'anthropic/claude-3-5-sonnet-20241022' },
    });
    expectValid(trials);
  });
  it('vitals (epochs 3, C/P/I): 84 samples, 28 pass; P is a fail scored 0.5, so the mean is 0.506', () => {
    const { trials } = load('vitals-inspect-format-epochs3-are-gpt-4o.json');
    expect(trials).toHaveLength(84);
    expect(trials.filter((t) => t.passed).length).toBe(28);
    expect(trials.filter((t) => t.score === 0.5 && t.passed === false)).toHaveLength(29);
    expect(trials.filter((t) => t.score === 0)).toHaveLength(27);
    const mean = trials.reduce((s, t) => s + (t.score ?? 0), 0) / trials.length;
    expect(Math.round(mean * 1000) / 1000).toBe(0.506);
    expect(new Set(trials.map((t) => t.attempt))).toEqual(new Set([1, 2, 3]));
    expectValid(trials);
  });
  it('maps score values like inspect_ai does', () => {
    expect(['C', 'I', 'P', 'N', 1, 0.25, true, 'yes'].map((v) => inspectValue(v))).toEqual([
      { passed: true, score: 1 },
      { passed: false, score: 0 },
      { passed: false, score: 0.5 },
      { passed: false, score: 0 },
      { passed: true, score: 1 },
      { passed: false, score: 0.25 },
      { passed: true, score: 1 },
      { passed: true, score: 1 },
    ]);
    expect(inspectValue({ a: 1 })).toBeUndefined();
  });
});

describe('every importer', () => {
  it('gives the same ids when the same file is read twice', () => {
    for (const name of [
      'tau2-grok-4-airline-4trials.json',
      'promptfoo-repeat3-results.json',
      'inspect-epochs2-intercode-ctf.json',
    ]) {
      const a = load(name).trials.map((t) => t.event_id);
      const b = load(name).trials.map((t) => t.event_id);
      expect(a).toEqual(b);
    }
  });
  it('refuses a file of the wrong shape, naming the field', () => {
    const file = join(DIR, 'tau2-grok-4-airline-4trials.json');
    const doc = JSON.parse(readFileSync(file, 'utf8')) as { simulations: { task_id: unknown }[] };
    doc.simulations[2]!.task_id = { nope: true };
    expect(() => parseResultsFile(file, JSON.stringify(doc), 'tau2-bench', {})).toThrow(
      /field simulations\[2\]\.task_id/,
    );
  });
});

describe('the mapping every results importer shares (fileTrial)', () => {
  const run = fileRun(
    { suite: 'mine', datasetId: 'ds' },
    { suite: 'tool-suite', datasetVersion: 'dv', runId: 'r1', grader: { kind: 'external', id: 'tool' } },
  );
  it('applies the user overrides to the file defaults', () => {
    expect(run).toEqual({
      suite: 'mine',
      datasetVersion: 'dv',
      runId: 'r1',
      grader: { kind: 'external', id: 'tool' },
      datasetId: 'ds',
    });
  });
  it('an ungraded entry has no score and is a test-environment failure; absent values are left out; texts are clipped', () => {
    const t = fileTrial(run, {
      row: 'q1',
      attempt: 2,
      agent: { version: 'v' },
      passed: null,
      score: 0.5,
      errorKind: 'exception',
      output: 'x'.repeat(9_000),
      input: null,
      costUsd: null,
      actions: [],
    });
    expect(t).toMatchObject({
      suite: 'mine',
      dataset_id: 'ds',
      row_id: 'q1',
      attempt: 2,
      passed: null,
      score: null,
      error_kind: 'exception',
      failure_category: 'test_environment',
    });
    expect(t).not.toHaveProperty('input');
    expect(t).not.toHaveProperty('cost_usd');
    expect(t).not.toHaveProperty('actions');
    expect(t.output).toMatch(/…\[1000 more characters\]$/);
    const graded = fileTrial(run, {
      row: 'q1',
      attempt: 2,
      agent: { version: 'v' },
      passed: false,
      score: 0.5,
      costUsd: 0.01,
      latencyMs: 12,
      at: 5,
    });
    expect(graded).toMatchObject({ passed: false, score: 0.5, cost_usd: 0.01, latency_ms: 12, occurred_at: 5 });
    expect(graded).not.toHaveProperty('failure_category');
    expect(graded.event_id).toBe(t.event_id); // the id is the trial's identity (run, row, attempt, version), not its verdict
  });
});
