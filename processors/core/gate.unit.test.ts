import { describe, expect, it } from 'vitest';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import { evaluateGate, type GateInput } from './gate.ts';
import { groupTrials } from './groups.ts';
import type { JudgeCalibration } from './judges.ts';
import { MUST_NOT_BREAK_TAG } from './mustNotBreak.ts';
import { DEFAULT_REPORT_OPTIONS } from './report.ts';
import { row } from './trials.testkit.ts';
import { versionPairs } from './versionPairs.ts';

const OPTS = { ...DEFAULT_REPORT_OPTIONS, bootstrap: { reps: 500, seed: 1, confidence: 0.95 } };
const MNB = { tags: [MUST_NOT_BREAK_TAG] };
const gate = (events: TrialRecorded[], more: Partial<GateInput> = {}) => {
  const p = versionPairs(groupTrials(events), 'v1', 'v2');
  return evaluateGate(
    {
      baseline: 'v1',
      candidate: 'v2',
      pairs: [...p.both, ...p.oneSided],
      mustNotBreak: { tag: MUST_NOT_BREAK_TAG, ids: [] },
      rules: {},
      ...more,
    },
    OPTS,
  );
};
const rule = (v: ReturnType<typeof gate>, name: string) => v.rules.find((r) => r.rule === name)!;

/** Ten ordinary rows the candidate improves: it raises mean accuracy on its own. */
const improved = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'].flatMap((id, i) => [
  ...row(id, 'v1', i < 4 ? '+++' : '---'),
  ...row(id, 'v2', '+++'),
]);

