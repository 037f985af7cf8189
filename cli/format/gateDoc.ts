import type { GateVerdict } from '../../processors/core/index.ts';
import { heading, table, text, type Block } from './doc.ts';
import { rowList } from './numbers.ts';

const STATUS = { ok: 'good', broken: 'bad', unclassifiable: 'bad', not_covered: 'dim' } as const;

/** Rule ids as a reader says them (the dashboard's Gates view words them the same way; JSON keeps the ids). */
const RULE_TITLES: Record<string, string> = {
  must_not_break_stable_correct: 'must-not-break rows stay stable-correct',
  must_not_break_classifiable: 'must-not-break rows have enough attempts',
  zero_forbidden_actions: 'zero forbidden actions',
  pass_at_1_drop: 'no decline in pass@1',
  pass_hat_k: 'pass^k bar on tagged rows',
  judge_agreement: 'judges agree with human labels',
};
export const ruleTitle = (rule: string): string => RULE_TITLES[rule] ?? rule.replaceAll('_', ' ');
/** `stable_correct`, `not_covered`, `confirmed_regression` → words. */
export const words = (id: string): string =>
  id.replaceAll('stable_correct', 'stable-correct').replaceAll('stable_wrong', 'stable-wrong').replaceAll('_', ' ');

const rowsSaid = (rows: readonly string[]): string => (rows.length ? ` (${rowList(rows, 8)})` : '');

/** The verdict in one plain sentence: whether the candidate may ship, and what failed on which rows. */
export const verdictSentence = (v: {
  verdict: 'pass' | 'fail';
  baseline: string;
  candidate: string;
  reasons: readonly { passed: boolean; detail: string; rows?: readonly string[] | undefined }[];
}): string => {
  if (v.verdict === 'pass')
    return `${v.candidate} may ship: all ${v.reasons.length} rules passed against ${v.baseline}.`;
  const failed = v.reasons.filter((r) => !r.passed);
  return `${v.candidate} may not ship: ${failed.map((r) => `${r.detail}${rowsSaid(r.rows ?? [])}`).join('; and ')}.`;
};

export const gateBlocks = (v: GateVerdict): Block[] => {
  const pass = v.verdict === 'pass';
  return [
    heading(
      `GATE ${pass ? 'PASS' : 'FAIL'}: candidate ${v.candidate} against baseline ${v.baseline}`,
      1,
      pass ? 'good' : 'bad',
    ),
    text(verdictSentence({ ...v, reasons: v.rules }), pass ? 'good' : 'bad'),
    table(
      ['', 'rule', 'suite', 'detail', 'rows'],
      v.rules.map((r) => [
        r.passed ? { text: 'pass', tone: 'good' } : { text: 'FAIL', tone: 'bad' },
        ruleTitle(r.rule),
        r.suite === undefined ? '' : `${r.suite} (${r.dataset_version})`,
        r.detail,
        rowList(r.rows, 12),
      ]),
    ),
    ...(v.must_not_break.length
      ? [
          heading(`Must-not-break rows (${v.must_not_break.length})`, 2),
          table(
            ['suite', 'row', 'baseline (all attempts)', 'candidate (all attempts)', 'status', 'confirmation'],
            v.must_not_break.map((m) => [
              m.suite,
              m.row_id,
              `${words(m.baseline.class)} ${m.baseline.c}/${m.baseline.n}`,
              `${words(m.candidate.class)} ${m.candidate.c}/${m.candidate.n}`,
              { text: words(m.status), tone: STATUS[m.status] },
              words(m.outcome ?? ''),
            ]),
          ),
        ]
      : [text('No must-not-break rows: tag rows must_not_break or pass --must-not-break FILE.', 'warn')]),
    text(''),
  ];
};
