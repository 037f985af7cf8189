import type { StabilityClass } from './classify.ts';
import type { ConfirmationOutcome } from './confirm.ts';
import { confirmationOutcome } from './confirm.ts';
import type { PairInput, RowPair } from './pairing.ts';

/**
 * Must-not-break rows are tagged before results are seen: by the row tag `must_not_break` on any of
 * the row's trials, or by an id list. A listed id without a suite applies to that row id in every
 * suite; one with a suite to that suite only. An id that matches no row in the files is reported:
 * a must-not-break row with no attempts cannot be classified, so it is not a pass.
 */
export const MUST_NOT_BREAK_TAG = 'must_not_break';
export type MustNotBreakId = { suite?: string; row_id: string };
export type MustNotBreak = { tag: string; ids: readonly MustNotBreakId[] };

export const isMustNotBreak = (mnb: MustNotBreak, suite: string, pair: RowPair): boolean =>
  pair.tags.includes(mnb.tag) ||
  mnb.ids.some((id) => id.row_id === pair.row_id && (id.suite === undefined || id.suite === suite));

/** Listed ids that match no row of any compared suite. */
export const unmatchedIds = (mnb: MustNotBreak, pairs: readonly PairInput[]): MustNotBreakId[] =>
  mnb.ids.filter(
    (id) =>
      !pairs.some(
        (p) =>
          (id.suite === undefined || id.suite === p.suite) &&
          (p.baseline.rows.has(id.row_id) || p.candidate.rows.has(id.row_id)),
      ),
  );

export type SideClass = { n: number; c: number; class: StabilityClass };

/**
 * A must-not-break row's status after confirmation, from all recorded attempts of both versions:
 * unclassifiable (either side has too few attempts), broken (stable-correct on the baseline and not
 * on the candidate), not_covered (the baseline was not stable-correct, so the rule does not bind), ok.
 */
export type MustNotBreakRow = {
  suite: string;
  dataset_version: string;
  row_id: string;
  baseline: SideClass;
  candidate: SideClass;
  status: 'ok' | 'broken' | 'unclassifiable' | 'not_covered';
  /** For a suspected regression: what confirmation found. */
  outcome: ConfirmationOutcome | null;
};

const sideClass = (s: RowPair['baseline']): SideClass => ({ n: s.all.n, c: s.all.c, class: s.all.class });

export const mustNotBreakRow = (suite: string, dataset_version: string, p: RowPair): MustNotBreakRow => {
  const b = p.baseline.all.class;
  const c = p.candidate.all.class;
  const status =
    b === 'unclassified' || c === 'unclassified'
      ? 'unclassifiable'
      : b !== 'stable_correct'
        ? 'not_covered'
        : c === 'stable_correct'
          ? 'ok'
          : 'broken';
  const suspected = p.baseline.screening.class === 'stable_correct' && p.candidate.screening.class !== 'stable_correct';
  return {
    suite,
    dataset_version,
    row_id: p.row_id,
    baseline: sideClass(p.baseline),
    candidate: sideClass(p.candidate),
    status,
    outcome: suspected ? confirmationOutcome(p) : null,
  };
};
