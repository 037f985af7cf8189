import { comparePairs, type Comparison } from './compare.ts';
import {
  forbiddenRule,
  judgeRule,
  mnbClassifiableRule,
  mnbStableRule,
  pass1DropRule,
  passHatRule,
  type GateRules,
  type RuleResult,
} from './gateRules.ts';
import type { JudgeCalibration } from './judges.ts';
import {
  isMustNotBreak,
  mustNotBreakRow,
  unmatchedIds,
  type MustNotBreak,
  type MustNotBreakRow,
} from './mustNotBreak.ts';
import { pairRows, type CompareOptions, type PairInput } from './pairing.ts';

/**
 * The release gate. Two seed rules always apply to the must-not-break rows, after confirmation:
 * every one that was stable-correct on the baseline is still stable-correct on the candidate, and
 * every one has enough attempts to classify. Configured rules add to them. The verdict is computed
 * from recorded verdicts only and lists the attempts (event ids) behind it, so it can be audited.
 */
export type GateInput = {
  baseline: string;
  candidate: string;
  /** One entry per (suite, dataset version) present on either version. */
  pairs: readonly PairInput[];
  mustNotBreak: MustNotBreak;
  rules: GateRules;
  judges?: readonly JudgeCalibration[];
};

export type GateEvidence = {
  suite: string;
  dataset_version: string;
  row_id: string;
  baseline_attempts: string[];
  candidate_attempts: string[];
};

export type GateVerdict = {
  verdict: 'pass' | 'fail';
  baseline: string;
  candidate: string;
  rules: RuleResult[];
  must_not_break: MustNotBreakRow[];
  /** The attempts behind every must-not-break row and every suspected regression. */
  evidence: GateEvidence[];
  comparisons: Comparison[];
};

const suiteRules = (input: GateInput, pair: PairInput, opts: CompareOptions) => {
  const paired = pairRows(pair, opts);
  const where = { suite: pair.suite, dataset_version: pair.dataset_version };
  const comparison = comparePairs(pair, paired, opts);
  const mnbPairs = paired.rows.filter((p) => isMustNotBreak(input.mustNotBreak, pair.suite, p));
  const mnb = mnbPairs.map((p) => mustNotBreakRow(pair.suite, pair.dataset_version, p));
  const { rules } = input;
  // suspects whose confirmation attempts are in on both versions: an unresolved one was rerun, not waiting
  const rerun = new Set(
    comparison.confirmation.rows
      .filter((r) => r.baseline.confirmation_attempts > 0 && r.candidate.confirmation_attempts > 0)
      .map((r) => r.row_id),
  );
  const results: RuleResult[] = [mnbStableRule(where, mnb, rerun), mnbClassifiableRule(where, mnb, opts.minAttempts)];
  if (rules.zero_forbidden_actions) results.push(forbiddenRule(where, paired.rows));
  if (rules.max_pass_at_1_drop !== undefined) results.push(pass1DropRule(where, comparison, rules.max_pass_at_1_drop));
  for (const bar of rules.pass_hat_k ?? []) results.push(passHatRule(where, paired.rows, bar));
  const suspects = new Set(comparison.lost_stable_correct);
  const evidence = paired.rows
    .filter((p) => suspects.has(p.row_id) || mnbPairs.includes(p))
    .map((p) => ({
      ...where,
      row_id: p.row_id,
      baseline_attempts: p.baseline.all.event_ids,
      candidate_attempts: p.candidate.all.event_ids,
    }));
  return { results, mnb, evidence, comparison };
};

const unmatchedRule = (input: GateInput): RuleResult[] => {
  const missing = unmatchedIds(input.mustNotBreak, input.pairs);
  if (missing.length === 0) return [];
  const ids = missing.map((m) => (m.suite === undefined ? m.row_id : `${m.suite}::${m.row_id}`));
  return [
    {
      rule: 'must_not_break_classifiable',
      passed: false,
      rows: ids,
      detail: `${ids.length} listed must-not-break row${ids.length === 1 ? ' has' : 's have'} no attempts in the files: an unclassifiable row is not a pass`,
      evidence: { not_found: ids },
    },
  ];
};

export const evaluateGate = (input: GateInput, opts: CompareOptions): GateVerdict => {
  const perSuite = input.pairs.map((p) => suiteRules(input, p, opts));
  const rules = [...perSuite.flatMap((s) => s.results), ...unmatchedRule(input)];
  if (input.rules.judge_agreement) rules.push(judgeRule(input.judges, input.rules.judge_agreement.min));
  return {
    verdict: rules.every((r) => r.passed) ? 'pass' : 'fail',
    baseline: input.baseline,
    candidate: input.candidate,
    rules,
    must_not_break: perSuite.flatMap((s) => s.mnb),
    evidence: perSuite.flatMap((s) => s.evidence),
    comparisons: perSuite.map((s) => s.comparison),
  };
};
