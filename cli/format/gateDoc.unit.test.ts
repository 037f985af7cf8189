import { describe, expect, it } from 'vitest';
import { renderMarkdown } from './render.ts';
import { ruleBlocks, unprotectedLine, type RuleView } from './gateDoc.ts';

const side = (cls: 'stable_correct' | 'stable_wrong' | 'flip', c: number, n = 3) => ({ class: cls, c, n });
const row = (row_id: string, baseline: ReturnType<typeof side>, status: 'ok' | 'not_covered') => ({
  suite: 'refunds',
  dataset_version: 'v1',
  row_id,
  baseline,
  candidate: side('stable_correct', 3),
  status,
  outcome: null,
});

const verdict = (mnb: NonNullable<RuleView['must_not_break']>): RuleView => ({
  verdict: 'pass',
  baseline: 'v1',
  candidate: 'v2',
  rules: [{ rule: 'must_not_break_stable_correct', passed: true, detail: '1 of 1 rows still stable-correct' }],
  must_not_break: mnb as RuleView['must_not_break'],
});

describe('must-not-break rows the gate cannot protect', () => {
  it('are named in a line of the verdict, with what the baseline did on each, when a row flips on the baseline', () => {
    const v = verdict([
      row('r01', side('stable_correct', 3), 'ok'),
      row('r08', side('stable_wrong', 0), 'not_covered'),
      row('r12', side('flip', 2), 'not_covered'),
    ]);
    const line =
      '2 must-not-break rows are not protected: the baseline is not stable-correct on them, so no rule binds: ' +
      'r08 (stable-wrong 0/3), r12 (flip 2/3). Fix the baseline or the rows before trusting the gate with them.';
    expect(unprotectedLine(v.must_not_break)).toBe(line);
    expect(renderMarkdown(ruleBlocks(v))).toContain(line);
  });

  it('say nothing when every must-not-break row is stable-correct on the baseline', () => {
    const v = verdict([row('r01', side('stable_correct', 3), 'ok')]);
    expect(unprotectedLine(v.must_not_break)).toBeUndefined();
    expect(renderMarkdown(ruleBlocks(v))).not.toContain('not protected');
  });
});
