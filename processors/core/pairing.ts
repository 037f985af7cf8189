import { rowIdOrder } from './groups.ts';
import { DEFAULT_ADAPTIVE } from './adaptive.ts';
import { firstStageOptions, firstStageState, hasAdaptiveRun, type ReportOptions } from './report.ts';
import type { RowState } from './rowState.ts';
import { summarizeAttempts, type ReportRow, type RowSummary } from './rowSummary.ts';
import { plannedAttempts, splitAttempts, type ConfirmationPolicy } from './screening.ts';

/** One agent version's rows on one (suite, dataset version). */
export type VersionRows = { version: string; rows: ReadonlyMap<string, RowState> };

/** Baseline and candidate on the same suite and dataset version: comparisons are paired by row. */
export type PairInput = { suite: string; dataset_version: string; baseline: VersionRows; candidate: VersionRows };

export type CompareOptions = ReportOptions & ConfirmationPolicy;

/**
 * One side of a row: its screening attempts, all its attempts, and what confirmation added; on a version with an
 * adaptive run, `headline`: the row's first-stage attempts classified at the first stage's k, behind the version's
 * headline numbers and the paired differences, as `passk report` takes them (docs/adaptive.md).
 */
export type SideRow = { screening: RowSummary; all: RowSummary; confirmation: RowSummary; headline?: RowSummary };
export type RowPair = { row_id: string; tags: string[]; baseline: SideRow; candidate: SideRow };
export type PairedRows = { screen_attempts: { baseline: number; candidate: number }; rows: RowPair[] };

/**
 * What the comparison reads of one side of a row (a SideRow is one): the screening attempts as the report reads
 * them, the counts of all attempts and of the confirmation attempts. The answers of all attempts' checks are
 * read only for a confirmed regression (its first divergent check); a side counted without them (`checks`
 * absent) must not be one.
 */
export type CountedSide = {
  screening: ReportRow;
  all: Pick<RowSummary, 'n' | 'c' | 'ungraded' | 'class'> & { checks?: RowSummary['checks'] };
  confirmation: Pick<RowSummary, 'n' | 'c'>;
  headline?: ReportRow;
};
export type CountedPair = { row_id: string; baseline: CountedSide; candidate: CountedSide };

const EMPTY: RowState = { attempts: [], tags: [] };

/**
 * One side of a row from its state: screening (the first `screenAttempts` planned attempts), all, confirmation; on a
 * version with an adaptive run (`firstStage`: its k), the screening classed by the run's rule (a pass and a fail are a
 * flip) and the first-stage headline row.
 */
export const sideRow = (
  row_id: string,
  state: RowState,
  screenAttempts: number,
  opts: CompareOptions,
  firstStage?: number,
): SideRow => {
  const { screening, confirmation } = splitAttempts(state, screenAttempts, opts);
  const classed = firstStage === undefined ? opts : { ...opts, mixedIsFlip: true };
  return {
    screening: summarizeAttempts(row_id, screening, state.tags, classed),
    all: summarizeAttempts(row_id, state.attempts, state.tags, opts),
    confirmation: summarizeAttempts(row_id, confirmation, state.tags, opts),
    ...(firstStage === undefined
      ? {}
      : {
          headline: summarizeAttempts(
            row_id,
            firstStageState(state, firstStage, opts.adaptiveRuns).attempts,
            state.tags,
            firstStageOptions(opts, firstStage),
          ),
        }),
  };
};

/** A version's first stage when it has an adaptive run (`passk report`'s k: `headlineFirstStage`, else the default). */
export const adaptiveFirstStage = (rows: Iterable<RowState>, opts: CompareOptions): number | undefined => {
  for (const r of rows)
    if (hasAdaptiveRun(r, opts.adaptiveRuns)) return opts.headlineFirstStage ?? DEFAULT_ADAPTIVE.firstK;
  return undefined;
};

/** Every row of either version, with both sides summarized; a row missing on one side has no attempts there. */
export const pairRows = (input: PairInput, opts: CompareOptions): PairedRows => {
  const screen = {
    baseline: opts.screenAttempts ?? plannedAttempts(input.baseline.rows.values(), opts),
    candidate: opts.screenAttempts ?? plannedAttempts(input.candidate.rows.values(), opts),
  };
  const stage = {
    baseline: adaptiveFirstStage(input.baseline.rows.values(), opts),
    candidate: adaptiveFirstStage(input.candidate.rows.values(), opts),
  };
  const ids = [...new Set([...input.baseline.rows.keys(), ...input.candidate.rows.keys()])].sort(rowIdOrder);
  const rows = ids.map((row_id) => {
    const b = input.baseline.rows.get(row_id) ?? EMPTY;
    const c = input.candidate.rows.get(row_id) ?? EMPTY;
    return {
      row_id,
      tags: [...new Set([...b.tags, ...c.tags])].sort(),
      baseline: sideRow(row_id, b, screen.baseline, opts, stage.baseline),
      candidate: sideRow(row_id, c, screen.candidate, opts, stage.candidate),
    };
  });
  return { screen_attempts: screen, rows };
};
