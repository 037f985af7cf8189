import { describe, expect, it } from 'vitest';
import { compareVersions } from './compare.ts';
import { groupTrials } from './groups.ts';
import { DEFAULT_REPORT_OPTIONS } from './report.ts';
import { plannedAttempts } from './screening.ts';
import { row, trial } from './trials.testkit.ts';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import { versionPairs } from './versionPairs.ts';

const OPTS = { ...DEFAULT_REPORT_OPTIONS, bootstrap: { reps: 500, seed: 1, confidence: 0.95 } };
const compare = (events: TrialRecorded[], opts = {}) => {
  const pair = versionPairs(groupTrials(events), 'v1', 'v2').both[0]!;
  return compareVersions(pair, { ...OPTS, ...opts });
};

describe('compare: transitions, lists, paired statistics', () => {
  const events = [
    ...row('a', 'v1', '+++'),
    ...row('a', 'v2', '++-'), // lost
    ...row('b', 'v1', '---'),
    ...row('b', 'v2', '+++'), // gained
    ...row('c', 'v1', '+-+'),
    ...row('c', 'v2', '+++'), // gained
    ...row('d', 'v1', '+++'),
    ...row('d', 'v2', '+++'),
    ...row('e', 'v1', '---'),
    ...row('e', 'v2', '---'),
    ...row('f', 'v1', '++'),
    ...row('f', 'v2', '+++'), // unclassified on the baseline
  ];
  const c = compare(events);

  it('counts class transitions from baseline to candidate', () => {
    expect(c.transitions.stable_correct).toEqual({ stable_correct: 1, stable_wrong: 0, flip: 1, unclassified: 0 });
    expect(c.transitions.stable_wrong.stable_correct).toBe(1);
    expect(c.transitions.flip.stable_correct).toBe(1);
    expect(c.transitions.unclassified.stable_correct).toBe(1);
    const total = Object.values(c.transitions)
      .flatMap((r) => Object.values(r))
      .reduce((a, b) => a + b, 0);
    expect(total).toBe(6);
  });

  it('lists rows that became stable-correct and rows that stopped being stable-correct', () => {
    expect(c.became_stable_correct).toEqual(['b', 'c', 'f']);
    expect(c.lost_stable_correct).toEqual(['a']);
  });

  it('gives Δpass@1 and Δpass^k as candidate − baseline over paired rows, with a paired interval around it', () => {
    const rate = (cs: number[], n: number[]) => cs.reduce((s, x, i) => s + x / n[i]!, 0) / cs.length;
    const base = rate([3, 0, 2, 3, 0, 2], [3, 3, 3, 3, 3, 2]);
    const cand = rate([2, 3, 3, 3, 0, 3], [3, 3, 3, 3, 3, 3]);
    expect(c.paired.pass_at_1.delta).toBeCloseTo(cand - base, 12);
    expect(c.paired.k_max).toBe(2);
    const [lo, hi] = c.paired.pass_at_1.interval!;
    expect(lo).toBeLessThanOrEqual(c.paired.pass_at_1.delta!);
    expect(hi).toBeGreaterThanOrEqual(c.paired.pass_at_1.delta!);
    expect(c.paired.pass_hat_k['2']!.rows).toBe(6);
    expect(compare(events).paired).toEqual(c.paired);
  });

  it('runs exact McNemar on stable-correct over rows classified on both sides', () => {
    expect(c.mcnemar).toMatchObject({ rows: 5, lost: 1, gained: 2, p_value: 1 });
  });
});

describe('confirmation of suspected regressions', () => {
  const checks = (window: string, proof: string) => ({ checks: { return_window: window, proof_of_purchase: proof } });
  const base = [...row('r', 'v1', '+++', checks('inside', 'yes'))];
  const cand = [...row('r', 'v2', '++-', checks('inside', 'no'))];
  const confirm = (version: string, verdicts: string, extra = {}) =>
    row('r', version, verdicts, { run: 'confirm-1', ...extra });

  it('baseline keeps passing and the candidate fails again: a confirmed regression, with the first divergent check', () => {
    const c = compare([
      ...base,
      ...cand,
      ...confirm('v1', '+++', checks('inside', 'yes')),
      ...confirm('v2', '+-+', checks('inside', 'no')),
    ]);
    const s = c.confirmation.rows[0]!;
    expect(s.outcome).toBe('confirmed_regression');
    expect(s.baseline).toMatchObject({ n: 6, c: 6, confirmation_attempts: 3, confirmation_passes: 3 });
    expect(s.first_divergence).toMatchObject({
      check: 'proof_of_purchase',
      position: 2,
      baseline: [{ answer: 'yes', count: 6 }],
      candidate: [{ answer: 'no', count: 6 }],
    });
  });

  it('the baseline also fails on confirmation: baseline also varies, not a regression', () => {
    const c = compare([...base, ...cand, ...confirm('v1', '+-+'), ...confirm('v2', '---')]);
    expect(c.confirmation.rows[0]!.outcome).toBe('baseline_also_varies');
    expect(c.confirmation.rows[0]!.first_divergence).toBeNull();
  });

  it('no confirmation runs, or a candidate failure that does not recur: unresolved', () => {
    expect(compare([...base, ...cand]).confirmation.rows[0]!.outcome).toBe('unresolved');
    expect(
      compare([...base, ...cand, ...confirm('v1', '+++'), ...confirm('v2', '+++')]).confirmation.rows[0]!.outcome,
    ).toBe('unresolved');
    expect(compare([...base, ...cand, ...confirm('v2', '---')]).confirmation.rows[0]!.outcome).toBe('unresolved');
  });

  it('a candidate short of attempts that passes every confirmation attempt is cleared', () => {
    const c = compare([...base, ...row('r', 'v2', '++'), ...confirm('v1', '++'), ...confirm('v2', '++')]);
    expect(c.confirmation.rows[0]!.screening.candidate).toBe('unclassified');
    expect(c.confirmation.rows[0]!.outcome).toBe('cleared');
  });

  it('extra attempts beyond the planned count are confirmation attempts too', () => {
    const planned = ['x', 'y', 'z'].flatMap((id) => [...row(id, 'v1', '+++'), ...row(id, 'v2', '+++')]);
    // Row r: three planned attempts each, then attempts 3..5 added later.
    const extra = [3, 4, 5].flatMap((a) => [
      trial({ row: 'r', version: 'v1', attempt: a, passed: true }),
      trial({ row: 'r', version: 'v2', attempt: a, passed: a !== 4 }),
    ]);
    const c = compare([...planned, ...base, ...cand, ...extra]);
    expect(c.screen_attempts).toEqual({ baseline: 3, candidate: 3 });
    expect(c.confirmation.rows[0]).toMatchObject({
      outcome: 'confirmed_regression',
      candidate: { confirmation_attempts: 3, confirmation_passes: 2 },
    });
  });

  it('the planned count is the most common number of non-confirmation attempts, ties to the smaller', () => {
    const rows = (ns: number[]) =>
      groupTrials(ns.flatMap((n, i) => row(`r${i}`, 'v1', '+'.repeat(n))))[0]!.rows.values();
    expect(plannedAttempts(rows([3, 3, 3, 8]), {})).toBe(3);
    expect(plannedAttempts(rows([4, 2]), {})).toBe(2);
    expect(plannedAttempts(rows([3, 3]), { confirmationRuns: ['run-1'] })).toBe(0);
  });
});
