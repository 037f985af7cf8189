import type { GateVerdict } from '../../processors/core/index.ts';
import type { GateEvaluated } from '../../schemas/events/decisions.ts';
import { heading, table, text, type Block } from './doc.ts';
import { rowList } from './numbers.ts';

const STATUS = { ok: 'good', broken: 'bad', unclassifiable: 'bad', not_covered: 'dim' } as const;

/** What a gate verdict prints: `passk gate`'s GateVerdict and the processors' GateEvaluated both have it. */
export interface RuleView {
  readonly verdict: 'pass' | 'fail';
  readonly baseline: string;
  readonly candidate: string;
  readonly rules: readonly {
    rule: string;
    passed: boolean;
    detail: string;
    suite?: string;
    dataset_version?: string;
    rows?: readonly string[];
  }[];
  /** Absent on a GateEvaluated of schema version 1, which did not carry them. */
  readonly must_not_break?: GateVerdict['must_not_break'];
}

/** A verdict as `passk gate` prints it: the rules, then the must-not-break table. One document for every source. */
export const ruleBlocks = (v: RuleView): Block[] => {
  const pass = v.verdict === 'pass';
  const failed = v.rules.filter((r) => !r.passed).length;
  const mnb = v.must_not_break;
  return [
    heading(
      `GATE ${pass ? 'PASS' : 'FAIL'}: candidate ${v.candidate} against baseline ${v.baseline}`,
      1,
      pass ? 'good' : 'bad',
    ),
    text(
      pass ? `All ${v.rules.length} rules passed.` : `${failed} of ${v.rules.length} rules failed.`,
      pass ? 'good' : 'bad',
    ),
    table(
      ['', 'rule', 'suite', 'detail', 'rows'],
      v.rules.map((r) => [
        r.passed ? { text: 'pass', tone: 'good' } : { text: 'FAIL', tone: 'bad' },
        r.rule,
        r.suite === undefined ? '' : `${r.suite} (${r.dataset_version})`,
        r.detail,
        rowList(r.rows ?? [], 12),
      ]),
    ),
    ...(mnb === undefined
      ? []
      : mnb.length
        ? [
            heading(`Must-not-break rows (${mnb.length})`, 2),
            table(
              ['suite', 'row', 'baseline (all attempts)', 'candidate (all attempts)', 'status', 'confirmation'],
              mnb.map((m) => [
                m.suite,
                m.row_id,
                `${m.baseline.class} ${m.baseline.c}/${m.baseline.n}`,
                `${m.candidate.class} ${m.candidate.c}/${m.candidate.n}`,
                { text: m.status, tone: STATUS[m.status] },
                m.outcome ?? '',
              ]),
            ),
          ]
        : [text('No must-not-break rows: tag rows must_not_break or pass --must-not-break FILE.', 'warn')]),
    text(''),
  ];
};

/** The processors' verdict in the same document (a schema-version-1 event has no must-not-break rows to show). */
export const evaluatedView = (e: GateEvaluated): RuleView => ({
  verdict: e.verdict,
  baseline: e.baseline,
  candidate: e.candidate,
  rules: e.reasons,
  ...(e.must_not_break ? { must_not_break: e.must_not_break } : {}),
});
