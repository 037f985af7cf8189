import type { GateVerdict } from '../../processors/core/index.ts';
import { heading, table, text, type Block } from './doc.ts';
import { rowList } from './numbers.ts';

const STATUS = { ok: 'good', broken: 'bad', unclassifiable: 'bad', not_covered: 'dim' } as const;

export const gateBlocks = (v: GateVerdict): Block[] => {
  const pass = v.verdict === 'pass';
  const failed = v.rules.filter((r) => !r.passed).length;
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
