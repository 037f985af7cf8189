import { classWith, type StabilityClass } from './classify.ts';
import type { AttemptRecord, CheckAnswer, RowState } from './rowState.ts';

/** How verdicts count. `ungradedAsFailure` counts a null verdict as a failure instead of leaving it out. */
export type VerdictPolicy = {
  ungradedAsFailure: boolean;
  minAttempts: number;
  /** Classes by an adaptive run's rule: a row with a pass and a fail is a flip at any count (`classWith`). */
  mixedIsFlip?: boolean;
};

/** The answers of one intermediate check across a row's counted attempts, in attempt order. */
export type CheckSeries = { name: string; answers: CheckAnswer[] };

/** One row's numbers, from a chosen set of its attempts. */
export type RowSummary = {
  row_id: string;
  /** Graded attempts (plus ungraded ones under ungradedAsFailure) and their passes. */
  n: number;
  c: number;
  /** Attempts with a null verdict, whether left out or counted as failures. */
  ungraded: number;
  class: StabilityClass;
  /** Whether the raw outputs of counted attempts differ; null with fewer than two outputs. */
  outputs_differ: boolean | null;
  checks: CheckSeries[];
  /** Counted or not, attempts that took a forbidden action. */
  forbidden_trials: number;
  event_ids: string[];
  tags: string[];
};

const counts = (a: AttemptRecord, p: VerdictPolicy): boolean => a.passed !== null || p.ungradedAsFailure;

const checkSeries = (attempts: readonly AttemptRecord[]): CheckSeries[] => {
  const byName = new Map<string, CheckAnswer[]>();
  for (const a of attempts)
    for (const ch of a.checks) {
      const answers = byName.get(ch.name) ?? [];
      answers.push(ch.answer);
      byName.set(ch.name, answers);
    }
  return [...byName].map(([name, answers]) => ({ name, answers }));
};

export const distinctCount = (values: readonly unknown[]): number => new Set(values.map((v) => JSON.stringify(v))).size;

export const summarizeAttempts = (
  row_id: string,
  attempts: readonly AttemptRecord[],
  tags: readonly string[],
  policy: VerdictPolicy,
): RowSummary => {
  const counted = attempts.filter((a) => counts(a, policy));
  const n = counted.length;
  const c = counted.filter((a) => a.passed === true).length;
  const outputs = counted.flatMap((a) => (a.output_hash === null ? [] : [a.output_hash]));
  return {
    row_id,
    n,
    c,
    ungraded: attempts.filter((a) => a.passed === null).length,
    class: classWith(n, c, policy.minAttempts, policy.mixedIsFlip),
    outputs_differ: outputs.length < 2 ? null : distinctCount(outputs) > 1,
    checks: checkSeries(counted),
    forbidden_trials: attempts.filter((a) => a.forbidden_actions.length > 0).length,
    event_ids: attempts.map((a) => a.event_id),
    tags: [...tags],
  };
};

export const summarizeRow = (row_id: string, state: RowState, policy: VerdictPolicy): RowSummary =>
  summarizeAttempts(row_id, state.attempts, state.tags, policy);

/**
 * What the report reads of one check on one row: whether it was answered on at least two counted attempts, and
 * whether those answers differ. The store counts these in SQL (sinks/clickhouse/queries/rowCounts.ts) instead of
 * sending every answer.
 */
export type CheckTally = { name: string; repeated: boolean; flips: boolean };

export const tallyCheck = (s: CheckSeries | CheckTally): CheckTally =>
  'answers' in s
    ? { name: s.name, repeated: s.answers.length >= 2, flips: s.answers.length >= 2 && distinctCount(s.answers) > 1 }
    : s;

/**
 * The part of a row's summary the report reads (`reportGroup`): a RowSummary is one, and so is a row the store
 * counted, whose checks are tallies.
 */
export type ReportRow = Pick<
  RowSummary,
  'row_id' | 'n' | 'c' | 'ungraded' | 'class' | 'outputs_differ' | 'forbidden_trials'
> & { checks: readonly (CheckSeries | CheckTally)[] };

/** The check names whose answers differ across a row's attempts. */
export const flippingChecks = (row: Pick<ReportRow, 'checks'>): string[] =>
  row.checks.map(tallyCheck).flatMap((t) => (t.flips ? [t.name] : []));
