import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../cli/program.ts';
import { gateBlocks } from '../../cli/commands/demo.ts';
import { decidedAfter } from '../../cli/format/gateDoc.ts';
import { reportBlocks } from '../../cli/format/reportDoc.ts';
import { renderMarkdown } from '../../cli/format/render.ts';
import { groupTrials } from '../../processors/core/groups.ts';
import { buildReport, DEFAULT_REPORT_OPTIONS } from '../../processors/core/report.ts';
import { trial } from '../../processors/core/trials.testkit.ts';

/** A new user's trial: wording that differed from the rest of passk. */
describe('wording as everywhere else', () => {
  it('report names a stability class with a hyphen: "row a (stable-correct)"', () => {
    const events = ['inside', 'inside', 'outside'].map((w, i) =>
      trial({ row: 'a', version: 'v', attempt: i, passed: true, checks: { window: w } }),
    );
    const groups = buildReport(groupTrials(events), {
      ...DEFAULT_REPORT_OPTIONS,
      bootstrap: { reps: 50, seed: 1, confidence: 0.95 },
    }).groups;
    const md = renderMarkdown(reportBlocks(groups));
    expect(md).toContain('row a (stable-correct): window');
    expect(md).not.toContain('stable_correct');
  });

  it('run --help gives the --poll default as a duration, 2s, as the other durations', async () => {
    const run = (await buildProgram([], { outline: false })).commands.find((c: Command) => c.name() === 'run')!;
    let out = '';
    run.configureOutput({ writeOut: (s) => (out += s), getOutHelpWidth: () => 200 });
    run.outputHelp();
    const poll = out.split('\n').find((l) => l.includes('--poll'))!;
    expect(poll).toContain('(default: 2s)');
    expect(out).not.toContain('(default: 2000)');
  });

  it('the gate says its attempts as planned + confirmation: the adaptive run it follows said 93, not 96', () => {
    const cost = { candidate: 'refund-agent-v2', attempts: 96, fixed: 192, rows: 24, maxK: 8 };
    expect(decidedAfter({ ...cost, confirmations: 3 })).toBe(
      'decided after 96 attempts of refund-agent-v2 (93 planned + 3 confirmation; fixed k would have used 192: 24 rows × 8)',
    );
    // without confirmation attempts, as the run said it
    expect(decidedAfter({ ...cost, attempts: 93, confirmations: 0 })).toBe(
      'decided after 93 attempts of refund-agent-v2 (fixed k would have used 192: 24 rows × 8)',
    );
  });
});

describe("the demo's gates", () => {
  it('name the must-not-break rows a gate cannot protect, as passk gate does: the next gate passed with two', () => {
    const side = (cls: 'stable_correct' | 'stable_wrong', c: number) => ({ class: cls, n: 3, c });
    const mnb = (row_id: string, status: 'ok' | 'not_covered', baseline: ReturnType<typeof side>) => ({
      suite: 'refund-review',
      dataset_version: 'v1.pf1',
      row_id,
      baseline,
      candidate: side('stable_correct', 3),
      status,
      outcome: null,
    });
    const gate = {
      gate_id: 'gate-1',
      event_id: 'e-1',
      dataset_version: 'v1.pf1',
      baseline: 'prompt-v1',
      candidate: 'prompt-v3',
      verdict: 'pass' as const,
      reasons: [{ rule: 'must_not_break_stable_correct', passed: true, detail: '1 of 1 rows', rows: [] }],
      must_not_break_rows: 2,
      not_protected: [mnb('R071', 'not_covered', side('stable_wrong', 0))],
      confirmation: null,
    };
    const out = renderMarkdown(gateBlocks(gate, 'Next gate'));
    expect(out).toContain('1 must-not-break row is not protected');
    expect(out).toContain('R071 (stable-wrong 0/3)');
    expect(renderMarkdown(gateBlocks({ ...gate, not_protected: [] }, 'Next gate'))).not.toContain('not protected');
  });
});
