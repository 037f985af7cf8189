import { z } from 'zod';
import { DEFAULT_MIN_ATTEMPTS, STABILITY_CLASSES, type StabilityClass } from '../../../processors/core/classify.ts';
import { compareVersions, type Comparison } from '../../../processors/core/compare.ts';
import { groupTrials } from '../../../processors/core/groups.ts';
import type { CompareOptions } from '../../../processors/core/pairing.ts';
import { versionPairs } from '../../../processors/core/versionPairs.ts';
import { loadTrialsForReport } from './report.ts';
import { select, type Querier } from './select.ts';
import { NOT_RETRACTED } from './retracted.ts';
import { declaredRuns } from './declaredRuns.ts';

export interface PairScope {
  readonly suite: string;
  readonly dataset_version: string;
  readonly baseline: string;
  readonly candidate: string;
  /** @default DEFAULT_MIN_ATTEMPTS (3) */
  readonly minAttempts?: number;
  /**
   * Only the rows marked must-not-break (on any of their trials): the same transitions of those rows, without
   * reading every row into Node (the comparison's must-not-break list at 1M trials). @default false
   */
  readonly mustNotBreakOnly?: boolean;
}

export type TransitionMatrix = Record<StabilityClass, Record<StabilityClass, number>>;

export interface RowTransition {
  readonly row_id: string;
  readonly must_not_break: boolean;
  readonly baseline: { n: number; c: number; class: StabilityClass };
  readonly candidate: { n: number; c: number; class: StabilityClass };
}

export interface ClassTransitions {
  /** matrix[baseline class][candidate class] = rows; a row missing on one side is unclassified there. */
  readonly matrix: TransitionMatrix;
  /** Stable-correct on the baseline, not on the candidate: the suspected regressions. */
  readonly regressions: RowTransition[];
  /** Stable-correct on the candidate, not on the baseline. */
  readonly improvements: RowTransition[];
  /** Every row with both classes, by row id: what the matrix counts (the row explorer's transition filter). */
  readonly rows: RowTransition[];
}

// classOf (processors/core/classify.ts) in SQL: the same four rules, in the same order.
const CLASS_OF = (n: string, c: string) =>
  `multiIf(${n} < greatest(1, {min_attempts:UInt32}), 'unclassified', ${c} = ${n}, 'stable_correct', ${c} = 0, 'stable_wrong', 'flip')`;

const TRANSITIONS_SQL = `
SELECT row_id, must_not_break, bn, bc, cn, cc, ${CLASS_OF('bn', 'bc')} AS b_class, ${CLASS_OF('cn', 'cc')} AS c_class
FROM (
  SELECT row_id,
         max(must_not_break) AS must_not_break,
         countIf(agent_version = {baseline:String} AND passed IS NOT NULL) AS bn,
         countIf(agent_version = {baseline:String} AND passed) AS bc,
         countIf(agent_version = {candidate:String} AND passed IS NOT NULL) AS cn,
         countIf(agent_version = {candidate:String} AND passed) AS cc
  FROM trials FINAL
  WHERE suite = {suite:String} AND dataset_version = {dataset_version:String}
    AND agent_version IN ({baseline:String}, {candidate:String})
    AND ${NOT_RETRACTED}
    AND (NOT {must_not_break_only:Bool} OR row_id IN (
      SELECT row_id FROM trials
      WHERE suite = {suite:String} AND dataset_version = {dataset_version:String}
        AND agent_version IN ({baseline:String}, {candidate:String}) AND must_not_break))
  GROUP BY row_id
)
ORDER BY row_id`;

const TransitionRow = z.object({
  row_id: z.string(),
  must_not_break: z.union([z.boolean(), z.number()]).transform(Boolean),
  bn: z.number(),
  bc: z.number(),
  cn: z.number(),
  cc: z.number(),
  b_class: z.enum(STABILITY_CLASSES),
  c_class: z.enum(STABILITY_CLASSES),
});

/**
 * Stability-class transitions from baseline to candidate over every recorded attempt, paired by
 * row, with the regression and improvement lists. (`compareFromStore` gives `passk compare`'s full
 * document, which splits screening from confirmation attempts.)
 */
