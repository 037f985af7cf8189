import type { Comparison } from '../processors/core/compare.ts';
import type { RunSource } from '../sinks/clickhouse/queries/runSources.ts';

/** Rows each list of `/api/compare` carries; `lists` counts them all. */
export const LIST_LIMIT = 200;

/** `run_sources`: per version, the dataset file and agent of its latest `passk run` (for commands in full). */
type Full = Comparison & { must_not_break_rows: string[]; run_sources?: Record<string, RunSource> };

/** Every list of the answer, with how many rows it has in all (the answer carries its first `limit`). */
export type ListTotals = {
  baseline_only: number;
  candidate_only: number;
  became_stable_correct: number;
  lost_stable_correct: number;
  suspected_regressions: number;
  must_not_break_rows: number;
  baseline_check_flips: number;
  candidate_check_flips: number;
};

export type BoundedComparison = Full & { lists: ListTotals & { limit: number } };

/**
 * `/api/compare`'s answer bounded in size whatever the number of rows: every list of rows is cut to its first
 * `limit` (in row order), with its full length in `lists`; the suspected regressions are those of the listed lost
 * rows (one per lost row, in the same order), and the must-not-break rows those among the listed rows (all a
 * view marks). Every number (counts, transitions, intervals) is the whole comparison's.
 */
export const boundedComparison = (cmp: Full, limit = LIST_LIMIT): BoundedComparison => {
  const cut = <T>(xs: readonly T[]): T[] => xs.slice(0, limit);
  const listed = {
    baseline_only: cut(cmp.rows.baseline_only),
    candidate_only: cut(cmp.rows.candidate_only),
    became_stable_correct: cut(cmp.became_stable_correct),
    lost_stable_correct: cut(cmp.lost_stable_correct),
  };
  const shown = new Set(Object.values(listed).flat());
  return {
    ...cmp,
    baseline: { ...cmp.baseline, stable_verdict_check_flips: cut(cmp.baseline.stable_verdict_check_flips) },
    candidate: { ...cmp.candidate, stable_verdict_check_flips: cut(cmp.candidate.stable_verdict_check_flips) },
    rows: { ...cmp.rows, baseline_only: listed.baseline_only, candidate_only: listed.candidate_only },
    became_stable_correct: listed.became_stable_correct,
    lost_stable_correct: listed.lost_stable_correct,
    confirmation: { ...cmp.confirmation, rows: cut(cmp.confirmation.rows) },
    must_not_break_rows: cmp.must_not_break_rows.filter((id) => shown.has(id)),
    lists: {
      limit,
      baseline_only: cmp.rows.baseline_only.length,
      candidate_only: cmp.rows.candidate_only.length,
      became_stable_correct: cmp.became_stable_correct.length,
      lost_stable_correct: cmp.lost_stable_correct.length,
      suspected_regressions: cmp.confirmation.rows.length,
      must_not_break_rows: cmp.must_not_break_rows.length,
      baseline_check_flips: cmp.baseline.stable_verdict_check_flips.length,
      candidate_check_flips: cmp.candidate.stable_verdict_check_flips.length,
    },
  };
};