describe('gate scenarios from the seed', () => {
  it('(a) a candidate that raises mean accuracy but breaks one must-not-break row fails', () => {
    const events = [
      ...improved,
      ...row('mnb-1', 'v1', '+++', MNB),
      ...row('mnb-1', 'v2', '+--', MNB),
      ...row('mnb-2', 'v1', '+++', MNB),
      ...row('mnb-2', 'v2', '+++', MNB),
      ...row('mnb-1', 'v1', '+++', { ...MNB, run: 'confirm-1' }),
      ...row('mnb-1', 'v2', '+-+', { ...MNB, run: 'confirm-1' }),
    ];
    const v = gate(events);
    const cmp = v.comparisons[0]!;
    expect(cmp.candidate.mean_accuracy!).toBeGreaterThan(cmp.baseline.mean_accuracy!);
    expect(cmp.candidate.pass_hat_k['3']!).toBeGreaterThan(cmp.baseline.pass_hat_k['3']!);
    expect(v.verdict).toBe('fail');
    expect(rule(v, 'must_not_break_stable_correct')).toMatchObject({ passed: false, rows: ['mnb-1'] });
    expect(v.must_not_break.find((m) => m.row_id === 'mnb-1')).toMatchObject({
      status: 'broken',
      outcome: 'confirmed_regression',
    });
    expect(v.evidence.find((e) => e.row_id === 'mnb-1')!.candidate_attempts).toHaveLength(6);
  });

  it('says "after confirmation" only of a confirmed regression, and "unresolved" of one no confirmation reproduced', () => {
    const broken = [...row('mnb-1', 'v1', '+++', MNB), ...row('mnb-1', 'v2', '+--', MNB)];
    const detail = (events: TrialRecorded[]) => rule(gate(events), 'must_not_break_stable_correct').detail;
    expect(detail(broken)).toBe(
      '1 must-not-break row stable-correct on the baseline is not stable-correct on the candidate (unresolved: no confirmation has reproduced it yet)',
    );
    const confirmed = [
      ...broken,
      ...row('mnb-1', 'v1', '+++', { ...MNB, run: 'confirm-1' }),
      ...row('mnb-1', 'v2', '+-+', { ...MNB, run: 'confirm-1' }),
    ];
    expect(detail(confirmed)).toBe(
      '1 must-not-break row stable-correct on the baseline is not stable-correct on the candidate after confirmation',
    );
  });

  it('counts the confirmation attempts of adaptive runs: their extra attempts are screening, not confirmation', () => {
    // the README's adaptive steps: rows got 2 to 8 attempts of one adaptive run by its stopping rule (most got 3);
    // the candidate passed must-not-break row r07 three times and failed the fourth; the confirmation run the gate
    // asked for then passed 3 of 3 on both versions
    const A1 = { run: 'adaptive-v1' };
    const A2 = { run: 'adaptive-v2' };
    const CONFIRM = { ...MNB, run: 'confirm-gate-1' };
    const events = [
      ...['a', 'b', 'c'].flatMap((id) => [...row(id, 'v1', '+++', A1), ...row(id, 'v2', '+++', A2)]),
      ...row('d', 'v1', '+-', A1), // stopped as a flip after its first stage
      ...row('d', 'v2', '+-', A2),
      ...row('r01', 'v1', '++++++++', { ...MNB, ...A1 }),
      ...row('r01', 'v2', '++++++++', { ...MNB, ...A2 }),
      ...row('r07', 'v1', '++++++++', { ...MNB, ...A1 }),
      ...row('r07', 'v2', '+++-', { ...MNB, ...A2 }),
      ...row('r07', 'v1', '+++', CONFIRM),
      ...row('r07', 'v2', '+++', CONFIRM),
    ];
    const v = gate(events);
    const cmp = v.comparisons[0]!;
    expect(cmp.lost_stable_correct).toEqual(['r07']);
    expect(cmp.confirmation.rows).toHaveLength(1);
    expect(cmp.confirmation.rows[0]).toMatchObject({
      row_id: 'r07',
      screening: { baseline: 'stable_correct', candidate: 'flip' },
      baseline: { n: 11, c: 11, confirmation_attempts: 3, confirmation_passes: 3 },
      candidate: { n: 7, c: 6, confirmation_attempts: 3, confirmation_passes: 3 },
      outcome: 'unresolved',
    });
    // an adaptive row's eighth attempt is its own run's, not a confirmation attempt
    const r01 = v.evidence.find((e) => e.row_id === 'r01')!;
    expect(r01.candidate_attempts).toHaveLength(8);
    expect(cmp.confirmation.rows.some((r) => r.row_id === 'r01')).toBe(false);
    // the failure stays: the baseline passed every attempt, confirmation included, and the candidate did not
    expect(v.verdict).toBe('fail');
    expect(v.must_not_break.find((m) => m.row_id === 'r07')).toMatchObject({ status: 'broken', outcome: 'unresolved' });
    expect(rule(v, 'must_not_break_stable_correct').detail).toBe(
      '1 must-not-break row stable-correct on the baseline is not stable-correct on the candidate (unresolved: the confirmation attempts of both versions did not reproduce it)',
    );
  });

  it('(b) an unclassifiable must-not-break row fails, as does a listed row with no attempts', () => {
    const events = [...improved, ...row('mnb-1', 'v1', '+++', MNB), ...row('mnb-1', 'v2', '++', MNB)];
    const v = gate(events);
    expect(v.verdict).toBe('fail');
    expect(rule(v, 'must_not_break_classifiable')).toMatchObject({ passed: false, rows: ['mnb-1'] });
    expect(rule(v, 'must_not_break_stable_correct').passed).toBe(true);

    const listed = gate(improved, {
      mustNotBreak: { tag: MUST_NOT_BREAK_TAG, ids: [{ row_id: 'a' }, { suite: 'refunds', row_id: 'gone' }] },
    });
    expect(listed.verdict).toBe('fail');
    expect(listed.rules.filter((r) => !r.passed).flatMap((r) => r.rows)).toEqual(['refunds::gone']);
  });

  it('(c) a flaky baseline row is not called a regression', () => {
    const events = [
      ...improved,
      // Stable-correct on the baseline's screening only: it fails on confirmation.
      ...row('mnb-1', 'v1', '+++', MNB),
      ...row('mnb-1', 'v2', '+-+', MNB),
      ...row('mnb-1', 'v1', '+-+', { ...MNB, run: 'confirm-1' }),
      ...row('mnb-1', 'v2', '+-+', { ...MNB, run: 'confirm-1' }),
      // Flipping on the baseline from the start.
      ...row('mnb-2', 'v1', '+-+', MNB),
      ...row('mnb-2', 'v2', '--+', MNB),
    ];
    const v = gate(events);
    expect(v.comparisons[0]!.confirmation.rows.map((s) => [s.row_id, s.outcome])).toEqual([
      ['mnb-1', 'baseline_also_varies'],
    ]);
    expect(v.comparisons[0]!.lost_stable_correct).not.toContain('mnb-2');
    expect(v.must_not_break.map((m) => m.status)).toEqual(['not_covered', 'not_covered']);
    expect(v.verdict).toBe('pass');
  });

  it('a must-not-break row missing from the candidate entirely cannot be classified', () => {
    const events = [...improved, ...row('only-base', 'v1', '+++', { ...MNB, suite: 'other' })];
    const v = gate(events);
    expect(v.verdict).toBe('fail');
    expect(v.rules.find((r) => r.suite === 'other' && r.rule === 'must_not_break_classifiable')).toMatchObject({
      passed: false,
      rows: ['only-base'],
    });
  });
});

