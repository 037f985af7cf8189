import type { Comparison } from './compare.ts';
import type { JudgeCalibration } from './judges.ts';
import type { MustNotBreakRow } from './mustNotBreak.ts';
import type { RowPair } from './pairing.ts';
import { passHatK } from './estimators.ts';

/**
 * One rule's result: whether it passed, why, the rows behind it, and the numbers it used.
 * The shape extends GateEvaluated's `reasons` (schemas/events/decisions.ts) with the evidence.
 */
export type RuleResult = {
  rule: string;
  passed: boolean;
  detail: string;
  suite?: string;
  dataset_version?: string;
  rows: string[];
  evidence: Record<string, unknown>;
};

/** Optional configured rules, on top of the two seed rules that always apply. */
export type GateRules = {
  /** Zero candidate trials flagged with a forbidden action. */
  zero_forbidden_actions?: boolean;
  /** δ: the paired interval's lower bound for Δpass@1 must be at least −δ. */
  max_pass_at_1_drop?: number;
  /** The candidate's pass^k on rows carrying `tag` must be at least `min`. */
  pass_hat_k?: readonly { k: number; min: number; tag: string }[];
  /** Every judge's agreement with human labels must be at least `min`. */
  judge_agreement?: { min: number };
};

type Where = { suite: string; dataset_version: string };
const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;
const rowsOf = (n: number): string => `${n} must-not-break row${n === 1 ? '' : 's'}`;

/**
 * How far confirmation went on the broken rows, in words that match the table's confirmation column: "after
 * confirmation" only when it confirmed every one; else how many are confirmed and how many unresolved: those
 * whose confirmation attempts are in on both versions without reproducing the failure (`rerun`), and those no
 * confirmation attempt has reached yet.
 */
const confirmedSaid = (broken: readonly MustNotBreakRow[], rerun: ReadonlySet<string>): string => {
  const confirmed = broken.filter((r) => r.outcome === 'confirmed_regression').length;
  if (confirmed === broken.length) return 'after confirmation';
  const open = broken.filter((r) => r.outcome !== 'confirmed_regression');
  const ran = open.filter((r) => rerun.has(r.row_id)).length;
  const waiting = open.length - ran;
  const them = (n: number) => (n === 1 ? 'it' : 'them');
  const parts = [
    ...(confirmed > 0 ? [`${confirmed} confirmed`] : []),
    ...(ran > 0
      ? [
          `${ran === open.length && confirmed === 0 ? '' : `${ran} `}unresolved: the confirmation attempts of both versions did not reproduce ${them(ran)}`,
        ]
      : []),
    ...(waiting > 0
      ? [
          `${waiting === open.length && confirmed === 0 ? '' : `${waiting} `}unresolved: no confirmation has reproduced ${them(waiting)} yet`,
        ]
      : []),
  ];
  return `(${parts.join(', ')})`;
};

export const mnbStableRule = (
  where: Where,
  rows: readonly MustNotBreakRow[],
  rerun: ReadonlySet<string> = new Set(),
): RuleResult => {
  const broken = rows.filter((r) => r.status === 'broken');
  return {
    rule: 'must_not_break_stable_correct',
    ...where,
    passed: broken.length === 0,
    rows: broken.map((r) => r.row_id),
    detail:
      broken.length === 0
        ? `${rows.filter((r) => r.status === 'ok').length} of ${rows.filter((r) => r.status === 'ok' || r.status === 'broken').length} must-not-break rows stable-correct on the baseline are still stable-correct on the candidate (${rowsOf(rows.length)} in all)`
        : `${rowsOf(broken.length)} stable-correct on the baseline ${broken.length === 1 ? 'is' : 'are'} not stable-correct on the candidate ${confirmedSaid(broken, rerun)}`,
    evidence: {
      must_not_break_rows: rows.length,
      broken: broken.map((r) => ({
        row_id: r.row_id,
        baseline: r.baseline,
        candidate: r.candidate,
        outcome: r.outcome,
      })),
    },
  };
};

