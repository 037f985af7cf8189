import { describe, expect, it } from 'vitest';
import { comparePairs } from '../processors/core/compare.ts';
import type { CompareOptions, RowPair, SideRow } from '../processors/core/pairing.ts';
import { DEFAULT_REPORT_OPTIONS } from '../processors/core/report.ts';
import type { AttemptRecord } from '../processors/core/rowState.ts';
import { summarizeAttempts } from '../processors/core/rowSummary.ts';
import { boundedComparison } from './compareAnswer.ts';

const OPTS: CompareOptions = { ...DEFAULT_REPORT_OPTIONS, bootstrap: { reps: 20, seed: 1, confidence: 0.95 } };

// verdicts as '+' / '-', a check that flips when `flipping`
const side = (row_id: string, verdicts: string, flipping = false): SideRow => {
  const attempts: AttemptRecord[] = [...verdicts].map((v, attempt) => ({
    event_id: `${row_id}-${verdicts}-${attempt}`,
    run_id: 'run-1',
    attempt,
    occurred_at: attempt,
    passed: v === '+',
    output_hash: 'o',
    checks: [{ name: 'window', answer: flipping ? attempt % 2 === 0 : true }],
    forbidden_actions: [],
  }));
  const s = summarizeAttempts(row_id, attempts, [], OPTS);
  return { screening: s, all: s, confirmation: summarizeAttempts(row_id, [], [], OPTS) };
};

describe('boundedComparison', () => {
  it('cuts every list to its first rows, counts them all, and keeps the whole comparison’s numbers', () => {
    // 12 rows lost (stable-correct → flip), 7 gained, 5 stable-correct on the baseline only; stable rows whose check flips
    const rows: RowPair[] = [];
    const id = (i: number) => `r${String(i).padStart(3, '0')}`;
    for (let i = 0; i < 24; i++) {
      const row_id = id(i);
      const [b, c] =
        i < 12
          ? [side(row_id, '+++', true), side(row_id, '+-+')]
          : i < 19
            ? [side(row_id, '-+-'), side(row_id, '+++', true)]
            : [side(row_id, '+++'), side(row_id, '')];
      rows.push({ row_id, tags: [], baseline: b, candidate: c });
    }
    const cmp = comparePairs(
      { suite: 's', dataset_version: 'd', baseline: { version: 'v1' }, candidate: { version: 'v2' } },
      { screen_attempts: { baseline: 3, candidate: 3 }, rows },
      OPTS,
    );
    const mnb = [id(1), id(10), id(13), id(20)];
    const out = boundedComparison({ ...cmp, must_not_break_rows: mnb }, 4);

    expect(out.lost_stable_correct).toEqual([id(0), id(1), id(2), id(3)]);
    expect(out.confirmation.rows.map((s) => s.row_id)).toEqual(out.lost_stable_correct);
    expect(out.became_stable_correct).toEqual([id(12), id(13), id(14), id(15)]);
    expect(out.rows.baseline_only).toEqual([id(19), id(20), id(21), id(22)]);
    expect(out.baseline.stable_verdict_check_flips).toHaveLength(4);
    expect(out.candidate.stable_verdict_check_flips).toHaveLength(4);
    expect(out.must_not_break_rows).toEqual([id(1), id(13), id(20)]);
    expect(out.lists).toEqual({
      limit: 4,
      baseline_only: 5,
      candidate_only: 0,
      became_stable_correct: 7,
      lost_stable_correct: 17, // the baseline-only rows too (stable-correct, then unclassified)
      suspected_regressions: 17,
      must_not_break_rows: 4,
      baseline_check_flips: 12,
      candidate_check_flips: 7,
    });
    // the numbers are the whole comparison's
    expect(out.transitions).toEqual(cmp.transitions);
    expect(out.confirmation.counts).toEqual(cmp.confirmation.counts);
    expect(out.rows.total).toBe(24);
    expect(out.paired).toEqual(cmp.paired);
  });
});