describe('configured rules', () => {
  it('zero forbidden actions counts candidate trials only', () => {
    const events = [
      ...improved,
      ...row('x', 'v1', '+++', { forbidden: ['refund_without_receipt'] }),
      ...row('x', 'v2', '+++'),
    ];
    expect(rule(gate(events, { rules: { zero_forbidden_actions: true } }), 'zero_forbidden_actions').passed).toBe(true);
    const bad = [
      ...improved,
      ...row('x', 'v1', '+++'),
      ...row('x', 'v2', '+++', { forbidden: ['refund_without_receipt'] }),
    ];
    expect(rule(gate(bad, { rules: { zero_forbidden_actions: true } }), 'zero_forbidden_actions')).toMatchObject({
      passed: false,
      rows: ['x'],
      evidence: { trials: 3 },
    });
  });

  it('the paired lower bound of Δpass@1 must stay above −δ', () => {
    const worse = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].flatMap((id, i) => [
      ...row(id, 'v1', '+++'),
      ...row(id, 'v2', i < 4 ? '+++' : '-+-'),
    ]);
    const v = gate(worse, { rules: { max_pass_at_1_drop: 0.05 } });
    expect(rule(v, 'pass_at_1_drop').passed).toBe(false);
    expect(rule(gate(improved, { rules: { max_pass_at_1_drop: 0.05 } }), 'pass_at_1_drop').passed).toBe(true);
  });

  it('pass^k on tagged rows must reach the bar; no tagged row is not a pass', () => {
    const events = [
      ...row('c1', 'v1', '+++', { tags: ['critical'] }),
      ...row('c1', 'v2', '++-', { tags: ['critical'] }),
      ...row('c2', 'v1', '+++'),
      ...row('c2', 'v2', '+++', { tags: ['critical'] }),
    ];
    const v = gate(events, {
      rules: {
        pass_hat_k: [
          { k: 2, min: 0.6, tag: 'critical' },
          { k: 2, min: 0.1, tag: 'nothing' },
        ],
      },
    });
    const [hat, none] = v.rules.filter((r) => r.rule === 'pass_hat_k');
    expect(hat).toMatchObject({ passed: true, evidence: { value: (1 / 3 + 1) / 2 } });
    expect(none!.passed).toBe(false);
  });

  it('judge agreement must reach the bar for every judge, and missing data fails', () => {
    const judge = (agreement: number) =>
      ({
        judge: { id: 'j', version: null, rubric_version: 'r1' },
        agreement: { agreement, items: 10, kappa: 0.5 },
      }) as unknown as JudgeCalibration;
    expect(
      rule(gate(improved, { rules: { judge_agreement: { min: 0.8 } }, judges: [judge(0.9)] }), 'judge_agreement')
        .passed,
    ).toBe(true);
    expect(
      rule(
        gate(improved, { rules: { judge_agreement: { min: 0.8 } }, judges: [judge(0.9), judge(0.7)] }),
        'judge_agreement',
      ).passed,
    ).toBe(false);
    expect(rule(gate(improved, { rules: { judge_agreement: { min: 0.8 } } }), 'judge_agreement').passed).toBe(false);
  });
});