export const classTransitions = async (client: Querier, scope: PairScope): Promise<ClassTransitions> => {
  const rows = await select(client, TransitionRow, TRANSITIONS_SQL, {
    suite: scope.suite,
    dataset_version: scope.dataset_version,
    baseline: scope.baseline,
    candidate: scope.candidate,
    min_attempts: scope.minAttempts ?? DEFAULT_MIN_ATTEMPTS,
    must_not_break_only: scope.mustNotBreakOnly ?? false,
  });
  const matrix = Object.fromEntries(
    STABILITY_CLASSES.map((b) => [b, Object.fromEntries(STABILITY_CLASSES.map((c) => [c, 0]))]),
  ) as TransitionMatrix;
  const all: RowTransition[] = rows.map((r) => {
    matrix[r.b_class][r.c_class]++;
    return {
      row_id: r.row_id,
      must_not_break: r.must_not_break,
      baseline: { n: r.bn, c: r.bc, class: r.b_class },
      candidate: { n: r.cn, c: r.cc, class: r.c_class },
    };
  });
  return {
    matrix,
    regressions: all.filter((r) => r.baseline.class === 'stable_correct' && r.candidate.class !== 'stable_correct'),
    improvements: all.filter((r) => r.baseline.class !== 'stable_correct' && r.candidate.class === 'stable_correct'),
    rows: all,
  };
};

const AttemptRow = z.object({
  agent_version: z.string(),
  event_id: z.string(),
  run_id: z.string(),
  attempt: z.number(),
  occurred_at: z.number(),
  passed: z.boolean().nullable(),
  output: z.string().nullable(),
  error_kind: z.string().nullable(),
  failure_category: z.string().nullable(),
  checks: z.array(z.object({ name: z.string(), answer: z.string(), passed: z.boolean().nullable() })),
});

export interface AttemptDetail extends Omit<z.infer<typeof AttemptRow>, 'checks'> {
  readonly checks: { name: string; answer: unknown; passed: boolean | null }[];
}

/** Drill-down: every attempt of one row under the given versions, with output and checks, in time order. */
export const rowAttempts = async (
  client: Querier,
  scope: { suite: string; dataset_version: string; row_id: string; versions: readonly string[] },
): Promise<AttemptDetail[]> => {
  const rows = await select(
    client,
    AttemptRow,
    `SELECT agent_version, event_id, run_id, attempt, toUnixTimestamp64Milli(occurred_at) AS occurred_at, passed, output,
            error_kind, failure_category, checks
     FROM trials FINAL
     WHERE suite = {suite:String} AND dataset_version = {dataset_version:String} AND row_id = {row_id:String}
       AND has({versions:Array(String)}, agent_version)
       AND ${NOT_RETRACTED}
     ORDER BY agent_version, occurred_at, run_id, attempt, event_id`,
    { suite: scope.suite, dataset_version: scope.dataset_version, row_id: scope.row_id, versions: [...scope.versions] },
  );
  return rows.map((r) => ({
    ...r,
    checks: r.checks.map((c) => ({ name: c.name, answer: JSON.parse(c.answer) as unknown, passed: c.passed })),
  }));
};

/**
 * `passk compare`'s document for one suite and dataset version, computed by the core from the stored trials, each
 * version's K declared by its stored runs (`declaredRuns`) unless `opts.declared` says.
 */
export const compareFromStore = async (
  client: Querier,
  scope: PairScope,
  opts: CompareOptions,
): Promise<Comparison | undefined> => {
  const where = { suites: [scope.suite], datasetVersions: [scope.dataset_version] };
  const [trials, declared] = await Promise.all([
    loadTrialsForReport(client, { ...where, agentVersions: [scope.baseline, scope.candidate] }),
    opts.declared ?? declaredRuns(client, where),
  ]);
  const pair = versionPairs(groupTrials(trials), scope.baseline, scope.candidate).both[0];
  return pair ? compareVersions(pair, { ...opts, declared }) : undefined;
};