export const mnbClassifiableRule = (
  where: Where,
  rows: readonly MustNotBreakRow[],
  minAttempts: number,
): RuleResult => {
  const bad = rows.filter((r) => r.status === 'unclassifiable');
  return {
    rule: 'must_not_break_classifiable',
    ...where,
    passed: bad.length === 0,
    rows: bad.map((r) => r.row_id),
    detail:
      bad.length === 0
        ? `${rows.length === 0 ? 'no must-not-break rows in this suite' : `all ${rowsOf(rows.length)} have at least ${minAttempts} graded attempts on both versions`}`
        : `${rowsOf(bad.length)} with fewer than ${minAttempts} graded attempts on a version: an unclassifiable row is not a pass`,
    evidence: {
      min_attempts: minAttempts,
      unclassifiable: bad.map((r) => ({ row_id: r.row_id, baseline_n: r.baseline.n, candidate_n: r.candidate.n })),
    },
  };
};

export const forbiddenRule = (where: Where, pairs: readonly RowPair[]): RuleResult => {
  const rows = pairs.filter((p) => p.candidate.all.forbidden_trials > 0);
  const trials = rows.reduce((a, p) => a + p.candidate.all.forbidden_trials, 0);
  return {
    rule: 'zero_forbidden_actions',
    ...where,
    passed: trials === 0,
    rows: rows.map((p) => p.row_id),
    detail:
      trials === 0
        ? 'no candidate trial took a forbidden action'
        : `${trials} candidate trials on ${rows.length} rows took a forbidden action`,
    evidence: { trials },
  };
};

export const pass1DropRule = (where: Where, cmp: Comparison, delta: number): RuleResult => {
  const { pass_at_1: d } = cmp.paired;
  const lo = d.interval?.[0] ?? null;
  const passed = lo !== null && lo >= -delta;
  return {
    rule: 'pass_at_1_drop',
    ...where,
    passed,
    rows: [],
    detail:
      lo === null
        ? 'no paired rows: the change in pass@1 has no interval'
        : `Δpass@1 = ${d.delta!.toFixed(3)}, ${pct(cmp.baseline.intervals.confidence)} paired lower bound ${lo.toFixed(3)} ${passed ? '≥' : '<'} −${delta}`,
    evidence: { ...d, max_drop: delta },
  };
};

export const passHatRule = (
  where: Where,
  pairs: readonly RowPair[],
  bar: { k: number; min: number; tag: string },
): RuleResult => {
  const rows = pairs.filter((p) => p.tags.includes(bar.tag) && p.candidate.screening.n >= bar.k);
  const value = rows.length
    ? rows.reduce((a, p) => a + passHatK(p.candidate.screening.n, p.candidate.screening.c, bar.k), 0) / rows.length
    : null;
  const passed = value !== null && value >= bar.min;
  return {
    rule: `pass_hat_k`,
    ...where,
    passed,
    rows: rows.map((p) => p.row_id),
    detail:
      value === null
        ? `no candidate row tagged ${bar.tag} has ${bar.k} graded attempts: no evidence is not a pass`
        : `pass^${bar.k} on ${rows.length} rows tagged ${bar.tag} = ${value.toFixed(3)} ${passed ? '≥' : '<'} ${bar.min}`,
    evidence: { ...bar, value, rows: rows.length },
  };
};

export const judgeRule = (judges: readonly JudgeCalibration[] | undefined, min: number): RuleResult => {
  const low = (judges ?? []).filter((j) => j.agreement.agreement === null || j.agreement.agreement < min);
  const passed = (judges ?? []).length > 0 && low.length === 0;
  const name = (j: JudgeCalibration) =>
    `${j.judge.id}${j.judge.version ? `@${j.judge.version}` : ''} (rubric ${j.judge.rubric_version})`;
  return {
    rule: 'judge_agreement',
    passed,
    rows: [],
    detail: !judges?.length
      ? 'no judge calibration data (pass --judgments FILE): no evidence is not a pass'
      : passed
        ? `every judge agrees with human labels at least ${min}`
        : `judges below ${min}: ${low.map(name).join(', ')}`,
    evidence: {
      min,
      judges: (judges ?? []).map((j) => ({
        judge: j.judge,
        items: j.agreement.items,
        agreement: j.agreement.agreement,
        kappa: j.agreement.kappa,
      })),
    },
  };
};
