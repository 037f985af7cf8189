import { describe, expect, it } from 'vitest';
import { renderMarkdown } from './render.ts';
import { gateNext, ruleBlocks, unprotectedLine, type RuleView } from './gateDoc.ts';

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

describe('after a failing verdict with broken rows no confirmation reproduced', () => {
  const broken = (row_id: string, outcome: 'unresolved' | 'confirmed_regression') => ({
    ...row(row_id, side('stable_correct', 3), 'ok'),
    candidate: side('flip', 2),
    status: 'broken' as const,
    outcome,
  });
  const failed = (mnb: ReturnType<typeof broken>[]): RuleView => ({
    ...verdict(mnb as unknown as NonNullable<RuleView['must_not_break']>),
    verdict: 'fail',
  });

  it('suggests the runs that settle them, each command complete enough to run as printed, then compare', () => {
    const next = renderMarkdown(
      gateNext(
        failed([broken('r03', 'unresolved'), broken('r07', 'confirmed_regression'), broken('r11', 'unresolved')]),
        'trials.jsonl',
      ),
    );
    expect(next).toContain('2 broken must-not-break rows are unresolved: run both versions again on them');
    // what running again can do: the candidate's failed attempt stays counted (passing confirmations do not clear it)
    expect(next).toContain(
      'A row stops failing the gate only if the baseline fails on it too; else it stays broken (confirmed if the candidate fails again):',
    );
    expect(next).toContain("next: printf '%s\\n' r03 r11 > suspects.txt");
    expect(next).toContain(
      'next: npx passk run --dataset ROWS.jsonl --agent AGENT_OF_v1 --agent-version v1 --confirm suspects.txt --extra 3',
    );
    expect(next).toContain(
      'next: npx passk run --dataset ROWS.jsonl --agent AGENT_OF_v2 --agent-version v2 --confirm suspects.txt --extra 3',
    );
    expect(next).toContain('next: npx passk compare --baseline v1 --candidate v2 trials.jsonl');
  });

  it('suggests only compare when confirmation reproduced every broken row', () => {
    const next = renderMarkdown(gateNext(failed([broken('r07', 'confirmed_regression')]), 'trials.jsonl'));
    expect(next).not.toContain('suspects.txt');
    expect(next).toContain('next: npx passk compare --baseline v1 --candidate v2 trials.jsonl');
  });
});
